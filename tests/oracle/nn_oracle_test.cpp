// tests/oracle/nn_oracle_test.cpp — every gb::nn layer against libtorch 1.13's C++ module of the same name.
//
// For each layer: build both modules, check that named_parameters and named_buffers have the same keys in the
// same order, copy the gb weights into libtorch by name, run forward on the same input, compare the outputs, then
// backpropagate (output * fixed_random).sum() through both and compare the input gradients and every parameter's
// gradient. Where libtorch 1.13's C++ module lacks an option (MultiheadAttention's batch_first and unbatched input,
// TransformerEncoderLayer's norm_first and batch_first), the libtorch side is the same computation written from its
// modules' pieces or with transposed inputs. Float32 throughout, but the loss modules, float64; the last test case
// prints the largest absolute difference seen per module.
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>

#include "support/check.h"

// This file's names, apart from the other oracle files' (the folder builds as one translation unit).
namespace nn_oracle {

namespace nn = gb::nn;
namespace tnn = torch::nn;

namespace {

using GList = std::vector<gb::Tensor>;
using TList = std::vector<torch::Tensor>;

std::map<std::string, double>& diffs() {
  static std::map<std::string, double> d;
  return d;
}

torch::Dtype torch_dtype(gb::ScalarType t) {
  switch (t) {
    case gb::kDouble:
      return torch::kDouble;
    case gb::kInt64:
      return torch::kLong;
    case gb::kInt32:
      return torch::kInt;
    case gb::kBool:
      return torch::kBool;
    default:
      return torch::kFloat;
  }
}

torch::Tensor to_torch(const gb::Tensor& t) {
  gb::Tensor c = t.detach().contiguous();
  return torch::from_blob(c.data_ptr(), c.sizes().vec(), torch_dtype(c.scalar_type())).clone();
}

gb::Tensor to_gb_double(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kDouble).contiguous();
  std::vector<int64_t> sizes(c.sizes().begin(), c.sizes().end());
  return gb::from_blob(c.data_ptr(), sizes, gb::kFloat64).clone();
}

// Compares and records the largest absolute difference for `mod`.
void compare(const std::string& mod, const gb::Tensor& ours, const torch::Tensor& theirs, const std::string& what,
             double rtol = 1e-5, double atol = 1e-5) {
  INFO(mod << ": " << what);
  REQUIRE(ours.defined() == theirs.defined());
  if (!ours.defined()) return;
  std::vector<int64_t> ts(theirs.sizes().begin(), theirs.sizes().end());
  REQUIRE_MESSAGE(ours.sizes() == gb::IntArrayRef(ts), "shape " << ours.sizes() << " vs " << gb::IntArrayRef(ts));
  auto a = gbtest::values(ours), b = gbtest::values(to_gb_double(theirs));
  double& d = diffs()[mod];
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i]))) d = std::max(d, std::fabs(a[i] - b[i]));
  gbtest::check_close(ours, to_gb_double(theirs), rtol, atol);
}

// Same keys in the same order, then libtorch's tensors take gb's values.
void copy_weights(const std::string& mod, nn::Module& g, tnn::Module& t) {
  INFO(mod);
  auto gp = g.named_parameters(), gbuf = g.named_buffers();
  auto tp = t.named_parameters(), tbuf = t.named_buffers();
  REQUIRE(gp.keys() == tp.keys());
  REQUIRE(gbuf.keys() == tbuf.keys());
  torch::NoGradGuard no_grad;
  for (const auto& p : gp) tp[p.key()].copy_(to_torch(p.value()));
  for (const auto& b : gbuf) tbuf[b.key()].copy_(to_torch(b.value()));
}

void compare_buffers(const std::string& mod, nn::Module& g, tnn::Module& t) {
  auto tbuf = t.named_buffers();
  for (const auto& b : g.named_buffers()) compare(mod, b.value(), tbuf[b.key()], "buffer " + b.key());
}

// Forward both on the same inputs (float inputs get gradients), compare every output, backpropagate the same
// random weighting of the outputs, compare input and parameter gradients.
void check(const std::string& mod, nn::Module& g, tnn::Module& t, GList inputs,
           const std::function<GList(const GList&)>& fg, const std::function<TList(const TList&)>& ft,
           double rtol = 1e-5, double atol = 1e-5) {
  INFO(mod);
  TList tin;
  for (auto& x : inputs) {
    x = x.detach().clone();
    torch::Tensor tx = to_torch(x);
    if (x.is_floating_point()) {
      x.requires_grad_();
      tx.requires_grad_();
    }
    tin.push_back(tx);
  }
  g.zero_grad();
  t.zero_grad(/*set_to_none=*/true);
  GList go = fg(inputs);
  TList to = ft(tin);
  REQUIRE(go.size() == to.size());
  gb::Tensor gl = gb::zeros({});
  torch::Tensor tl = torch::zeros({});
  for (size_t i = 0; i < go.size(); ++i) {
    compare(mod, go[i], to[i], "output " + std::to_string(i), rtol, atol);
    if (!go[i].defined() || !go[i].requires_grad()) continue;
    gb::Tensor w = gb::randn(go[i].sizes());
    gl = gl + (go[i] * w).sum();
    tl = tl + (to[i] * to_torch(w)).sum();
  }
  if (!gl.requires_grad()) return;
  gl.backward();
  tl.backward();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].requires_grad())
      compare(mod, inputs[i].grad(), tin[i].grad(), "input grad " + std::to_string(i), rtol, atol);
  auto tp = t.named_parameters();
  for (const auto& p : g.named_parameters()) {
    INFO("parameter " << p.key());
    REQUIRE(tp[p.key()].grad().defined() == p.value().grad().defined());
    compare(mod, p.value().grad(), tp[p.key()].grad(), "grad of " + p.key(), rtol, atol);
  }
}

// One-tensor-in, one-tensor-out modules.
template <typename G, typename T>
void check1(const std::string& mod, G& g, T& t, const gb::Tensor& x) {
  copy_weights(mod, *g, *t);
  check(
      mod, *g, *t, {x}, [&](const GList& v) { return GList{g(v[0])}; }, [&](const TList& v) { return TList{t(v[0])}; });
}

gb::Tensor bool_mask(std::vector<int64_t> shape, std::vector<bool> values) { return gb::tensor(values).view(shape); }

}  // namespace

TEST_CASE("Linear, Identity, Flatten") {
  torch::set_num_threads(1);
  gb::manual_seed(1);
  nn::Linear g(4, 6);
  tnn::Linear t(4, 6);
  check1("Linear", g, t, gb::randn({3, 5, 4}));
  nn::Linear gn(nn::LinearOptions(4, 6).bias(false));
  tnn::Linear tn(tnn::LinearOptions(4, 6).bias(false));
  check1("Linear", gn, tn, gb::randn({7, 4}));
  nn::Identity gi;
  tnn::Identity ti;
  check1("Identity", gi, ti, gb::randn({2, 3}));
  nn::Flatten gf(nn::FlattenOptions().start_dim(1).end_dim(2));
  tnn::Flatten tf(tnn::FlattenOptions().start_dim(1).end_dim(2));
  check1("Flatten", gf, tf, gb::randn({2, 3, 4, 5}));
}

TEST_CASE("Conv2d") {
  gb::manual_seed(2);
  nn::Conv2d g(nn::Conv2dOptions(4, 6, 3).stride(2).padding(1));
  tnn::Conv2d t(tnn::Conv2dOptions(4, 6, 3).stride(2).padding(1));
  check1("Conv2d", g, t, gb::randn({2, 4, 9, 9}));
  nn::Conv2d g2(nn::Conv2dOptions(4, 6, {3, 2}).dilation({2, 1}).groups(2).bias(false));
  tnn::Conv2d t2(tnn::Conv2dOptions(4, 6, {3, 2}).dilation({2, 1}).groups(2).bias(false));
  check1("Conv2d", g2, t2, gb::randn({2, 4, 8, 7}));
  check1("Conv2d", g, t, gb::randn({4, 6, 5}));  // unbatched
}

TEST_CASE("ConvTranspose2d") {
  gb::manual_seed(2);
  nn::ConvTranspose2d g(nn::ConvTranspose2dOptions(4, 6, 4).stride(2).padding(1));
  tnn::ConvTranspose2d t(tnn::ConvTranspose2dOptions(4, 6, 4).stride(2).padding(1));
  check1("ConvTranspose2d", g, t, gb::randn({2, 4, 5, 5}));
  nn::ConvTranspose2d g2(nn::ConvTranspose2dOptions(4, 6, {3, 2}).stride({2, 1}).output_padding({1, 0}).groups(2)
                             .dilation({1, 2}).bias(false));
  tnn::ConvTranspose2d t2(tnn::ConvTranspose2dOptions(4, 6, {3, 2}).stride({2, 1}).output_padding({1, 0}).groups(2)
                              .dilation({1, 2}).bias(false));
  check1("ConvTranspose2d", g2, t2, gb::randn({2, 4, 4, 3}));
  check1("ConvTranspose2d", g, t, gb::randn({4, 3, 3}));  // unbatched
}

TEST_CASE("Conv1d, MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d") {
  gb::manual_seed(4);
  nn::Conv1d g(nn::Conv1dOptions(4, 6, 3).stride(2).padding(1).dilation(2).groups(2));
  tnn::Conv1d t(tnn::Conv1dOptions(4, 6, 3).stride(2).padding(1).dilation(2).groups(2));
  check1("Conv1d", g, t, gb::randn({2, 4, 11}));
  check1("Conv1d", g, t, gb::randn({4, 9}));  // unbatched
  nn::MaxPool1d gm(nn::MaxPool1dOptions(3).stride(2).padding(1));
  tnn::MaxPool1d tm(tnn::MaxPool1dOptions(3).stride(2).padding(1));
  check1("MaxPool1d", gm, tm, gb::randn({2, 3, 10}));
  nn::AvgPool1d ga(nn::AvgPool1dOptions(2));
  tnn::AvgPool1d ta(tnn::AvgPool1dOptions(2));
  check1("AvgPool1d", ga, ta, gb::randn({2, 3, 9}));
  nn::AdaptiveAvgPool1d gd(nn::AdaptiveAvgPool1dOptions(4));
  tnn::AdaptiveAvgPool1d td(tnn::AdaptiveAvgPool1dOptions(4));
  check1("AdaptiveAvgPool1d", gd, td, gb::randn({2, 3, 10}));
  nn::MaxPool2d g2(nn::MaxPool2dOptions(3).stride(2).padding(1));
  tnn::MaxPool2d t2(tnn::MaxPool2dOptions(3).stride(2).padding(1));
  check1("MaxPool2d", g2, t2, gb::randn({2, 3, 7, 6}));
  nn::AvgPool2d ga2(nn::AvgPool2dOptions({2, 3}));
  tnn::AvgPool2d ta2(tnn::AvgPool2dOptions({2, 3}));
  check1("AvgPool2d", ga2, ta2, gb::randn({2, 3, 6, 7}));
  nn::AdaptiveAvgPool2d gd2(nn::AdaptiveAvgPool2dOptions({2, 3}));
  tnn::AdaptiveAvgPool2d td2(tnn::AdaptiveAvgPool2dOptions({2, 3}));
  check1("AdaptiveAvgPool2d", gd2, td2, gb::randn({2, 3, 7, 8}));
}

TEST_CASE("BatchNorm1d and BatchNorm2d: train (running stats after 3 forwards) and eval") {
  gb::manual_seed(3);
  auto run = [](const std::string& mod, auto& g, auto& t, std::vector<int64_t> shape) {
    copy_weights(mod, *g, *t);
    {
      gb::NoGradGuard ng;  // affine parameters away from 1/0
      g->weight.normal_(1, 0.3);
      g->bias.normal_(0, 0.3);
    }
    copy_weights(mod, *g, *t);
    for (int i = 0; i < 3; ++i)
      check(
          mod, *g, *t, {gb::randn(shape) * 2 + 1}, [&](const GList& v) { return GList{g(v[0])}; },
          [&](const TList& v) { return TList{t(v[0])}; });
    compare_buffers(mod, *g, *t);
    CHECK(g->num_batches_tracked.template item<int64_t>() == 3);
    g->eval();
    t->eval();
    check(
        mod, *g, *t, {gb::randn(shape)}, [&](const GList& v) { return GList{g(v[0])}; },
        [&](const TList& v) { return TList{t(v[0])}; });
    compare_buffers(mod, *g, *t);
  };
  {
    nn::BatchNorm1d g(4);
    tnn::BatchNorm1d t(4);
    run("BatchNorm1d", g, t, {8, 4});
  }
  {
    nn::BatchNorm1d g(nn::BatchNormOptions(4).momentum(std::nullopt).eps(1e-3));
    tnn::BatchNorm1d t(tnn::BatchNormOptions(4).momentum(c10::nullopt).eps(1e-3));
    run("BatchNorm1d", g, t, {5, 4, 3});
  }
  {
    nn::BatchNorm2d g(3);
    tnn::BatchNorm2d t(3);
    run("BatchNorm2d", g, t, {4, 3, 5, 5});
  }
  {
    nn::BatchNorm2d g(nn::BatchNormOptions(3).momentum(0.3));
    tnn::BatchNorm2d t(tnn::BatchNormOptions(3).momentum(0.3));
    run("BatchNorm2d", g, t, {2, 3, 4, 6});
  }
}

TEST_CASE("LayerNorm and GroupNorm") {
  gb::manual_seed(4);
  auto perturb = [](nn::Module& m) {
    gb::NoGradGuard ng;
    for (auto& p : m.parameters()) p.add_(gb::randn(p.sizes()) * 0.3);
  };
  nn::LayerNorm g(nn::LayerNormOptions({4}));
  tnn::LayerNorm t(tnn::LayerNormOptions({4}));
  perturb(*g);
  check1("LayerNorm", g, t, gb::randn({3, 5, 4}) * 3);
  nn::LayerNorm g2(nn::LayerNormOptions({3, 4}).eps(1e-3));
  tnn::LayerNorm t2(tnn::LayerNormOptions({3, 4}).eps(1e-3));
  perturb(*g2);
  check1("LayerNorm", g2, t2, gb::randn({2, 3, 4}));
  nn::GroupNorm g3(2, 6);
  tnn::GroupNorm t3(2, 6);
  perturb(*g3);
  check1("GroupNorm", g3, t3, gb::randn({3, 6, 4, 2}));
  nn::GroupNorm g4(nn::GroupNormOptions(3, 6).affine(false).eps(1e-4));
  tnn::GroupNorm t4(tnn::GroupNormOptions(3, 6).affine(false).eps(1e-4));
  check1("GroupNorm", g4, t4, gb::randn({2, 6, 5}));
}

TEST_CASE("Dropout (eval, and p = 0 in training), Embedding") {
  gb::manual_seed(5);
  nn::Dropout g(0.4);
  tnn::Dropout t(0.4);
  g->eval();
  t->eval();
  check1("Dropout", g, t, gb::randn({4, 5}));
  nn::Dropout g0(0.0);
  tnn::Dropout t0(0.0);
  check1("Dropout", g0, t0, gb::randn({4, 5}));
  nn::Dropout2d g2(0.3);
  tnn::Dropout2d t2(0.3);
  g2->eval();
  t2->eval();
  check1("Dropout2d", g2, t2, gb::randn({2, 3, 4, 4}));
  nn::Dropout2d g20(0.0);
  tnn::Dropout2d t20(0.0);
  check1("Dropout2d", g20, t20, gb::randn({3, 4, 4}));

  nn::Embedding ge(nn::EmbeddingOptions(10, 3).padding_idx(2));
  tnn::Embedding te(tnn::EmbeddingOptions(10, 3).padding_idx(2));
  check1("Embedding", ge, te, gb::randint(0, 10, {4, 6}));
  nn::Embedding gn(7, 5);
  tnn::Embedding tn(7, 5);
  check1("Embedding", gn, tn, gb::randint(0, 7, {9}));
}

TEST_CASE("activations") {
  gb::manual_seed(6);
  gb::Tensor x = gb::randn({4, 5}) * 2;
  {
    nn::ReLU g;
    tnn::ReLU t;
    check1("ReLU", g, t, x);
  }
  {
    nn::GELU g;
    tnn::GELU t;
    check1("GELU", g, t, x);
    nn::GELU gt(nn::GELUOptions().approximate("tanh"));
    tnn::GELU tt(tnn::GELUOptions().approximate("tanh"));
    check1("GELU", gt, tt, x);
  }
  {
    nn::SiLU g;
    tnn::SiLU t;
    check1("SiLU", g, t, x);
  }
  {
    nn::Tanh g;
    tnn::Tanh t;
    check1("Tanh", g, t, x);
  }
  {
    nn::Sigmoid g;
    tnn::Sigmoid t;
    check1("Sigmoid", g, t, x);
  }
  {
    nn::LeakyReLU g(nn::LeakyReLUOptions().negative_slope(0.2));
    tnn::LeakyReLU t(tnn::LeakyReLUOptions().negative_slope(0.2));
    check1("LeakyReLU", g, t, x);
  }
  {
    nn::Softmax g(1);
    tnn::Softmax t(1);
    check1("Softmax", g, t, x);
    nn::Softmax g0(0);
    tnn::Softmax t0(0);
    check1("Softmax", g0, t0, x);
  }
}

TEST_CASE("ModuleList, ModuleDict, Sequential: the same dotted names as libtorch") {
  gb::manual_seed(7);
  nn::ModuleList gl{nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)};
  tnn::ModuleList tl(tnn::Linear(3, 4), tnn::ReLU(), tnn::Linear(4, 2));
  copy_weights("ModuleList", *gl, *tl);
  // insert renumbers as Python's ModuleList.insert (libtorch 1.13's C++ insert renames only the inserted slot, so
  // its names are not the reference here)
  gl->insert(1, nn::BatchNorm1d(4));
  CHECK(gl->named_parameters().keys() ==
        std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"});
  CHECK(gl->named_buffers().keys() ==
        std::vector<std::string>{"1.running_mean", "1.running_var", "1.num_batches_tracked"});
  nn::ModuleDict gd({{"enc", nn::Linear(3, 4)}, {"norm", nn::LayerNorm(nn::LayerNormOptions({4}))}});
  tnn::ModuleDict td(torch::OrderedDict<std::string, std::shared_ptr<tnn::Module>>{
      {"enc", tnn::Linear(3, 4).ptr()}, {"norm", tnn::LayerNorm(tnn::LayerNormOptions({4})).ptr()}});
  copy_weights("ModuleDict", *gd, *td);
  nn::Sequential gs(nn::Conv2d(2, 3, 3), nn::BatchNorm2d(3), nn::ReLU(), nn::Flatten(), nn::Linear(12, 2));
  tnn::Sequential ts(tnn::Conv2d(2, 3, 3), tnn::BatchNorm2d(3), tnn::ReLU(), tnn::Flatten(), tnn::Linear(12, 2));
  copy_weights("Sequential", *gs, *ts);
  check(
      "Sequential", *gs, *ts, {gb::randn({3, 2, 4, 4})}, [&](const GList& v) { return GList{gs(v[0])}; },
      [&](const TList& v) { return TList{ts->forward(v[0])}; });
}

namespace {

// libtorch 1.13's C++ MultiheadAttention adds attn_mask as it is (a bool mask would add 0/1, where PyTorch masks
// with -inf) and takes a 2-D one only. So libtorch gets a bool mask in its additive form, and a 3-D mask (the same
// for every head of a batch element) by running each batch element on its own with that element's 2-D mask.
TList torch_mha(tnn::MultiheadAttention& t, const torch::Tensor& q, const torch::Tensor& kv, const gb::Tensor& kpm,
                bool need_weights, const gb::Tensor& mask, bool average, int64_t num_heads) {
  auto additive = [](const gb::Tensor& m) {
    return m.scalar_type() == gb::kBool
               ? to_torch(gb::zeros(m.sizes()).masked_fill(m, -std::numeric_limits<double>::infinity()))
               : to_torch(m);
  };
  auto tk = [&](const gb::Tensor& m) { return m.defined() ? to_torch(m) : torch::Tensor(); };
  if (!mask.defined() || mask.dim() == 2) {
    auto [o, w] = t(q, kv, kv, tk(kpm), need_weights, mask.defined() ? additive(mask) : torch::Tensor(), average);
    return {o, w};
  }
  TList outs, weights;
  for (int64_t b = 0; b < q.size(1); ++b) {
    auto [o, w] = t(q.narrow(1, b, 1), kv.narrow(1, b, 1), kv.narrow(1, b, 1),
                    kpm.defined() ? to_torch(kpm[b]).unsqueeze(0) : torch::Tensor(), need_weights,
                    additive(mask[b * num_heads]), average);
    outs.push_back(o);
    weights.push_back(w);
  }
  return {torch::cat(outs, 1), need_weights ? torch::cat(weights, 0) : torch::Tensor()};
}

// A 3-D mask (N*H, L, S) from one (N, L, S) mask per batch element.
gb::Tensor per_head(const gb::Tensor& m, int64_t H) {
  return m.unsqueeze(1).expand({m.size(0), H, m.size(1), m.size(2)}).reshape({m.size(0) * H, m.size(1), m.size(2)});
}

}  // namespace

TEST_CASE("MultiheadAttention: masks (bool, float, key padding), need_weights, average_attn_weights") {
  gb::manual_seed(8);
  nn::MultiheadAttention g(8, 2);
  tnn::MultiheadAttention t(8, 2);
  {
    gb::NoGradGuard ng;
    g->in_proj_bias.normal_(0, 0.3);
    g->out_proj->bias.normal_(0, 0.3);
  }
  copy_weights("MultiheadAttention", *g, *t);
  const gb::Tensor q = gb::randn({4, 3, 8}), kv = gb::randn({5, 3, 8});
  const gb::Tensor kpm = bool_mask(
      {3, 5}, {false, false, false, false, true, true, false, false, false, false, false, false, true, true, false});
  const gb::Tensor causal = bool_mask({4, 5}, {false, true,  true,  true, true, false, false, true,  true,  true,
                                               false, false, false, true, true, false, false, false, false, true});
  const gb::Tensor float_mask = gb::randn({4, 5});
  const gb::Tensor mask3 = per_head(gb::randn({3, 4, 5}), 2);
  // random, but key 1 (never padded) stays visible so no row is fully masked
  const gb::Tensor bool_mask3 =
      per_head(gb::logical_and(gb::rand({3, 4, 5}) > 0.6, bool_mask({5}, {true, false, true, true, true})), 2);
  struct Case {
    std::string what;
    gb::Tensor kpm, mask;
    bool need_weights = true, average = true;
  };
  std::vector<Case> cases = {{"plain", {}, {}},
                             {"key_padding_mask", kpm, {}},
                             {"bool attn_mask", {}, causal},
                             {"float attn_mask", {}, float_mask},
                             {"3-D float attn_mask + key_padding_mask", kpm, mask3},
                             {"bool attn_mask + key_padding_mask", kpm, causal},
                             {"3-D bool attn_mask + key_padding_mask", kpm, bool_mask3},
                             {"need_weights=false", kpm, float_mask, false},
                             {"average_attn_weights=false", kpm, float_mask, true, false}};
  for (const auto& c : cases) {
    INFO(c.what);
    // key and value: one tensor (libtorch 1.13 compares them by value and then projects only key for both)
    check(
        "MultiheadAttention", *g, *t, {q, kv},
        [&](const GList& v) {
          auto [o, w] = g(v[0], v[1], v[1], c.kpm, c.need_weights, c.mask, c.average);
          return GList{o, w};
        },
        [&](const TList& v) { return torch_mha(t, v[0], v[1], c.kpm, c.need_weights, c.mask, c.average, 2); });
  }
  // self-attention with one tensor for q, k and v
  check(
      "MultiheadAttention", *g, *t, {q}, [&](const GList& v) { return GList{std::get<0>(g(v[0], v[0], v[0]))}; },
      [&](const TList& v) { return TList{std::get<0>(t(v[0], v[0], v[0]))}; });
  // a float key_padding_mask (PyTorch 2's additive form) equals the same values given as a 3-D attn_mask
  gb::Tensor kpm_f = gb::randn({3, 5});
  check(
      "MultiheadAttention", *g, *t, {q, kv},
      [&](const GList& v) { return GList{std::get<0>(g(v[0], v[1], v[1], kpm_f))}; },
      [&](const TList& v) {
        return TList{torch_mha(t, v[0], v[1], {}, true, per_head(kpm_f.unsqueeze(1).expand({3, 4, 5}), 2), true, 2)[0]};
      });
  // unbatched (L, E) against a batch of one
  check(
      "MultiheadAttention", *g, *t, {q.select(1, 0), kv.select(1, 0)},
      [&](const GList& v) {
        auto [o, w] = g(v[0], v[1], v[1], kpm[1], true, causal);
        return GList{o, w};
      },
      [&](const TList& v) {
        auto r = torch_mha(t, v[0].unsqueeze(1), v[1].unsqueeze(1), kpm[1].unsqueeze(0), true, causal, true, 2);
        return TList{r[0].squeeze(1), r[1].squeeze(0)};
      });
  // batch_first against transposed inputs
  nn::MultiheadAttention gbf(nn::MultiheadAttentionOptions(8, 2).batch_first(true));
  gbf->load_state_dict(g->state_dict());
  check(
      "MultiheadAttention", *gbf, *t, {q.transpose(0, 1), kv.transpose(0, 1)},
      [&](const GList& v) {
        auto [o, w] = gbf(v[0], v[1], v[1], kpm, true, causal);
        return GList{o, w};
      },
      [&](const TList& v) {
        auto r = torch_mha(t, v[0].transpose(0, 1), v[1].transpose(0, 1), kpm, true, causal, true, 2);
        return TList{r[0].transpose(0, 1), r[1]};
      });
  // no bias
  nn::MultiheadAttention gnb(nn::MultiheadAttentionOptions(8, 4).bias(false));
  tnn::MultiheadAttention tnb(tnn::MultiheadAttentionOptions(8, 4).bias(false));
  copy_weights("MultiheadAttention", *gnb, *tnb);
  check(
      "MultiheadAttention", *gnb, *tnb, {q, kv},
      [&](const GList& v) {
        auto [o, w] = gnb(v[0], v[1], v[1]);
        return GList{o, w};
      },
      [&](const TList& v) {
        auto [o, w] = tnb(v[0], v[1], v[1]);
        return TList{o, w};
      });
}

namespace {

// libtorch 1.13's TransformerEncoderLayer is post-norm over (S, N, E) only: pre-norm is written from its pieces.
torch::Tensor torch_layer(tnn::TransformerEncoderLayer& t, torch::Tensor x, const torch::Tensor& mask,
                          const torch::Tensor& kpm, bool norm_first, bool gelu) {
  if (!norm_first) return t(x, mask, kpm);
  auto sa = [&](const torch::Tensor& h) { return std::get<0>(t->self_attn(h, h, h, kpm, false, mask)); };
  auto ff = [&](const torch::Tensor& h) {
    torch::Tensor a = t->linear1(h);
    return t->linear2(gelu ? torch::gelu(a) : torch::relu(a));
  };
  x = x + sa(t->norm1(x));
  return x + ff(t->norm2(x));
}

}  // namespace

TEST_CASE("TransformerEncoderLayer: post-norm and pre-norm, relu and gelu, batch_first, train (dropout 0) and eval") {
  gb::manual_seed(9);
  const gb::Tensor kpm = bool_mask({2, 5}, {false, false, false, true, true, false, false, false, false, false});
  for (bool norm_first : {false, true})
    for (bool gelu : {false, true})
      for (bool batch_first : {false, true})
        for (bool eval : {false, true}) {
          INFO("norm_first " << norm_first << " gelu " << gelu << " batch_first " << batch_first << " eval " << eval);
          const double p = eval ? 0.1 : 0.0;  // train mode only with dropout 0
          nn::TransformerEncoderLayer g(nn::TransformerEncoderLayerOptions(8, 2)
                                            .dim_feedforward(16)
                                            .dropout(p)
                                            .activation(gelu ? gb::kGELU : gb::kReLU)
                                            .norm_first(norm_first)
                                            .batch_first(batch_first));
          tnn::TransformerEncoderLayer t(
              tnn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(p).activation(
                  gelu ? tnn::activation_t(torch::kGELU) : tnn::activation_t(torch::kReLU)));
          {
            gb::NoGradGuard ng;
            for (auto& prm : g->parameters()) prm.add_(gb::randn(prm.sizes()) * 0.1);
          }
          copy_weights("TransformerEncoderLayer", *g, *t);
          if (eval) g->eval(), t->eval();
          gb::Tensor x = gb::randn({5, 2, 8});
          gb::Tensor mask = gb::randn({5, 5});
          if (batch_first) x = x.transpose(0, 1).contiguous();
          check(
              "TransformerEncoderLayer", *g, *t, {x}, [&](const GList& v) { return GList{g(v[0], mask, kpm)}; },
              [&](const TList& v) {
                torch::Tensor in = batch_first ? v[0].transpose(0, 1) : v[0];
                torch::Tensor out = torch_layer(t, in, to_torch(mask), to_torch(kpm), norm_first, gelu);
                return TList{batch_first ? out.transpose(0, 1) : out};
              });
        }
}

TEST_CASE("TransformerEncoder: layers.N and norm named as libtorch's; forward and gradients") {
  gb::manual_seed(10);
  nn::TransformerEncoderLayer proto(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  nn::TransformerEncoder g(
      nn::TransformerEncoderOptions(proto, 2).norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
  tnn::TransformerEncoderLayer tproto(tnn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  tnn::TransformerEncoder t(
      tnn::TransformerEncoderOptions(tproto, 2).norm(tnn::AnyModule(tnn::LayerNorm(tnn::LayerNormOptions({8})))));
  {
    gb::NoGradGuard ng;
    for (auto& prm : g->parameters()) prm.add_(gb::randn(prm.sizes()) * 0.1);
  }
  copy_weights("TransformerEncoder", *g, *t);
  const gb::Tensor kpm = bool_mask({2, 4}, {false, false, true, true, false, false, false, false});
  const gb::Tensor mask = gb::randn({4, 4});
  check(
      "TransformerEncoder", *g, *t, {gb::randn({4, 2, 8})}, [&](const GList& v) { return GList{g(v[0], mask, kpm)}; },
      [&](const TList& v) { return TList{t(v[0], to_torch(mask), to_torch(kpm))}; });
}

// Loss modules take (input, target); both are float64 here, and a floating target gets a gradient too.
template <typename G, typename T>
void check_loss(const std::string& mod, G& g, T& t, const gb::Tensor& input, const gb::Tensor& target) {
  copy_weights(mod, *g, *t);
  check(
      mod, *g, *t, {input, target}, [&](const GList& v) { return GList{g(v[0], v[1])}; },
      [&](const TList& v) { return TList{t(v[0], v[1])}; }, 1e-10, 1e-12);
}

TEST_CASE("loss modules (float64): options, weight and pos_weight buffers, input and target gradients") {
  gb::manual_seed(9);
  const auto f64 = gb::kFloat64;
  auto x = gb::randn({3, 4}, f64), y = gb::randn({3, 4}, f64);
  {
    nn::MSELoss g(gb::kSum);
    tnn::MSELoss t(torch::kSum);
    check_loss("MSELoss", g, t, x, y);
  }
  {
    nn::L1Loss g;
    tnn::L1Loss t;
    check_loss("L1Loss", g, t, x, y);
  }
  {
    nn::SmoothL1Loss g(nn::SmoothL1LossOptions().beta(0.5));
    tnn::SmoothL1Loss t(tnn::SmoothL1LossOptions().beta(0.5));
    check_loss("SmoothL1Loss", g, t, x * 2, y);
  }
  {
    nn::HuberLoss g(nn::HuberLossOptions(gb::kNone).delta(0.7));
    tnn::HuberLoss t(tnn::HuberLossOptions(torch::kNone).delta(0.7));
    check_loss("HuberLoss", g, t, x * 2, y);
  }
  {
    nn::KLDivLoss g(nn::KLDivLossOptions(gb::kBatchMean).log_target(true));
    tnn::KLDivLoss t(tnn::KLDivLossOptions(torch::kBatchMean).log_target(true));
    check_loss("KLDivLoss", g, t, x.log_softmax(1), y.log_softmax(1));
    nn::KLDivLoss g2(nn::KLDivLossOptions(gb::kSum));
    tnn::KLDivLoss t2(tnn::KLDivLossOptions(torch::kSum));
    check_loss("KLDivLoss", g2, t2, x.log_softmax(1), y.softmax(1));
  }
  auto w = gb::rand({4}, f64) + 0.5;
  auto p = gb::rand({3, 4}, f64) * 0.8 + 0.1, q = gb::rand({3, 4}, f64);
  {
    nn::BCELoss g(nn::BCELossOptions().weight(w));
    tnn::BCELoss t(tnn::BCELossOptions().weight(to_torch(w)));
    check_loss("BCELoss", g, t, p, q);
  }
  {
    auto pw = gb::rand({4}, f64) * 3;
    nn::BCEWithLogitsLoss g(nn::BCEWithLogitsLossOptions().weight(w).pos_weight(pw).reduction(gb::kSum));
    tnn::BCEWithLogitsLoss t(
        tnn::BCEWithLogitsLossOptions().weight(to_torch(w)).pos_weight(to_torch(pw)).reduction(torch::kSum));
    check_loss("BCEWithLogitsLoss", g, t, x, q);
  }
  auto logits = gb::randn({6, 4}, f64);
  auto classes = gb::randint(0, 4, {6});
  {
    nn::NLLLoss g(nn::NLLLossOptions().weight(w).ignore_index(1));
    tnn::NLLLoss t(tnn::NLLLossOptions().weight(to_torch(w)).ignore_index(1));
    check_loss("NLLLoss", g, t, logits.log_softmax(1), classes);
  }
  {
    nn::CrossEntropyLoss g(nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.2).reduction(gb::kSum));
    tnn::CrossEntropyLoss t(
        tnn::CrossEntropyLossOptions().weight(to_torch(w)).label_smoothing(0.2).reduction(torch::kSum));
    check_loss("CrossEntropyLoss", g, t, logits, classes);
    nn::CrossEntropyLoss g2;
    tnn::CrossEntropyLoss t2;
    check_loss("CrossEntropyLoss", g2, t2, gb::randn({2, 3, 5}, f64), gb::randint(0, 3, {2, 5}));
  }
}

TEST_CASE("report: the largest absolute difference per module (float32; the losses float64)") {
  std::cout << "\nmax |gb - libtorch| per module (forward outputs, input and parameter gradients, buffers):\n";
  for (const auto& [mod, d] : diffs())
    std::cout << "  " << std::left << std::setw(26) << mod << std::scientific << std::setprecision(2) << d << "\n";
  CHECK(!diffs().empty());
}

TEST_CASE("LSTM and GRU (layers, bidirectional, batch_first, given states, no bias) and their cells") {
  torch::set_num_threads(1);
  gb::manual_seed(6);
  {
    nn::LSTM g(nn::LSTMOptions(5, 4).num_layers(2).bidirectional(true));
    tnn::LSTM t(tnn::LSTMOptions(5, 4).num_layers(2).bidirectional(true));
    copy_weights("LSTM", *g, *t);
    check("LSTM", *g, *t, {gb::randn({6, 3, 5}), gb::randn({4, 3, 4}), gb::randn({4, 3, 4})},
          [&](const GList& v) {
            auto [y, s] = g(v[0], std::make_tuple(v[1], v[2]));
            return GList{y, std::get<0>(s), std::get<1>(s)};
          },
          [&](const TList& v) {
            auto [y, s] = t(v[0], std::make_tuple(v[1], v[2]));
            return TList{y, std::get<0>(s), std::get<1>(s)};
          });
    nn::LSTM gb_first(nn::LSTMOptions(3, 2).batch_first(true).bias(false));
    tnn::LSTM tb_first(tnn::LSTMOptions(3, 2).batch_first(true).bias(false));
    copy_weights("LSTM", *gb_first, *tb_first);
    check("LSTM", *gb_first, *tb_first, {gb::randn({2, 5, 3})},
          [&](const GList& v) {
            auto [y, s] = gb_first(v[0]);
            return GList{y, std::get<0>(s), std::get<1>(s)};
          },
          [&](const TList& v) {
            auto [y, s] = tb_first(v[0]);
            return TList{y, std::get<0>(s), std::get<1>(s)};
          });
  }
  {
    nn::GRU g(nn::GRUOptions(5, 4).num_layers(2).bidirectional(true).batch_first(true));
    tnn::GRU t(tnn::GRUOptions(5, 4).num_layers(2).bidirectional(true).batch_first(true));
    copy_weights("GRU", *g, *t);
    check("GRU", *g, *t, {gb::randn({3, 6, 5}), gb::randn({4, 3, 4})},
          [&](const GList& v) {
            auto [y, h] = g(v[0], v[1]);
            return GList{y, h};
          },
          [&](const TList& v) {
            auto [y, h] = t(v[0], v[1]);
            return TList{y, h};
          });
    nn::GRU g1(nn::GRUOptions(3, 2));
    tnn::GRU t1(tnn::GRUOptions(3, 2));
    copy_weights("GRU", *g1, *t1);
    check("GRU", *g1, *t1, {gb::randn({4, 2, 3})},  // libtorch 1.13's C++ GRU takes no unbatched input
          [&](const GList& v) {
            auto [y, h] = g1(v[0]);
            return GList{y, h};
          },
          [&](const TList& v) {
            auto [y, h] = t1(v[0]);
            return TList{y, h};
          });
  }
  {
    nn::LSTMCell g(5, 3);
    tnn::LSTMCell t(5, 3);
    copy_weights("LSTMCell", *g, *t);
    check("LSTMCell", *g, *t, {gb::randn({2, 5}), gb::randn({2, 3}), gb::randn({2, 3})},
          [&](const GList& v) {
            auto [h, c] = g(v[0], std::make_tuple(v[1], v[2]));
            return GList{h, c};
          },
          [&](const TList& v) {
            auto [h, c] = t(v[0], std::make_tuple(v[1], v[2]));
            return TList{h, c};
          });
    nn::GRUCell gg(5, 3);
    tnn::GRUCell tg(5, 3);
    copy_weights("GRUCell", *gg, *tg);
    check("GRUCell", *gg, *tg, {gb::randn({2, 5}), gb::randn({2, 3})},
          [&](const GList& v) { return GList{gg(v[0], v[1])}; }, [&](const TList& v) { return TList{tg(v[0], v[1])}; });
  }
}

}  // namespace nn_oracle
