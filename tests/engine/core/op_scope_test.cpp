// tests/engine/core/op_scope_test.cpp — every op records its autograd node inside its own op scope
// (engine/core/op_scope.h): in a real trace, each backward node span (kind 1) but AccumulateGrad shares its seq with
// exactly one op span (kind 0), the forward op that made it, and the node's forward_span_id is that span's id.
// Checked on one training step of an MLP, one of a small CNN, and a chain of views, in-place ops and a custom
// Function; without a trace, forward_span_id stays 0.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <glassbox/glassbox.h>

#include "autograd/views.h"
#include "instrument/probe.h"
#include "instrument/session.h"
#include "traces/temp_dir.h"

namespace {

// A custom Function: its node must be linked to an op span named after the class.
struct Twice : gb::autograd::Function<Twice> {
  static gb::Tensor forward(gb::autograd::AutogradContext*, gb::Tensor x) { return x * 2.0; }
  static gb::variable_list backward(gb::autograd::AutogradContext*, gb::variable_list g) { return {g[0] * 2.0}; }
};

struct Span {
  int64_t id;
  std::string name;
};

struct Trace {
  std::vector<std::pair<Span, int64_t>> nodes;  // backward node spans (kind 1) and their seq
  std::multimap<int64_t, Span> ops_by_seq;      // op spans (kind 0) that have a seq
};

// AccumulateGrad (named torch::autograd::AccumulateGrad, like PyTorch's) is made for a leaf, by no op.
bool is_accumulate_grad(const std::string& name) {
  const std::string suffix = "AccumulateGrad";
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Trace read_trace(const std::string& path) {
  Trace t;
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db,
                             "SELECT s.id, s.kind, n.text, s.seq FROM spans s JOIN strings n ON s.name_id = n.id "
                             "WHERE s.kind IN (0, 1) AND s.seq IS NOT NULL",
                             -1, &s, nullptr) == SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) {
    Span span{sqlite3_column_int64(s, 0), reinterpret_cast<const char*>(sqlite3_column_text(s, 2))};
    const int64_t seq = sqlite3_column_int64(s, 3);
    if (sqlite3_column_int(s, 1) == 1)
      t.nodes.emplace_back(span, seq);
    else
      t.ops_by_seq.emplace(seq, span);
  }
  sqlite3_finalize(s);
  // every backward node span but AccumulateGrad's (no sequence number: it runs as soon as it is ready) has a seq
  REQUIRE(sqlite3_prepare_v2(db,
                             "SELECT n.text FROM spans s JOIN strings n ON s.name_id = n.id "
                             "WHERE s.kind = 1 AND s.seq IS NULL",
                             -1, &s, nullptr) == SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW)
    CHECK(is_accumulate_grad(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return t;
}

// The forward op that makes each node of these models (several ops make ViewBackward0).
const std::multimap<std::string, std::string>& expected_ops() {
  static const std::multimap<std::string, std::string> table{
      {"LinearBackward0", "linear"},
      {"AddmmBackward0", "addmm"},
      {"MmBackward0", "mm"},
      {"ReluBackward0", "relu"},
      {"LogSoftmaxBackward0", "log_softmax"},
      {"NllLossBackward0", "nll_loss"},
      {"ConvolutionBackward0", "conv2d"},
      {"NativeBatchNormBackward0", "batch_norm"},
      {"MaxPool2DWithIndicesBackward0", "max_pool2d"},
      {"ViewBackward0", "view"},
      {"ViewBackward0", "reshape"},
      {"TransposeBackward0", "transpose"},
      {"UnsqueezeBackward0", "unsqueeze"},
      {"SelectBackward0", "select"},
      {"CloneBackward0", "clone"},
      {"ExpBackward0", "exp"},
      {"AddBackward0", "add"},
      {"MulBackward0", "mul"},
      {"MulBackward1", "mul"},
      {"SumBackward0", "sum"},
      {"MeanBackward0", "mean"},
      {"CopySlices", "mul_"},
      {"AsStridedBackward0", "as_strided"},
      {"TwiceBackward", "Twice"},
  };
  return table;
}

// Checks the trace's node <-> op links and returns the (node, op) pairs seen.
std::set<std::pair<std::string, std::string>> check_links(const std::string& path) {
  Trace t = read_trace(path);
  std::set<std::pair<std::string, std::string>> seen;
  int checked = 0;
  for (const auto& entry : t.nodes) {  // no structured binding: CAPTURE's lambda captures these (Clang 14)
    const auto& node = entry.first;
    const auto& seq = entry.second;
    if (is_accumulate_grad(node.name)) continue;
    CAPTURE(node.name);
    CAPTURE(seq);
    ++checked;
    auto [lo, hi] = t.ops_by_seq.equal_range(seq);
    REQUIRE(std::distance(lo, hi) == 1);  // exactly one op span with the node's seq
    const std::string& op = lo->second.name;
    CAPTURE(op);
    bool expected = false;
    auto [elo, ehi] = expected_ops().equal_range(node.name);
    for (auto it = elo; it != ehi; ++it) expected = expected || it->second == op;
    CHECK(expected);
    seen.emplace(node.name, op);
  }
  CHECK(checked > 0);
  return seen;
}

gb::trace::SessionOptions blocking() { return gb::trace::SessionOptions{.on_full = gb::trace::OnFull::block}; }

// (a) one training step of an MLP
void mlp_step() {
  gb::nn::Linear fc1(8, 16), fc2(16, 4);
  std::vector<gb::Tensor> params = fc1->parameters();
  for (const auto& p : fc2->parameters()) params.push_back(p);
  gb::optim::SGD opt(params, 0.1);
  gb::Tensor x = gb::randn({5, 8});
  gb::Tensor target = gb::randint(4, {5}, gb::TensorOptions().dtype(gb::kInt64));
  opt.zero_grad();
  gb::Tensor loss = gb::cross_entropy(fc2(gb::relu(fc1(x))), target);
  loss.backward();
  opt.step();
}

// (b) one training step of a small CNN
void cnn_step() {
  gb::nn::Conv2d conv(gb::nn::Conv2dOptions(3, 4, 3).padding(1));
  gb::nn::BatchNorm2d bn(4);
  gb::nn::Linear fc(4 * 4 * 4, 3);
  std::vector<gb::Tensor> params = conv->parameters();
  for (const auto& p : bn->parameters()) params.push_back(p);
  for (const auto& p : fc->parameters()) params.push_back(p);
  gb::optim::SGD opt(params, 0.1);
  gb::Tensor x = gb::randn({2, 3, 8, 8});
  gb::Tensor target = gb::randint(3, {2}, gb::TensorOptions().dtype(gb::kInt64));
  opt.zero_grad();
  gb::Tensor h = gb::max_pool2d(gb::relu(bn(conv(x))), {2, 2});
  gb::Tensor loss = gb::cross_entropy(fc(gb::flatten(h, 1)), target);
  loss.backward();
  opt.step();
}

// (c) views, in-place ops on a non-leaf and on a view of one, a custom Function, reductions. Returns the tensors
// whose grad_fn the caller inspects, in this order: exp, add, view, transpose, unsqueeze, mul_ (self), the base
// of the in-place view (CopySlices), the view itself (AsStridedBackward0), Twice, sum.
std::vector<gb::Tensor> chain(const gb::Tensor& x, const gb::Tensor& y) {
  gb::Tensor a = x.exp();             // unary
  gb::Tensor b = a + x;               // binary
  gb::Tensor v = b.view({6, 4});      // view
  gb::Tensor t = v.transpose(0, 1);   // view
  gb::Tensor u = t.unsqueeze(0);      // view, (1, 4, 6)
  gb::Tensor z = u * 3.0;             // non-leaf
  gb::Tensor u2 = z.clone();          // keeps z's history for the caller
  z.mul_(y);                          // in place on a non-leaf (MulBackward0 in mul_)
  gb::Tensor s = z.select(1, 2);      // a view of z
  s.mul_(2.0);                        // in place on a view: z's grad_fn becomes CopySlices
  gb::Tensor f = Twice::apply(z);     // custom Function
  gb::Tensor r = f.sum() + s.mean();  // reductions; s's grad_fn is regenerated (AsStridedBackward0)
  return {a, b, v, t, u, u2, z, s, f, r};
}

}  // namespace

TEST_CASE("every backward node of an MLP training step is linked to the op span that made it") {
  TempDir tmp;
  const std::string path = tmp.file("mlp.db");
  {
    gb::trace::Session session(path, blocking());
    REQUIRE(session.active());
    mlp_step();
  }
  auto seen = check_links(path);
  CHECK(seen.count({"LinearBackward0", "linear"}) == 1);
  CHECK(seen.count({"ReluBackward0", "relu"}) == 1);
  CHECK(seen.count({"LogSoftmaxBackward0", "log_softmax"}) == 1);
  CHECK(seen.count({"NllLossBackward0", "nll_loss"}) == 1);
}

TEST_CASE("every backward node of a CNN training step is linked to the op span that made it") {
  TempDir tmp;
  const std::string path = tmp.file("cnn.db");
  {
    gb::trace::Session session(path, blocking());
    REQUIRE(session.active());
    cnn_step();
  }
  auto seen = check_links(path);
  CHECK(seen.count({"ConvolutionBackward0", "conv2d"}) == 1);
  CHECK(seen.count({"NativeBatchNormBackward0", "batch_norm"}) == 1);
  CHECK(seen.count({"ReluBackward0", "relu"}) == 1);
  CHECK(seen.count({"MaxPool2DWithIndicesBackward0", "max_pool2d"}) == 1);
  CHECK(seen.count({"ViewBackward0", "reshape"}) == 1);  // flatten
  CHECK(seen.count({"LinearBackward0", "linear"}) == 1);
  CHECK(seen.count({"LogSoftmaxBackward0", "log_softmax"}) == 1);
  CHECK(seen.count({"NllLossBackward0", "nll_loss"}) == 1);
}

TEST_CASE("views, in-place ops, reductions and a custom Function link their nodes to their own op spans") {
  TempDir tmp;
  const std::string path = tmp.file("chain.db");
  std::vector<std::pair<uint64_t, uint64_t>> links;  // (seq, forward_span_id) of nodes made while tracing
  {
    gb::trace::Session session(path, blocking());
    REQUIRE(session.active());
    gb::Tensor x = gb::randn({2, 3, 4}).requires_grad_(true);
    gb::Tensor y = gb::randn({1, 4, 6}).requires_grad_(true);
    auto out = chain(x, y);
    for (const auto& o : out) {
      REQUIRE(o.grad_fn());
      links.emplace_back(o.grad_fn()->sequence_nr(), o.grad_fn()->forward_span_id);
    }
    CHECK(out[6].grad_fn()->name() == "CopySlices");
    CHECK(out[7].grad_fn()->name() == "AsStridedBackward0");
    CHECK(out[8].grad_fn()->name() == "TwiceBackward");
    out.back().backward();
    CHECK(x.grad().defined());
    CHECK(y.grad().defined());
  }
  auto seen = check_links(path);
  for (const auto& pair : std::vector<std::pair<std::string, std::string>>{
           {"ExpBackward0", "exp"},
           {"AddBackward0", "add"},
           {"ViewBackward0", "view"},
           {"TransposeBackward0", "transpose"},
           {"UnsqueezeBackward0", "unsqueeze"},
           {"MulBackward1", "mul"},
           {"MulBackward0", "mul"},  // z.mul_(y): made by the mul nested in mul_
           {"CopySlices", "mul_"},
           {"AsStridedBackward0", "as_strided"},
           {"TwiceBackward", "Twice"},
           {"SumBackward0", "sum"},
           {"MeanBackward0", "mean"},
       }) {
    CAPTURE(pair.first);
    CHECK(seen.count(pair) == 1);
  }

  // a node made while tracing knows the id of the op span that made it: the one op span with its seq
  Trace t = read_trace(path);
  for (const auto& link : links) {  // no structured binding: CAPTURE's lambda captures it (Clang 14)
    const auto& seq = link.first;
    const auto& span_id = link.second;
    CAPTURE(seq);
    CHECK(span_id != 0);
    auto [lo, hi] = t.ops_by_seq.equal_range(int64_t(seq));
    REQUIRE(std::distance(lo, hi) == 1);
    CHECK(uint64_t(lo->second.id) == span_id);
  }
}

TEST_CASE("the in-place op's own node (run by CopySlices) is linked to the op span of the op that made it") {
  TempDir tmp;
  const std::string path = tmp.file("inplace.db");
  uint64_t mul_span = 0, copy_slices_span = 0;
  {
    gb::trace::Session session(path, blocking());
    gb::Tensor x = gb::randn({3, 4}).requires_grad_(true);
    gb::Tensor z = x * 1.0;
    gb::Tensor row = z.select(0, 1);
    row.mul_(3.0);
    auto cs = std::dynamic_pointer_cast<gb::autograd::CopySlices>(z.grad_fn());
    REQUIRE(cs);
    REQUIRE(cs->fn());
    CHECK(cs->fn()->name() == "MulBackward1");
    mul_span = cs->fn()->forward_span_id;
    copy_slices_span = cs->forward_span_id;
  }
  CHECK(mul_span != 0);
  CHECK(copy_slices_span != 0);
  CHECK(mul_span != copy_slices_span);  // mul (nested in mul_) made MulBackward1; mul_ made CopySlices
}

TEST_CASE("without a trace, nodes keep forward_span_id 0") {
  REQUIRE_FALSE(gb::trace::enabled());
  gb::Tensor x = gb::randn({2, 3, 4}).requires_grad_(true);
  gb::Tensor y = gb::randn({1, 4, 6}).requires_grad_(true);
  auto out = chain(x, y);
  for (const auto& o : out) {
    REQUIRE(o.grad_fn());
    CAPTURE(o.grad_fn()->name());
    CHECK(o.grad_fn()->forward_span_id == 0);
  }
  gb::nn::Linear fc(4, 2);
  gb::Tensor h = fc(gb::randn({3, 4}));
  CHECK(h.grad_fn()->forward_span_id == 0);
}

TEST_CASE("every forward op span of a traced MLP and CNN step has op_details: shapes, dtypes, FLOPs, bytes") {
  TempDir tmp;
  const std::string path = tmp.file("details.db");
  {
    gb::trace::Session session(path, blocking());
    mlp_step();
    cnn_step();
  }
  // every op that recorded a node (the forward ops) has its row; view ops, the backward's and the optimizer's
  // inner ops have none
  CHECK(sql_int(path, "SELECT count(*) FROM spans WHERE kind = 0 AND seq IS NOT NULL") >= 13);
  CHECK(sql_int(path,
                "SELECT count(*) FROM spans s JOIN strings n ON n.id = s.name_id LEFT JOIN op_details d ON "
                "d.span_id = s.id WHERE s.kind = 0 AND s.seq IS NOT NULL AND d.span_id IS NULL AND n.text NOT IN "
                "('view', 'transpose', 'unsqueeze', 'squeeze', 'permute', 'expand', 'as_strided', 'select', "
                "'slice', 'reshape')") == 0);
  CHECK(sql_int(path,
                "SELECT count(*) FROM op_details d JOIN spans s ON s.id = d.span_id WHERE s.parent_id IN "
                "(SELECT id FROM spans WHERE kind IN (1, 4))") == 0);  // under a backward node or optimizer step
  CHECK(sql_int(path, "SELECT count(*) FROM op_details WHERE device != -1") == 0);
  // fc1 of the MLP: x (5,8) @ W^T (16,8) + b: 2*5*8*16 + 5*16
  const std::string linear =
      "(SELECT d.span_id FROM op_details d JOIN spans s ON s.id = d.span_id JOIN strings n "
      "ON n.id = s.name_id WHERE n.text = 'linear' ORDER BY s.id LIMIT 1)";
  CHECK(sql_text(path, "SELECT t.text FROM op_details d JOIN strings t ON t.id = d.input_shapes WHERE d.span_id = " +
                           linear) == "[[5, 8], [16, 8], [16]]");
  CHECK(sql_text(path, "SELECT t.text FROM op_details d JOIN strings t ON t.id = d.dtypes WHERE d.span_id = " +
                           linear) == "float32,float32,float32");
  CHECK(sql_int(path, "SELECT flops FROM op_details WHERE span_id = " + linear) == 2 * 5 * 8 * 16 + 5 * 16);
  CHECK(sql_int(path, "SELECT bytes FROM op_details WHERE span_id = " + linear) == 4 * (5 * 8 + 16 * 8 + 16 + 5 * 16));
  // the conv: (2,3,8,8) * (4,3,3,3), padding 1: 2 * N*C_out*H*W * C_in*3*3, + N*C_out*H*W for the bias
  CHECK(sql_int(path,
                "SELECT d.flops FROM op_details d JOIN spans s ON s.id = d.span_id JOIN strings n ON n.id = "
                "s.name_id WHERE n.text = 'conv2d'") == 2 * (2 * 4 * 8 * 8) * (3 * 3 * 3) + 2 * 4 * 8 * 8);
  // relu: one per element
  CHECK(sql_int(path,
                "SELECT d.flops FROM op_details d JOIN spans s ON s.id = d.span_id JOIN strings n ON n.id = "
                "s.name_id WHERE n.text = 'relu' ORDER BY s.id LIMIT 1") == 5 * 16);
  // the file passes `glassbox check`, and the memory events balance: what was allocated minus what was freed is
  // the running total the last event reports
  CHECK(std::system((std::string(GLASSBOX_BIN) + " check '" + path + "' > /dev/null").c_str()) == 0);
  CHECK(sql_int(path,
                "SELECT sum(CASE action WHEN 0 THEN size WHEN 1 THEN -size ELSE 0 END) FROM memory_events "
                "WHERE device = -1") ==
        sql_int(path, "SELECT allocated FROM memory_events WHERE device = -1 ORDER BY id DESC LIMIT 1"));
  CHECK(sql_int(path,
                "SELECT count(*) FROM memory_events f WHERE f.action = 1 AND NOT EXISTS (SELECT 1 FROM "
                "memory_events a WHERE a.action = 0 AND a.addr = f.addr AND a.id < f.id)") == 0);
}

TEST_CASE("a backward formula's view ops have no span; under create_graph (they record nodes) they do") {
  TempDir tmp;
  const std::string path = tmp.file("formula.db");
  const std::string views_under_nodes =
      "SELECT count(*) FROM spans s JOIN strings n ON n.id = s.name_id WHERE s.kind = 0 AND n.text IN ('view', "
      "'reshape', 'transpose', 'expand', 'unsqueeze', 'squeeze', 'permute', 'select', 'slice', 'as_strided') AND "
      "s.parent_id IN (SELECT id FROM spans WHERE kind = 1)";
  {
    gb::trace::Session session(path, blocking());
    mlp_step();  // LinearBackward0 reshapes and transposes, SumBackward expands
  }
  CHECK(sql_int(path, views_under_nodes) == 0);
  // the formulas' computing ops keep their spans: the GEMMs of LinearBackward0
  CHECK(sql_int(path,
                "SELECT count(*) FROM spans s JOIN strings n ON n.id = s.name_id JOIN spans p ON p.id = s.parent_id "
                "JOIN strings pn ON pn.id = p.name_id WHERE n.text = 'mm' AND pn.text = 'LinearBackward0'") >= 3);
  // the bias gradient is a fresh sum, not a reshaped view of one: AccumulateGrad takes its buffer, no clone
  CHECK(sql_int(path,
                "SELECT count(*) FROM spans s JOIN strings n ON n.id = s.name_id WHERE n.text = 'clone'") == 0);

  const std::string path2 = tmp.file("double.db");
  {
    gb::trace::Session session(path2, blocking());
    gb::Tensor w = gb::randn({4, 3}).requires_grad_();
    gb::Tensor x = gb::randn({2, 3});
    gb::Tensor y = gb::linear(x, w).pow(2).sum();
    auto g = gb::autograd::grad({y}, {w}, {}, /*retain_graph=*/true, /*create_graph=*/true);
    g[0].sum().backward();  // the gradient's own graph: its views were recorded
  }
  CHECK(sql_int(path2, views_under_nodes) > 0);
}
