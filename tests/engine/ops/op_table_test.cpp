// tests/engine/ops/op_table_test.cpp — glassbox/ops/op_table.def is the one list of ops: every op name and node name
// the engine's sources give a scope or a node is a row, and every other list of ops (the GB_AUTOCAST sites,
// launch.cpp's pw_for_name, pointwise_ops.h's codes, the viewer's graph notes, the monitor's relu test) agrees
// with it. The sources are read from GLASSBOX_SOURCE_DIR (a compile definition).
// Then the table drives the ops' checks: every op row has a case (tests/support/op_cases.cpp) unless kNoCase says
// why not, and every case that runs on meta runs there as on the cpu, in every dtype it takes, forward and
// backward: the same shapes, dtypes, strides and autograd nodes, and the same allocations and frees in the same
// order (sizes, and the op each is made in). The same cases run against libtorch (tests/oracle/ops_oracle_test.cpp)
// and on cuda against the cpu (op_table_gpu_test.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <glassbox/glassbox.h>

#include "cuda/launch.h"
#include "glassbox/memory/events.h"
#include "glassbox/ops/op_table.h"
#include "support/op_cases.h"

namespace op_table_test {

namespace fs = std::filesystem;
using gb::ops::find_node;
using gb::ops::find_op;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Source {
  std::string path;
  std::string text;
};

std::vector<Source> engine_sources() {
  std::vector<Source> out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GLASSBOX_SOURCE_DIR) / "engine")) {
    const std::string ext = e.path().extension().string();
    if (ext == ".cpp" || ext == ".h" || ext == ".cu") out.push_back({e.path().string(), read(e.path())});
  }
  REQUIRE(out.size() > 100);
  return out;
}

// The string literals of text[begin, end).
std::vector<std::string> literals(const std::string& text, size_t begin, size_t end) {
  std::vector<std::string> out;
  for (size_t i = begin; i < end && i < text.size(); ++i) {
    if (text[i] != '"' || (i > 0 && text[i - 1] == '\\') || (i > 0 && text[i - 1] == '\'')) continue;
    size_t j = text.find('"', i + 1);
    while (j != std::string::npos && text[j - 1] == '\\') j = text.find('"', j + 1);  // an escaped quote
    if (j == std::string::npos) break;
    out.push_back(text.substr(i + 1, j - i - 1));
    i = j;
  }
  return out;
}

bool is_op_name(const std::string& s) {
  if (s.empty() || !(std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

// The names the sources give an OpScope: literals in `OpScope x("name"`, in `const char* op = ...;`, in
// `backward_op = "name"`, and at the call sites of helpers that take `const char* op` and open the scope with it.
std::set<std::string> scope_names(const std::vector<Source>& sources) {
  std::set<std::string> helpers;
  for (const Source& s : sources) {
    for (size_t at = s.text.find("const char* op"); at != std::string::npos;
         at = s.text.find("const char* op", at + 1)) {
      const size_t open = s.text.rfind('(', at), body = s.text.find('{', at);
      if (open == std::string::npos || body == std::string::npos) continue;
      if (s.text.substr(at, 16).find_first_of(",)") == std::string::npos) continue;  // not a parameter
      const std::string head = s.text.substr(body, 400);
      if (head.find("OpScope") == std::string::npos || head.find("(op") == std::string::npos) continue;
      size_t name_end = open, name_begin = open;
      while (name_begin > 0 && (std::isalnum(static_cast<unsigned char>(s.text[name_begin - 1])) ||
                                s.text[name_begin - 1] == '_'))
        --name_begin;
      if (name_end > name_begin) helpers.insert(s.text.substr(name_begin, name_end - name_begin));
    }
  }
  CHECK(helpers.count("compare") == 1);  // the scan finds the helpers it must (compare.cpp's)
  std::set<std::string> names;
  // first_only: a helper's call, whose first op-like literal is its op (later ones name arguments: "weight").
  auto add_until = [&](const std::string& text, size_t from, char stop, bool first_only = false) {
    const size_t end = text.find(stop, from);
    for (const std::string& l : literals(text, from, end))
      if (is_op_name(l)) {
        names.insert(l);
        if (first_only) break;
      }
  };
  for (const Source& s : sources) {
    const std::string& t = s.text;
    for (size_t at = t.find("OpScope "); at != std::string::npos; at = t.find("OpScope ", at + 1)) {
      const size_t paren = t.find('(', at);
      if (paren == std::string::npos) continue;
      const size_t q = t.find_first_not_of(" \n", paren + 1);
      if (q != std::string::npos && t[q] == '"') add_until(t, q, ',');
      else if (q != std::string::npos && t.compare(q, 4, "kLog") == 0) add_until(t, q, ',');
    }
    for (const char* key : {"const char* op = ", "backward_op = "})
      for (size_t at = t.find(key); at != std::string::npos; at = t.find(key, at + 1)) {
        const std::string line = t.substr(at, t.find('\n', at) - at);
        if (line.find("\")") != std::string::npos) continue;  // a default argument (broadcast_shapes'), not a scope
        add_until(t, at, '\n');
      }
    // (The helpers' call sites are not scanned yet: their literal op argument is not found reliably; later slice.)
    (void)helpers;
  }
  return names;
}

TEST_CASE("every op name the engine's sources open a scope with is a row of the op table") {
  const std::set<std::string> names = scope_names(engine_sources());
  CHECK(names.size() > 100);
  for (const char* known : {"mm", "cat", "bernoulli", "upsample", "layer_norm", "max_pool2d"})
    CHECK_MESSAGE(names.count(known) == 1, std::string(known));
  std::vector<std::string> missing;
  for (const std::string& n : names)
    if (!find_op(n)) missing.push_back(n);
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  CHECK_MESSAGE(missing.empty(), "ops with no row in engine/include/glassbox/ops/op_table.def (add one):" << list);
}

TEST_CASE("every node name the engine's sources record is in the op table, and every row's node is in the sources") {
  std::set<std::string> nodes;
  std::string all;
  for (const Source& s : engine_sources()) {
    all += s.text;
    for (const std::string& l : literals(s.text, 0, s.text.size())) {
      const bool backward = l.find("Backward") != std::string::npos && std::isupper(static_cast<unsigned char>(l[0])) &&
                            l.find(' ') == std::string::npos;
      if ((backward && l != "Backward") || l == "CopySlices" || l == "torch::autograd::AccumulateGrad") nodes.insert(l);
    }
  }
  CHECK(nodes.size() > 110);
  std::string missing;
  for (const std::string& n : nodes)
    if (!find_node(n)) missing += " " + n;
  CHECK_MESSAGE(missing.empty(), "nodes with no row in glassbox/ops/op_table.def (list them in their op's row):"
                                     << missing);
  std::string stale;
  for (const gb::ops::OpInfo& op : gb::ops::op_table()) {
    std::string_view rest = op.nodes;
    while (!rest.empty()) {
      const size_t sp = rest.find(' ');
      const std::string node(rest.substr(0, sp));
      if (all.find("\"" + node + "\"") == std::string::npos) stale += " " + node;
      rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
    }
  }
  CHECK_MESSAGE(stale.empty(), "rows name nodes no source records:" << stale);
}

TEST_CASE("the GB_AUTOCAST sites and the table's autocast column agree") {
  std::set<std::string> with_site;
  for (const Source& s : engine_sources()) {
    if (s.path.find("autocast_hook.h") != std::string::npos) continue;  // the macro itself
    for (size_t at = s.text.find("GB_AUTOCAST("); at != std::string::npos; at = s.text.find("GB_AUTOCAST(", at + 1)) {
      const size_t p0 = at + 12, c1 = s.text.find(',', p0), c2 = s.text.find(',', c1 + 1);
      const std::string policy = s.text.substr(p0, c1 - p0);
      std::string op = s.text.substr(c1 + 1, c2 - c1 - 1);
      op.erase(0, op.find_first_not_of(' '));
      const gb::ops::OpInfo* row = find_op(op);
      REQUIRE_MESSAGE(row, op);
      CHECK_MESSAGE(row->autocast == policy, op << ": GB_AUTOCAST(" << policy << ") but the table says " << row->autocast);
      with_site.insert(op);
    }
  }
  for (const gb::ops::OpInfo& op : gb::ops::op_table())
    if (op.autocast != "none")
      CHECK_MESSAGE(with_site.count(std::string(op.name)) == 1, op.name << " has autocast " << op.autocast
                                                                        << " in the table but no GB_AUTOCAST site");
  CHECK(find_op("mm")->autocast == "lower_precision_fp");
  CHECK(find_op("softmax")->autocast == "fp32");
  CHECK(find_op("cat")->autocast == "promote");
}

TEST_CASE("pointwise codes: each is a Pw of pointwise_ops.h, and pw_for_name gives the by-name ones") {
  const std::string pw = read(fs::path(GLASSBOX_SOURCE_DIR) / "engine/cuda/pointwise_ops.h");
  const size_t b = pw.find("enum class Pw"), e = pw.find("};", b);
  std::set<std::string> codes;  // the enumerators' identifiers
  std::string word;
  for (char c : pw.substr(b, e - b) + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else {
      if (!word.empty()) codes.insert(word);
      word.clear();
    }
  }
  for (const gb::ops::OpInfo& op : gb::ops::op_table()) {
    if (op.pw == "none") {
      CHECK_MESSAGE(!op.pw_by_name, op.name);
      continue;
    }
    CHECK_MESSAGE(codes.count(std::string(op.pw)) == 1, op.name << ": no Pw::" << op.pw);
    const std::string name(op.name);
    if (op.pw_by_name) CHECK_MESSAGE(gb::detail::pw_for_name(name.c_str()) != gb::cuda_kernels::Pw::none, name);
    if (op.pw_by_name) CHECK((op.devices & gb::ops::kOnCuda) != 0);
  }
  CHECK(gb::detail::pw_for_name("exp") == gb::cuda_kernels::Pw::exp);
  CHECK(gb::detail::pw_for_name("relu_") == gb::cuda_kernels::Pw::relu);
  CHECK(gb::detail::pw_for_name("add") == gb::cuda_kernels::Pw::none);  // add names {Pw::add, alpha} itself
  CHECK(gb::detail::pw_for_name("matmul") == gb::cuda_kernels::Pw::none);
}

TEST_CASE("the viewer's graph notes and the monitor's relu test name rows of the table") {
  const std::string notes = read(fs::path(GLASSBOX_SOURCE_DIR) / "viewer/graph_notes.cpp");
  int n = 0;
  for (size_t at = notes.find("{\""); at != std::string::npos; at = notes.find("{\"", at + 1), ++n) {
    const std::string node = notes.substr(at + 2, notes.find('"', at + 2) - at - 2);
    if (node == "TBackward0") continue;  // PyTorch's t(); glassbox's t() records TransposeBackward0 (a stale note)
    CHECK_MESSAGE((find_node(node) || find_node("torch::autograd::" + node)), "graph note for unknown node " << node);
  }
  CHECK(n > 20);
  const std::string fwd = read(fs::path(GLASSBOX_SOURCE_DIR) / "engine/monitor/forward.cpp");
  for (size_t at = fwd.find("strcmp(op, \""); at != std::string::npos; at = fwd.find("strcmp(op, \"", at + 1)) {
    const std::string op = fwd.substr(at + 12, fwd.find('"', at + 12) - at - 12);
    CHECK_MESSAGE(find_op(op), "monitor/forward.cpp compares with unknown op " << op);
  }
}

TEST_CASE("every row's kernel files exist, and known rows hold what the code does") {
  for (const gb::ops::OpInfo& op : gb::ops::op_table()) {
    std::string_view rest = op.files;
    CHECK_MESSAGE(!rest.empty(), op.name);
    while (!rest.empty()) {
      const size_t sp = rest.find(' ');
      const std::string f(rest.substr(0, sp));
      CHECK_MESSAGE(fs::exists(fs::path(GLASSBOX_SOURCE_DIR) / "engine" / f), op.name << ": no engine/" << f);
      rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
    }
  }
  const gb::ops::OpInfo* mm = find_op("mm");
  REQUIRE(mm);
  CHECK(mm->nodes == "MmBackward0");
  CHECK(gb::ops::device_list(mm->devices) == "cpu,meta,cuda");
  CHECK(gb::ops::device_list(find_op("onednn_convolution_forward")->devices) == "cpu,meta");
  CHECK(find_op("MmBackward0") == nullptr);
  CHECK(find_node("MmBackward0") == mm);
  // The nodes a real graph records are the table's.
  gb::Tensor a = gb::randn({2, 3}).requires_grad_(), b = gb::randn({3, 2});
  CHECK(gb::ops::lists_node(find_op("mm")->nodes, gb::mm(a, b).grad_fn()->name()));
  CHECK(gb::ops::lists_node(find_op("relu")->nodes, gb::relu(a).grad_fn()->name()));
  CHECK(gb::ops::lists_node(find_op("sum")->nodes, a.sum().grad_fn()->name()));
}

// ---- the table drives the ops' checks: cases (tests/support/op_cases.cpp) for every row, meta against cpu ----

namespace oc = gbtest::op_cases;
namespace mem = gb::memory;

// The op rows with no case, each with the reason. Keep it short: a row that can have a case gets one.
struct Exemption {
  std::string_view op, why;
};
constexpr Exemption kNoCase[] = {
    {"backward_hook",
     "not a tensor op: the identity a module call records for its full backward hooks "
     "(tests/engine/nn/module_call_test.cpp)"},
};

const Exemption* exemption(std::string_view op) {
  for (const Exemption& e : kNoCase)
    if (e.op == op) return &e;
  return nullptr;
}

TEST_CASE("every op row of the op table has a case, and every case names rows of the table") {
  std::set<std::string_view> covered, names;
  for (const oc::Case& c : oc::cases()) {
    CHECK_MESSAGE(names.insert(c.name).second, "two cases are named \"" << c.name << "\" (tests/support/op_cases.cpp)");
    CHECK_MESSAGE(!c.ops.empty(), "case \"" << c.name << "\" names no op row");
    for (const auto& list : {c.ops, c.kernels})
      for (std::string_view op : list) {
        CHECK_MESSAGE(find_op(op), "case \"" << c.name << "\" names \"" << op
                                             << "\", which is no op row of "
                                                "engine/include/glassbox/ops/op_table.def");
        covered.insert(op);
      }
  }
  int rows = 0;
  for (const gb::ops::OpInfo& row : gb::ops::op_table()) {
    if (row.node_only) continue;
    ++rows;
    if (const Exemption* e = exemption(row.name)) {
      CHECK_MESSAGE(!covered.count(row.name), "op \"" << row.name
                                                      << "\" has a case now: remove it from kNoCase "
                                                         "(tests/engine/ops/op_table_test.cpp)");
      CHECK(!e->why.empty());
      continue;
    }
    CHECK_MESSAGE(covered.count(row.name),
                  "op \"" << row.name
                          << "\" (engine/include/glassbox/ops/op_table.def) has no case: add one to "
                             "tests/support/op_cases.cpp naming \""
                          << row.name
                          << "\" in its ops (its inputs and the "
                             "gb:: call), and the same computation with torch:: under the case's name to "
                             "tests/oracle/ops_oracle_test.cpp; it then runs against libtorch, on meta against the cpu "
                             "and on cuda against the cpu. A row that cannot have one goes in kNoCase "
                             "(tests/engine/ops/op_table_test.cpp) with the reason.");
  }
  for (const Exemption& e : kNoCase) CHECK_MESSAGE(find_op(e.op), "kNoCase names \"" << e.op << "\", no op row");
  CHECK(rows > 150);
  CHECK(oc::devices_of(*oc::find_case("exp_")) == (gb::ops::kOnCpu | gb::ops::kOnMeta | gb::ops::kOnCuda));
  CHECK(oc::devices_of(*oc::find_case("nonzero")) == (gb::ops::kOnCpu | gb::ops::kOnCuda));
}

// "float32 [3, 4] strides [4, 1] MulBackward0": what a tensor is apart from its values.
std::string layout(const gb::Tensor& t) {
  if (!t.defined()) return "undefined";
  std::ostringstream os;
  os << gb::python_name(t.scalar_type()) << " " << t.sizes() << " strides " << t.strides();
  if (t.grad_fn()) os << " " << t.grad_fn()->name();
  return os.str();
}

// One run of a case on a device: every allocator event in order (action, rounded and requested bytes, the op
// that made it), then the output's and the gradients' layouts.
std::vector<std::string> run_recorded(const oc::Case& c, gb::ScalarType dt, gb::Device d) {
  std::vector<gb::Tensor> ins = oc::make_inputs(c, dt);
  if (!d.is_cpu()) ins = oc::inputs_on(ins, d);
  std::vector<mem::MemoryEvent> events;
  std::vector<std::string> out;
  mem::empty_cache(d);  // blocks cached by earlier runs would hide segment allocations
  mem::set_event_observer([&](const mem::MemoryEvent& e) {
    if (e.device.type() == d.type()) events.push_back(e);  // under the allocator's lock: no glassbox allocation
  });
  try {
    gb::Tensor y = c.run(ins);
    out.push_back("output " + layout(y));
    if (c.backward && y.is_floating_point() && y.requires_grad()) {
      (y * gb::full_like(y, 0.5)).sum().backward();
      for (const gb::Tensor& i : ins)
        if (i.requires_grad()) out.push_back("grad " + layout(i.grad()));
    }
  } catch (...) {
    mem::set_event_observer(nullptr);
    throw;
  }
  mem::set_event_observer(nullptr);
  std::vector<std::string> lines;
  for (const mem::MemoryEvent& e : events) {
    std::ostringstream os;
    os << mem::to_string(e.action) << " " << e.size << " (requested " << e.requested << ")";
    if (e.action != mem::MemoryAction::retag) os << " in '" << mem::name_of(e.op_id) << "'";  // a retag: the block's
    // maker, which for an input is how the test made it
    lines.push_back(os.str());
  }
  lines.insert(lines.end(), out.begin(), out.end());
  return lines;
}

// Where meta does not run a row's cases as the cpu does today, with why: the engine's gaps (a fix removes its line;
// the test fails while a line is no longer needed). refuses: meta throws; otherwise the layouts and autograd nodes
// still match, the allocations do not.
struct MetaGap {
  std::string_view op;
  bool refuses;
  std::string_view why;
};
constexpr MetaGap kMetaGaps[] = {
    {"index", true,
     "integer index tensors: the plan reads the indices on the host (advanced_index.cpp's "
     "long_values), so meta refuses them; only a mask's true count decides a shape"},
    {"index_put_", true, "as index: the plan reads the indices on the host"},
    {"bernoulli", true, "bernoulli(p) reads each probability (a tensor of them)"},
    {"multinomial", true, "reads the weights"},
    {"triu", false,
     "its mask is made as cpu tensors (arange, sub, lt) and moved to the input's device: a cpu run "
     "allocates those temporaries, a meta run only the moved mask"},
    {"tril", false, "as triu"},
    {"upsample", false,
     "its indices and weights are made as cpu tensors (float64 weights) and moved to the input's "
     "device: a cpu run allocates the float64 weights and their cast, a meta run only the moved "
     "ones"},
    {"layer_norm", false,
     "the fused first-order backward (layer_norm_backward_rows) runs on the cpu only; meta takes "
     "the composite formula (sub, mul, mean, sum: more and other allocations)"},
};

const MetaGap* meta_gap(const oc::Case& c) {
  for (const MetaGap& g : kMetaGaps)
    if (std::find(c.ops.begin(), c.ops.end(), g.op) != c.ops.end()) return &g;
  return nullptr;
}

bool is_layout(const std::string& line) { return line.starts_with("output ") || line.starts_with("grad "); }

std::string differences(const std::vector<std::string>& cpu, const std::vector<std::string>& meta) {
  const auto [ci, mi] = std::mismatch(cpu.begin(), cpu.end(), meta.begin(), meta.end());
  if (ci == cpu.end() && mi == meta.end()) return "";
  std::ostringstream os;
  os << "meta differs from cpu at step " << (ci - cpu.begin()) << " of " << cpu.size() << " (cpu) / " << meta.size()
     << " (meta): cpu " << (ci == cpu.end() ? "ends" : *ci) << ", meta " << (mi == meta.end() ? "ends" : *mi)
     << "\n  cpu:";
  for (const std::string& l : cpu) os << "\n    " << l;
  os << "\n  meta:";
  for (const std::string& l : meta) os << "\n    " << l;
  return os.str();
}

TEST_CASE("every case runs on meta as on the cpu: layouts, autograd nodes and the same allocations in order") {
  int runs = 0;
  std::set<std::string_view> gaps_seen;
  for (const oc::Case& c : oc::cases()) {
    if (!(oc::devices_of(c) & gb::ops::kOnMeta)) continue;
    const MetaGap* gap = meta_gap(c);
    for (gb::ScalarType dt : oc::dtypes_of(c.dtypes)) {
      INFO("case \"" << c.name << "\" in " << std::string(gb::python_name(dt)));
      std::vector<std::string> cpu, meta;
      try {
        cpu = run_recorded(c, dt, gb::Device(gb::kCPU));
        meta = run_recorded(c, dt, gb::Device(gb::kMeta));
      } catch (const std::exception& e) {
        if (gap && gap->refuses && !cpu.empty()) {
          gaps_seen.insert(gap->op);
          continue;
        }
        FAIL_CHECK("threw: " << std::string(e.what()));
        continue;
      }
      ++runs;
      if (gap && !gap->refuses) {  // the layouts alone
        if (differences(cpu, meta).empty()) continue;
        gaps_seen.insert(gap->op);
        std::erase_if(cpu, [](const std::string& l) { return !is_layout(l); });
        std::erase_if(meta, [](const std::string& l) { return !is_layout(l); });
      }
      const std::string diff = differences(cpu, meta);
      CHECK_MESSAGE(diff.empty(), diff);
    }
  }
  CHECK(runs > 500);
  for (const MetaGap& g : kMetaGaps)
    CHECK_MESSAGE(gaps_seen.count(g.op), "meta now runs the cases of \""
                                             << g.op
                                             << "\" as the cpu does: remove its "
                                                "line from kMetaGaps (tests/engine/ops/op_table_test.cpp)");
}

}  // namespace op_table_test
