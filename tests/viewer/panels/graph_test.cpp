// tests/viewer/panels/graph_test.cpp — the autograd graph panel, rendered headless: node boxes in the quantized
// viridis fills, edges with arrow heads in the edge colour, the selected node outlined; the empty state without
// a graph.
#include "viewer/screenshot.h"

#include "viewer/colors.h"

using namespace gb::viewer;

namespace {
std::int64_t viridis_pixels(const shot::Png& p, int from_y) {
  std::int64_t n = 0;
  for (int k = 0; k < color::kGraphLevels; ++k)
    n += p.count(color::viridis(k / double(color::kGraphLevels - 1)), 0, from_y);
  return n;
}
}  // namespace

TEST_CASE("graph screenshot: node boxes, gradient-flow edges, the selected node") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("run.db");
  gb::tools::write_synthetic_trace(trace, {.steps = 2, .layers = 2, .ops_per_layer = 1});
  auto png = shot::take(trace, "graph", tmp.file("g.png"), "1280x900", "--select node:1");
  REQUIRE(png);
  const int below_toolbar = 60;
  CHECK(viridis_pixels(*png, below_toolbar) > 12000);  // 5 coloured boxes of 176x38 (AccumulateGrad has no span: grey)
  CHECK(png->count(color::kGraphEdge, 40, below_toolbar) > 300);  // edges and arrow heads
  CHECK(png->count(color::kSelection, 0, below_toolbar) > 300);   // node 1 (the loss) outlined
  // Coloured by saved bytes: nodes that saved nothing turn grey, so fewer viridis pixels.
  auto saved = shot::take(trace, "graph", tmp.file("s.png"), "1280x900", "--select graph:saved");
  REQUIRE(saved);
  CHECK(viridis_pixels(*saved, below_toolbar) < viridis_pixels(*png, below_toolbar));
  CHECK(saved->count(0x3A3F4A, 0, below_toolbar) > 5 * 170 * 30);  // the loss and AccumulateGrad saved nothing
}

TEST_CASE("graph screenshot: a trace without a graph shows the empty state") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = tmp.file("bare.db");
  {
    gb::trace::Writer w(trace);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
    w.add(gb::trace::SpanRecord{.id = gb::trace::span_id(1, 1),
                                .kind = gb::trace::SpanKind::op,
                                .name_id = w.intern("matmul"),
                                .thread_id = 1,
                                .start_ns = 0,
                                .end_ns = 1000});
  }
  auto png = shot::take(trace, "graph", tmp.file("e.png"));
  REQUIRE(png);
  CHECK(png->count(color::kGraphEdge, 40, 60) < 20);  // below the tabs
  CHECK(viridis_pixels(*png, 60) < 50);
}

TEST_CASE("graph screenshot of a real traced run: step 0 of an MLP, coloured by backward time, with its edges") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string trace = shot::engine_run(tmp, "healthy");
  REQUIRE(!trace.empty());
  auto png = shot::take(trace, "graph", tmp.file("g.png"), "1280x900", "--step 0");
  REQUIRE(png);
  const int below_toolbar = 60;
  // Linear x3 (AddmmBackward0), ReLU x2, cross entropy (log_softmax + nll_loss), the parameters' leaves
  CHECK(viridis_pixels(*png, below_toolbar) > 5 * 170 * 30);
  CHECK(png->count(color::kGraphEdge, 40, below_toolbar) > 300);
}
