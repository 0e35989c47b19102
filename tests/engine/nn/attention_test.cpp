// tests/engine/nn/attention_test.cpp — MultiheadAttention: parameters and init, shapes (batch_first, unbatched,
// weights), values against the formula, masks (bool, float, key padding), errors, dropout, gradcheck.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/module_scope.h"

namespace nn = gb::nn;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

TEST_CASE("MultiheadAttention: PyTorch's parameter names, shapes and default init") {
  gb::manual_seed(1);
  nn::MultiheadAttention mha(64, 8);
  CHECK(mha->named_parameters().keys() ==
        std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(mha->in_proj_weight.sizes() == gb::IntArrayRef({192, 64}));
  CHECK(mha->head_dim == 8);
  gbtest::expect(mha->in_proj_bias, std::vector<double>(192, 0.0));
  gbtest::expect(mha->out_proj->bias, std::vector<double>(64, 0.0));
  // xavier_uniform_: bound sqrt(6 / (fan_in + fan_out)) = sqrt(6 / (64 + 192))
  const double bound = std::sqrt(6.0 / 256);
  auto w = gbtest::values(mha->in_proj_weight);
  double hi = 0, s2 = 0;
  for (double x : w) hi = std::max(hi, std::fabs(x)), s2 += x * x;
  CHECK(hi <= bound);
  CHECK(std::sqrt(s2 / double(w.size())) == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.03));
  nn::MultiheadAttention nob(nn::MultiheadAttentionOptions(8, 2).bias(false));
  CHECK(nob->named_parameters().keys() == std::vector<std::string>{"in_proj_weight", "out_proj.weight"});
  CHECK_THROWS_WITH_AS(nn::MultiheadAttention(10, 3), doctest::Contains("embed_dim must be divisible by num_heads"),
                       gb::Error);
}

TEST_CASE("MultiheadAttention shapes: (L, N, E), batch_first, unbatched, per-head weights, need_weights=false") {
  gb::manual_seed(2);
  nn::MultiheadAttention mha(8, 2);
  gb::Tensor q = gb::randn({3, 2, 8}), kv = gb::randn({5, 2, 8});
  auto [out, w] = mha(q, kv, kv);
  CHECK(out.sizes() == gb::IntArrayRef({3, 2, 8}));
  CHECK(w.sizes() == gb::IntArrayRef({2, 3, 5}));
  gbtest::check_close(w.sum({2}), gb::ones({2, 3}), 1e-5, 1e-6);
  auto [out2, w2] = mha(q, kv, kv, gb::Tensor(), true, gb::Tensor(), /*average_attn_weights=*/false);
  CHECK(w2.sizes() == gb::IntArrayRef({2, 2, 3, 5}));
  gbtest::check_close(w2.mean({1}), w, 1e-5, 1e-6);
  auto [out3, w3] = mha(q, kv, kv, gb::Tensor(), /*need_weights=*/false);
  CHECK(!w3.defined());
  gbtest::check_close(out3, out, 1e-6, 1e-6);

  // unbatched == batch of one
  auto [ou, wu] = mha(q.select(1, 0), kv.select(1, 0), kv.select(1, 0));
  CHECK(ou.sizes() == gb::IntArrayRef({3, 8}));
  CHECK(wu.sizes() == gb::IntArrayRef({3, 5}));
  gbtest::check_close(ou, out.select(1, 0), 1e-5, 1e-6);
  gbtest::check_close(wu, w[0], 1e-5, 1e-6);

  // batch_first: the same module weights give the transposed result
  nn::MultiheadAttention bf(nn::MultiheadAttentionOptions(8, 2).batch_first(true));
  bf->load_state_dict(mha->state_dict());
  auto [ob, wb] = bf(q.transpose(0, 1), kv.transpose(0, 1), kv.transpose(0, 1));
  CHECK(ob.sizes() == gb::IntArrayRef({2, 3, 8}));
  gbtest::check_close(ob, out.transpose(0, 1), 1e-5, 1e-6);
  gbtest::check_close(wb, w, 1e-5, 1e-6);
}

TEST_CASE("MultiheadAttention equals the formula softmax(q k^T / sqrt(d)) v per head") {
  gb::manual_seed(3);
  nn::MultiheadAttention mha(4, 2);
  {
    gb::NoGradGuard g;
    mha->in_proj_bias.normal_();
    mha->out_proj->bias.normal_();
  }
  gb::Tensor x = gb::randn({3, 1, 4});
  auto [out, w] = mha(x, x, x, gb::Tensor(), true, gb::Tensor(), false);
  gb::Tensor x2 = x.select(1, 0);  // (L, E)
  auto W = mha->in_proj_weight.chunk(3);
  auto B = mha->in_proj_bias.chunk(3);
  gb::Tensor q = gb::linear(x2, W[0], B[0]), k = gb::linear(x2, W[1], B[1]), v = gb::linear(x2, W[2], B[2]);
  std::vector<gb::Tensor> heads;
  for (int h = 0; h < 2; ++h) {
    gb::Tensor qh = q.narrow(1, 2 * h, 2), kh = k.narrow(1, 2 * h, 2), vh = v.narrow(1, 2 * h, 2);
    gb::Tensor a = gb::softmax(gb::matmul(qh, kh.t()) / std::sqrt(2.0), -1);
    gbtest::check_close(w[0][h], a, 1e-5, 1e-6);
    heads.push_back(gb::matmul(a, vh));
  }
  gb::Tensor expect = gb::linear(gb::cat(heads, 1), mha->out_proj->weight, mha->out_proj->bias);
  gbtest::check_close(out.select(1, 0), expect, 1e-5, 1e-6);
}

TEST_CASE("masks: bool true is not attended, float masks add; key padding; a fully masked row is NaN") {
  gb::manual_seed(4);
  nn::MultiheadAttention mha(4, 2);
  gb::Tensor x = gb::randn({3, 2, 4});
  // causal attn_mask: bool and its float twin agree, and the weights above the diagonal are 0
  gb::Tensor causal =
      gb::tensor(std::vector<bool>{false, true, true, false, false, true, false, false, false}).view({3, 3});
  gb::Tensor causal_f = gb::zeros({3, 3}).masked_fill(causal, -kInf);
  auto [ob, wb] = mha(x, x, x, gb::Tensor(), true, causal);
  auto [of, wf] = mha(x, x, x, gb::Tensor(), true, causal_f);
  gbtest::check_close(ob, of, 1e-6, 1e-6);
  CHECK(wb[0][0][1].item<float>() == 0.0f);
  CHECK(wb[1][1][2].item<float>() == 0.0f);
  CHECK(wb[0][2][2].item<float>() > 0.0f);
  // a float mask shifts scores: adding a constant per row changes nothing
  auto [oc, wc] = mha(x, x, x, gb::Tensor(), true, gb::full({3, 3}, 5.0));
  gb::Tensor plain_out = std::get<0>(mha(x, x, x));
  gbtest::check_close(oc, plain_out, 1e-5, 1e-6);
  // key_padding_mask: batch 1 ignores key 0
  gb::Tensor kpm = gb::tensor(std::vector<bool>{false, false, false, true, false, false}).view({2, 3});
  auto [ok, wk] = mha(x, x, x, kpm);
  gbtest::expect(wk[1].select(1, 0), {0, 0, 0});
  CHECK(wk[0][0][0].item<float>() > 0.0f);
  // combined with a 3-D attn_mask (N*H, L, S)
  gb::Tensor m3 = causal.unsqueeze(0).expand({4, 3, 3}).contiguous();
  auto [o3, w3] = mha(x, x, x, kpm, true, m3);
  gbtest::expect(w3[1][1], {0, 1, 0});            // key 0 padded, key 2 in the future: all weight on key 1
  CHECK(gb::isnan(w3[1][0]).all().item<bool>());  // query 0 of batch 1 may see only key 0, which is padded
  // a float key_padding_mask adds (PyTorch 2's form)
  auto [okf, wkf] = mha(x, x, x, gb::zeros({2, 3}).masked_fill(kpm, -kInf));
  gbtest::check_close(okf, ok, 1e-6, 1e-6);
  // every key masked: NaN as in PyTorch
  gb::Tensor all = gb::ones({3, 3}) > 0.0;
  CHECK(gb::isnan(std::get<0>(mha(x, x, x, gb::Tensor(), true, all))).all().item<bool>());
}

TEST_CASE("MultiheadAttention errors name the shapes") {
  nn::MultiheadAttention mha(4, 2);
  gb::Tensor x = gb::randn({3, 2, 4});
  CHECK_THROWS_WITH_AS(
      mha(gb::randn({4}), x, x),
      doctest::Contains("query should be unbatched 2D or batched 3D tensor but received 1-D query tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(
      mha(x, gb::randn({3, 4}), x),
      doctest::Contains(
          "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 3-D tensors respectively"),
      gb::Error);
  CHECK_THROWS_WITH_AS(mha(x, x, x, gb::Tensor(), true, gb::zeros({3, 4})),
                       doctest::Contains("The shape of the 2D attn_mask is torch.Size([3, 4]), but should be (3, 3)."),
                       gb::Error);
  CHECK_THROWS_WITH_AS(
      mha(x, x, x, gb::Tensor(), true, gb::zeros({2, 3, 3})),
      doctest::Contains("The shape of the 3D attn_mask is torch.Size([2, 3, 3]), but should be (4, 3, 3)."), gb::Error);
  CHECK_THROWS_WITH_AS(mha(x, x, x, gb::zeros({3, 3}) > 0.0),
                       doctest::Contains("expecting key_padding_mask shape of (2, 3), but got torch.Size([3, 3])"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(mha(gb::randn({3, 2, 5}), x, x),
                       doctest::Contains("was expecting embedding dimension of 4, but got 5"), gb::Error);
}

TEST_CASE("attention dropout applies in training only") {
  gb::manual_seed(5);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 1).dropout(0.5));
  gb::Tensor x = gb::randn({6, 1, 4});
  auto [o, w] = mha(x, x, x);
  auto rows = gbtest::values(w.sum({2}));
  bool any_off = false;
  for (double r : rows) any_off = any_off || std::fabs(r - 1) > 1e-3;
  CHECK(any_off);  // dropped and rescaled weights no longer sum to one
  mha->eval();
  auto [oe, we] = mha(x, x, x);
  gbtest::check_close(we.sum({2}), gb::ones({1, 6}), 1e-5, 1e-6);
}

TEST_CASE("MultiheadAttention gradients pass gradcheck in double, with masks") {
  gb::manual_seed(6);
  nn::MultiheadAttention mha(4, 2);
  mha->to(gb::kFloat64);
  {
    gb::NoGradGuard g;
    mha->in_proj_bias.normal_(0, 0.5);
    mha->out_proj->bias.normal_(0, 0.5);
  }
  gb::Tensor q = gb::randn({2, 2, 4}, gbtest::f64_grad()), kv = gb::randn({3, 2, 4}, gbtest::f64_grad());
  gb::Tensor kpm = gb::tensor(std::vector<bool>{false, false, true, false, false, false}).view({2, 3});
  gb::Tensor am = gb::randn({2, 3}, gb::kFloat64);
  auto f = [&](const gb::variable_list& in) {
    auto [o, w] = mha->forward(in[0], in[1], in[1], kpm, true, am, false);
    return gb::variable_list{o, w};
  };
  CHECK(gb::autograd::gradcheck(
      f, {q, kv, mha->in_proj_weight, mha->in_proj_bias, mha->out_proj->weight, mha->out_proj->bias}));
}

TEST_CASE("MultiheadAttention's raw forward attributes its allocations to the module") {
  nn::MultiheadAttention mha(4, 2);
  gb::Tensor x = gb::randn({3, 1, 4});
  CHECK(gbtest::allocation_modules([&] { mha->forward(x, x, x); }) == std::set<std::string>{"MultiheadAttention"});
}
