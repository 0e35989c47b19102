// tests/tools/ops_test.cpp — tools/ops.cpp: `glassbox ops` prints the engine's op table (glassbox/ops/op_table.def),
// as text and as the docs' markdown; known rows hold what the engine's code does.
#include "tools/ops.h"

#include <doctest/doctest.h>

#include <string>

#include "tools_test_util.h"

namespace ops_test {

using gb::tools::OpsFormat;
using toolstest::has;

// The line of `op` in text (starting with it, followed by a space or " |").
std::string row(const std::string& text, const std::string& start) {
  const size_t at = text.find("\n" + start);
  if (at == std::string::npos) return {};
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST_CASE("glassbox ops prints one line per op: node, devices, autocast, pointwise code") {
  const std::string t = gb::tools::ops_table(OpsFormat::text);
  const std::string mm = row(t, "mm ");
  CHECK(has(mm, "MmBackward0"));
  CHECK(has(mm, "cpu,meta,cuda"));
  CHECK(has(mm, "lower_precision_fp"));
  const std::string exp = row(t, "exp ");
  CHECK(has(exp, "ExpBackward0"));
  CHECK(has(exp, "fp32"));
  CHECK(exp.substr(exp.find_last_of(' ') + 1) == "exp");  // its Pw code
  CHECK(has(row(t, "onednn_convolution_forward "), "cpu,meta "));
  CHECK(has(row(t, "cudnn_convolution_forward "), "cuda "));
  CHECK(has(row(t, "nll_loss "), "NllLossBackward0 NllLoss2DBackward0"));
  CHECK(row(t, "torch::autograd::AccumulateGrad").empty());  // nodes no op records are not ops
  CHECK(has(t, " ops, "));
}

TEST_CASE("glassbox ops --format markdown is a table with the same rows") {
  const std::string m = gb::tools::ops_table(OpsFormat::markdown);
  CHECK(m.rfind("| op | backward node | devices | autocast | CUDA pointwise code |\n|---|", 0) == 0);
  CHECK(has(m, "| `mm` | MmBackward0 | cpu,meta,cuda | lower_precision_fp | - |\n"));
  CHECK(has(m, "| `relu_` | ReluBackward0 | cpu,meta,cuda | - | relu |\n"));
  CHECK(has(m, "| `masked_select` | MaskedSelectBackward0 | cpu,cuda | - | - |\n"));
  // as many table lines as text lines of ops
  const std::string t = gb::tools::ops_table(OpsFormat::text);
  size_t md = 0, tx = 0;
  for (size_t at = m.find("\n| `"); at != std::string::npos; at = m.find("\n| `", at + 1)) ++md;
  for (char c : t) tx += c == '\n';
  CHECK(md == tx - 2);  // text: a header line and a count line
  CHECK(md > 170);
}

}  // namespace ops_test
