// tests/engine/ops/reduce_test.cpp — max/min, amax/amin, argmax/argmin, var/std/var_mean, norm, logsumexp,
// all/any, prod: hand-computed values (ties, NaN, keepdim, negative dims, 0-dim, dtypes), the parallel and
// strided kernel paths against naive loops, errors in PyTorch's words, and gradients (gradcheck in f64).
#include <limits>

#include "engine/ops/row_kernel_checks.h"
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::kInf;
using gbtest::kNaN;

namespace {
// x = [[1, 5, 3],
//      [5, -2, 0]]
gb::Tensor sample() { return gb::tensor({{1.0, 5.0, 3.0}, {5.0, -2.0, 0.0}}); }

bool one_input_gradcheck(const gb::Tensor& x, const std::function<gb::Tensor(const gb::Tensor&)>& f) {
  return gbtest::gradcheck1([&](const gb::variable_list& v) { return f(v[0]); }, {x});
}
bool one_input_gradgradcheck(const gb::Tensor& x, const std::function<gb::Tensor(const gb::Tensor&)>& f) {
  return gb::autograd::gradgradcheck([&](const gb::variable_list& v) { return gb::variable_list{f(v[0])}; }, {x});
}
}  // namespace

TEST_CASE("max and min over all elements") {
  auto x = sample();
  check_values(x.max(), {5});
  check_values(x.min(), {-2});
  CHECK(x.max().dim() == 0);
  CHECK(x.max().scalar_type() == gb::kFloat);
  CHECK(gb::arange(7).max().item<int64_t>() == 6);
  CHECK(gb::arange(7).max().scalar_type() == gb::kInt64);
  CHECK(gb::tensor({3, -9, 4}, gb::kInt32).min().item<int64_t>() == -9);
  CHECK(gb::tensor(std::vector<bool>{false, true, false}).max().item<bool>());
  CHECK_FALSE(gb::tensor(std::vector<bool>{false, true, false}).min().item<bool>());
  check_values(gb::tensor(2.5).max(), {2.5});  // 0-dim
  CHECK(gb::tensor({-kInf, -kInf}).max().item<double>() == -kInf);
  check_values(x.t().max(), {5});  // non-contiguous
  check_values(gb::tensor({1.5, -0.5}, gb::kHalf).max(), {1.5});
  check_values(gb::tensor({1.5, -0.5}, gb::kBFloat16).min(), {-0.5});
}

TEST_CASE("max and min propagate NaN like PyTorch") {
  auto x = gb::tensor({1.0, kNaN, 3.0, kNaN});
  CHECK(std::isnan(x.max().item<double>()));
  CHECK(std::isnan(x.min().item<double>()));
  CHECK(std::isnan(x.amax().item<double>()));
  auto [v, i] = x.max(0);
  CHECK(std::isnan(v.item<double>()));
  CHECK(i.item<int64_t>() == 1);  // the first NaN
  auto [v2, i2] = x.min(0);
  CHECK(std::isnan(v2.item<double>()));
  CHECK(i2.item<int64_t>() == 1);
  CHECK(x.argmax().item<int64_t>() == 1);
  CHECK(x.argmin().item<int64_t>() == 1);
  // NaN after the max and before it
  CHECK(gb::tensor({kNaN, 7.0}).argmax().item<int64_t>() == 0);
  CHECK(gb::tensor({7.0, kNaN}).argmax().item<int64_t>() == 1);
  // long runs take the vectorized loops: a NaN inside a vector lane and in the scalar tail
  for (auto dt : {gb::kFloat, gb::kFloat64, gb::kHalf}) {
    CAPTURE(dt);
    auto r = gb::arange(37).to(dt);
    check_values(r.max(), {36});
    check_values(r.neg().min(), {-36});
    check_values(r.amax({0}), {36});
    check_values(r.view({1, 37}).amin({1}), {0});
    check_values(r.neg().view({1, 37}).amin({1}), {-36});
    auto n1 = r.clone();
    n1.narrow(0, 13, 1).fill_(kNaN);
    CHECK(std::isnan(n1.max().item<double>()));
    CHECK(std::isnan(n1.min().item<double>()));
    auto n2 = r.clone();
    n2.narrow(0, 36, 1).fill_(kNaN);
    CHECK(std::isnan(n2.amax().item<double>()));
    CHECK(std::isnan(n2.amin().item<double>()));
    CHECK(n2.argmax().item<int64_t>() == 36);
  }
}

TEST_CASE("max and min over a dim return values and first indices") {
  auto x = sample();
  auto [v1, i1] = x.max(1);
  check_values(v1, {5, 5});
  check_values(i1, {1, 0});
  CHECK(i1.scalar_type() == gb::kInt64);
  auto [v0, i0] = x.max(0);
  check_values(v0, {5, 5, 3});
  check_values(i0, {1, 0, 0});
  auto [vn, in] = x.min(-1);
  check_values(vn, {1, -2});
  check_values(in, {0, 1});
  auto [vk, ik] = gb::max(x, 1, /*keepdim=*/true);
  CHECK(vk.sizes() == gb::IntArrayRef({2, 1}));
  CHECK(ik.sizes() == gb::IntArrayRef({2, 1}));
  check_values(ik, {1, 0});
  // ties pick the first index
  auto t = gb::tensor({2.0, 7.0, 7.0, 1.0, 1.0});
  CHECK(std::get<1>(t.max(0)).item<int64_t>() == 1);
  CHECK(std::get<1>(t.min(0)).item<int64_t>() == 3);
  // non-contiguous: the transpose's rows are x's columns
  auto [vt, it] = x.t().max(1);
  check_values(vt, {5, 5, 3});
  check_values(it, {1, 0, 0});
  // integers
  auto [vi, ii] = gb::tensor({{4, 9, 9}, {-1, -3, -2}}, gb::kInt64).max(1);
  CHECK(vi.scalar_type() == gb::kInt64);
  check_values(vi, {9, -1});
  check_values(ii, {1, 0});
  // 0-dim: dim 0 and -1 are accepted, the index is 0
  auto [vs, is] = gb::tensor(4.0).max(-1);
  CHECK(vs.dim() == 0);
  CHECK(is.dim() == 0);
  check_values(vs, {4});
  check_values(is, {0});
  // a 3-D middle dim, with a kept dim of size 0 elsewhere
  auto y = gb::arange(24).view({2, 3, 4}).to(gb::kFloat);
  auto [vm, im] = y.min(1);
  CHECK(vm.sizes() == gb::IntArrayRef({2, 4}));
  check_values(vm, {0, 1, 2, 3, 12, 13, 14, 15});
  check_values(im, {0, 0, 0, 0, 0, 0, 0, 0});
  auto [ve, ie] = gb::zeros({0, 3}).max(1);
  CHECK(ve.sizes() == gb::IntArrayRef({0}));
}

TEST_CASE("amax and amin over dim lists") {
  auto y = gb::arange(24).view({2, 3, 4}).to(gb::kFloat);
  check_values(y.amax({0, 2}), {15, 19, 23});
  check_values(y.amin({0, 2}), {0, 4, 8});
  check_values(y.amax({-3, -1}), {15, 19, 23});
  auto k = y.amax({-1}, true);
  CHECK(k.sizes() == gb::IntArrayRef({2, 3, 1}));
  check_values(k, {3, 7, 11, 15, 19, 23});
  check_values(y.amax(), {23});
  CHECK(y.amax().dim() == 0);
  CHECK(y.amin({}, true).sizes() == gb::IntArrayRef({1, 1, 1}));
  check_values(y.permute({2, 0, 1}).amax({1}), {12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23});
  check_values(gb::tensor({3, 8, -1}, gb::kInt32).amin(), {-1});
  check_values(gb::tensor(1.5).amax({0}), {1.5});
  CHECK_THROWS_WITH_AS(y.amax({0, -3}), doctest::Contains("amax: dim 0 appears multiple times"), gb::Error);
}

TEST_CASE("argmax and argmin, flattened or over a dim") {
  auto x = sample();
  CHECK(x.argmax().item<int64_t>() == 1);  // the first 5
  CHECK(x.argmin().item<int64_t>() == 4);
  CHECK(x.argmax().dim() == 0);
  check_values(x.argmax(1), {1, 0});
  check_values(x.argmin(0), {0, 1, 1});
  CHECK(x.argmax(0, true).sizes() == gb::IntArrayRef({1, 3}));
  CHECK(x.argmax(std::nullopt, true).sizes() == gb::IntArrayRef({1, 1}));
  // x.t() = [[1, 5], [5, -2], [3, 0]]: in logical order the first 5 is at flat index 1, in memory order at 2
  CHECK(x.t().argmax().item<int64_t>() == 1);
  CHECK(gb::tensor({2, 2, 1}).argmin().item<int64_t>() == 2);
  CHECK(gb::tensor(3.0).argmax().item<int64_t>() == 0);
  CHECK(gb::tensor(3.0).argmax(0).item<int64_t>() == 0);
}

TEST_CASE("var, std and var_mean with a correction") {
  auto x = gb::tensor({1.0, 2.0, 3.0, 4.0});
  check_values(x.var(), {5.0 / 3.0});
  check_values(gb::var(x, {}, 0), {1.25});
  check_values(x.std(), {std::sqrt(5.0 / 3.0)});
  check_values(gb::std(x, {}, 0), {std::sqrt(1.25)});
  check_values(gb::var(x, {}, 2), {2.5});
  auto m = gb::tensor({{1.0, 2.0}, {3.0, 5.0}});
  check_values(gb::var(m, {1}), {0.5, 2});
#if defined(__clang__)  // `{1}` picks the one-dim overload here; the point is that libtorch's spelling compiles
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wbraced-scalar-init"
#endif
  check_values(m.var({1}), {0.5, 2});  // a dim, as in libtorch, not var(unbiased=true)
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
  check_values(m.var(1), {0.5, 2});
  check_values(m.std(0), {std::sqrt(2.0), std::sqrt(4.5)});
  check_values(m.var(false), {8.75 / 4});
  check_values(gb::var(m, {0}), {2, 4.5});
  check_values(m.var({-1}, true, true), {0.5, 2});
  CHECK(m.var({-1}, true, true).sizes() == gb::IntArrayRef({2, 1}));
  check_values(gb::var(m.t(), {0}), {0.5, 2});  // non-contiguous
  check_values(m.std({0, 1}), {std::sqrt(8.75 / 3.0)});
  auto [v, mu] = gb::var_mean(m, {1}, 0);
  check_values(v, {0.25, 1});
  check_values(mu, {1.5, 4});
  // one element with Bessel's correction: 0/0, like PyTorch
  CHECK(std::isnan(gb::tensor({3.0}).var().item<double>()));
  CHECK(std::isnan(gb::tensor(3.0).var().item<double>()));
  check_values(gb::var(gb::tensor(3.0), {}, 0), {0});
  check_values(gb::tensor({1.0, 3.0}, gb::kHalf).var(), {2});
  CHECK(gb::tensor({1.0, 3.0}, gb::kHalf).var().scalar_type() == gb::kHalf);
  // a large offset does not cancel catastrophically (Welford)
  check_values(gb::tensor({1e8 + 1, 1e8 + 2, 1e8 + 3}, gb::kFloat64).var(), {1.0}, 1e-9);
}

TEST_CASE("norm for p = 0, 1, 2, 3, inf and -inf") {
  auto x = gb::tensor({3.0, -4.0, 0.0});
  check_values(x.norm(), {5});
  check_values(x.norm(1), {7});
  check_values(x.norm(3), {std::cbrt(91.0)});
  check_values(x.norm(0.5), {std::pow(std::sqrt(3.0) + 2.0, 2.0)});
  check_values(x.norm(kInf), {4});
  check_values(x.norm(-kInf), {0});
  check_values(x.norm(0), {2});
  auto m = gb::tensor({{3.0, 4.0}, {-6.0, 8.0}});
  check_values(m.norm(2, {1}), {5, 10});
  check_values(m.norm(1, {0}), {9, 12});
  CHECK(m.norm(2, {-1}, true).sizes() == gb::IntArrayRef({2, 1}));
  check_values(m.t().norm(2, {0}), {5, 10});
  check_values(gb::tensor(-2.0).norm(), {2});
  check_values(gb::zeros({0}).norm(), {0});
  check_values(gb::tensor({3.0, 4.0}, gb::kBFloat16).norm(), {5});
}

TEST_CASE("logsumexp is stable") {
  auto x = gb::tensor({1.0, 2.0, 3.0});
  check_values(gb::logsumexp(x, {0}), {3.0 + std::log(1.0 + std::exp(-1.0) + std::exp(-2.0))});
  check_values(gb::logsumexp(gb::tensor({1000.0, 1000.0}), {0}), {1000.0 + std::log(2.0)}, 1e-3);
  check_values(gb::logsumexp(gb::tensor({-1000.0, -1000.0}), {0}), {-1000.0 + std::log(2.0)}, 1e-3);
  CHECK(gb::logsumexp(gb::tensor({-kInf, -kInf}), {0}).item<double>() == -kInf);
  check_values(gb::logsumexp(gb::tensor({-kInf, 0.0}), {0}), {0});
  CHECK(gb::logsumexp(gb::tensor({kInf, 1.0}), {0}).item<double>() == kInf);
  CHECK(std::isnan(gb::logsumexp(gb::tensor({1.0, kNaN, 2.0}), {0}).item<double>()));
  auto m = gb::tensor({{0.0, 0.0}, {1.0, 1.0}});
  check_values(gb::logsumexp(m, {1}), {std::log(2.0), 1.0 + std::log(2.0)});
  check_values(gb::logsumexp(m, {0}, true), {std::log(1.0 + std::exp(1.0)), std::log(1.0 + std::exp(1.0))});
  CHECK(gb::logsumexp(m, {0}, true).sizes() == gb::IntArrayRef({1, 2}));
  check_values(gb::logsumexp(m, {}), {std::log(2.0 + 2.0 * std::exp(1.0))});
  auto i = gb::logsumexp(gb::tensor({0, 0}), {0});
  CHECK(i.scalar_type() == gb::kFloat);
  check_values(i, {std::log(2.0)});
  check_values(gb::logsumexp(gb::tensor(2.0), {0}), {2});
}

TEST_CASE("all, any and prod") {
  auto x = gb::tensor({1.0, 0.0, 2.0});
  CHECK_FALSE(x.all().item<bool>());
  CHECK(x.any().item<bool>());
  CHECK(x.all().scalar_type() == gb::kBool);
  CHECK(x.any().dim() == 0);
  CHECK(gb::ones({2, 3}, gb::kBool).all().item<bool>());
  CHECK_FALSE(gb::zeros({2, 3}, gb::kInt32).any().item<bool>());
  CHECK(gb::zeros({0}).all().item<bool>());  // empty: the identities
  CHECK_FALSE(gb::zeros({0}).any().item<bool>());
  CHECK(gb::tensor({kNaN}).all().item<bool>());  // NaN is non-zero
  check_values(gb::prod(gb::tensor({1.0, 2.0, 3.0, 4.0})), {24});
  auto pi = gb::prod(gb::tensor({2, 3, -4}));
  CHECK(pi.scalar_type() == gb::kInt64);
  CHECK(pi.item<int64_t>() == -24);
  CHECK(gb::prod(gb::tensor({2, 3}, gb::kInt32)).scalar_type() == gb::kInt64);
  check_values(gb::prod(gb::zeros({0})), {1});
  check_values(gb::prod(gb::tensor({{1.0, 2.0}, {3.0, 4.0}}).t()), {24});
  check_values(gb::prod(gb::tensor(5.0)), {5});
}

TEST_CASE("reductions name the op, the dims and the shapes in their errors") {
  auto x = sample();
  CHECK_THROWS_WITH_AS(x.max(2),
                       doctest::Contains("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(x.argmin(-3), doctest::Contains("argmin: Dimension out of range"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::var(x, {5}), doctest::Contains("var: Dimension out of range"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::zeros({0}).max(),
                       doctest::Contains("max(): Expected reduction dim to be specified for input.numel() == 0"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::zeros({2, 0}).min(1),
                       doctest::Contains("min(): Expected reduction dim 1 to have non-zero size"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::zeros({2, 0}).amax({-1}),
                       doctest::Contains("amax(): Expected reduction dim 1 to have non-zero size"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::zeros({0, 2}).argmax(),
                       doctest::Contains("argmax(): Expected reduction dim to be specified"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::arange(4).var(), doctest::Contains("std and var only support floating point"),
                       gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::arange(4).std(), doctest::Contains("got Long"), gb::TypeError);
  CHECK_THROWS_WITH_AS(
      gb::arange(4).norm(),
      doctest::Contains("linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
      gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::zeros({0}).norm(kInf), doctest::Contains("does not have an identity"), gb::IndexError);
  CHECK_THROWS_WITH_AS(x.norm(-1), doctest::Contains("norm: p = -1 is not supported"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::amax(gb::Tensor(), {}), doctest::Contains("amax: argument 'input' is an undefined tensor"),
                       gb::Error);
}

TEST_CASE("large and strided inputs take the fast paths and agree with naive loops") {
  gb::manual_seed(3);
  // one long contiguous run: split across threads, partial results combined in order
  auto big = gb::randn({200003}, gb::kFloat64);
  auto bv = gbtest::values(big);
  double mx = -kInf, mn = kInf, sum = 0, sq = 0, lse_max = -kInf;
  int64_t imx = 0;
  for (size_t i = 0; i < bv.size(); ++i) {
    if (bv[i] > mx) mx = bv[i], imx = int64_t(i);
    mn = std::min(mn, bv[i]);
    sum += bv[i];
    sq += bv[i] * bv[i];
  }
  lse_max = mx;
  double lse = 0, mean = sum / double(bv.size()), m2 = 0;
  for (double v : bv) lse += std::exp(v - lse_max), m2 += (v - mean) * (v - mean);
  check_values(big.max(), {mx});
  check_values(big.min(), {mn});
  CHECK(big.argmax().item<int64_t>() == imx);
  check_values(big.norm(), {std::sqrt(sq)}, 1e-9);
  check_values(big.var(), {m2 / double(bv.size() - 1)}, 1e-9);
  check_values(gb::logsumexp(big, {0}), {lse_max + std::log(lse)}, 1e-9);
  // a tie planted in both halves: the first one wins after combining
  auto tied = gb::zeros({200000});
  tied.narrow(0, 150000, 1).fill_(9);
  tied.narrow(0, 50000, 1).fill_(9);
  CHECK(tied.argmax().item<int64_t>() == 50000);

  // rows (last dim), columns (first dim) and a strided walk, against naive loops over the values
  auto m = gb::randn({301, 257}, gb::kFloat64);
  auto mv = gbtest::values(m);
  std::vector<double> row_max(301, -kInf), col_max(257, -kInf), col_var(257, 0), col_mean(257, 0);
  std::vector<double> row_arg(301, 0), col_arg(257, 0);
  for (int64_t i = 0; i < 301; ++i)
    for (int64_t j = 0; j < 257; ++j) {
      double v = mv[size_t(i * 257 + j)];
      if (v > row_max[size_t(i)]) row_max[size_t(i)] = v, row_arg[size_t(i)] = double(j);
      if (v > col_max[size_t(j)]) col_max[size_t(j)] = v, col_arg[size_t(j)] = double(i);
      col_mean[size_t(j)] += v / 301.0;
    }
  for (int64_t i = 0; i < 301; ++i)
    for (int64_t j = 0; j < 257; ++j) {
      double d = mv[size_t(i * 257 + j)] - col_mean[size_t(j)];
      col_var[size_t(j)] += d * d / 300.0;
    }
  check_values(m.amax({1}), row_max);  // rows
  check_values(std::get<1>(m.max(1)), row_arg);
  check_values(m.amax({0}), col_max);  // columns
  check_values(std::get<1>(m.max(0)), col_arg);
  check_values(gb::var(m, {0}), col_var, 1e-9);
  check_values(m.t().amax({0}), row_max);  // a transpose's columns are rows in memory
  check_values(m.t().contiguous().amax({1}), col_max);
  check_values(gb::var(m.t(), {1}), col_var, 1e-9);  // and its rows are columns
  check_values(std::get<1>(m.t().max(1)), col_arg);
  // every other column of a 3-D view, reduced over two non-adjacent dims
  auto c = gb::randn({6, 5, 8}, gb::kFloat64).slice(2, 0, 8, 2);
  auto c_ref = c.contiguous();
  check_close(c.amax({0, 2}), c_ref.amax({2}).amax({0}));
  check_close(c.amax({0, 2}), c_ref.amax({0, 2}));
  check_close(c.var({0, 2}), c_ref.var({0, 2}));
  check_close(c.norm(3, {0, 2}, true), c_ref.norm(3, {0, 2}, true));
  check_close(gb::logsumexp(c, {0, 2}), gb::logsumexp(c_ref, {0, 2}));
}

TEST_CASE("gradient of max and min over a dim flows to the index picked") {
  auto x = gb::tensor({{1.0, 5.0, 5.0}, {2.0, 2.0, -1.0}}, gbtest::f64_grad());
  auto [v, i] = x.max(1);
  CHECK(v.grad_fn()->name() == "MaxBackward0");
  CHECK_FALSE(i.requires_grad());
  v.sum().backward();
  check_values(x.grad(), {0, 1, 0, 1, 0, 0});  // the first of each tie
  auto y = gb::tensor({{1.0, 5.0, 5.0}, {2.0, 2.0, -1.0}}, gbtest::f64_grad());
  auto [vm, im] = gb::min(y, 0, true);
  CHECK(vm.grad_fn()->name() == "MinBackward0");
  (vm * gb::tensor({1.0, 2.0, 3.0}, gb::kFloat64)).sum().backward();
  check_values(y.grad(), {1, 0, 0, 0, 2, 3});
}

TEST_CASE("gradients of max/min over all and amax/amin split evenly among ties") {
  auto x = gb::tensor({{1.0, 5.0}, {5.0, 2.0}}, gbtest::f64_grad());
  auto mx = x.max();
  CHECK(mx.grad_fn()->name() == "MaxBackward1");
  mx.backward();
  check_values(x.grad(), {0, 0.5, 0.5, 0});
  auto y = gb::tensor({{1.0, 1.0, 3.0}, {4.0, 4.0, 4.0}}, gbtest::f64_grad());
  auto a = y.amin({1});
  CHECK(a.grad_fn()->name() == "AminBackward0");
  a.sum().backward();
  check_values(y.grad(), {0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3});
  auto z = gb::tensor({{1.0, 1.0, 3.0}, {4.0, 4.0, 4.0}}, gbtest::f64_grad());
  auto b = z.amax({0, 1});
  CHECK(b.grad_fn()->name() == "AmaxBackward0");
  b.backward();
  check_values(z.grad(), {0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3});
}

TEST_CASE("reduction gradients match finite differences") {
  gb::manual_seed(7);
  auto x = gb::randn({3, 4, 5}, gbtest::f64_grad());
  auto nc = gb::randn({5, 4, 3}, gbtest::f64_grad());  // used through a permute: non-contiguous
  using F = std::function<gb::Tensor(const gb::Tensor&)>;
  std::vector<std::pair<const char*, F>> cases = {
      {"max", [](const gb::Tensor& a) { return a.max(); }},
      {"min", [](const gb::Tensor& a) { return a.min(); }},
      {"max(dim)", [](const gb::Tensor& a) { return std::get<0>(a.max(1)); }},
      {"min(dim, keepdim)", [](const gb::Tensor& a) { return std::get<0>(a.min(-1, true)); }},
      {"amax",
       [](const gb::Tensor& a) {
         return a.amax({0, 2});
       }},
      {"amin", [](const gb::Tensor& a) { return a.amin({1}, true); }},
      {"var", [](const gb::Tensor& a) { return gb::var(a, {1}); }},
      {"var all", [](const gb::Tensor& a) { return gb::var(a, {}, 0); }},
      {"std",
       [](const gb::Tensor& a) {
         return a.std({0, 2}, true, true);
       }},
      {"var_mean",
       [](const gb::Tensor& a) {
         auto [v, m] = gb::var_mean(a, {2}, 1);
         return v + m * 3.0;
       }},
      {"var_mean (mean only)", [](const gb::Tensor& a) { return std::get<1>(gb::var_mean(a, {0})); }},
      {"norm 2", [](const gb::Tensor& a) { return a.norm(); }},
      {"norm 2 dims", [](const gb::Tensor& a) { return a.norm(2, {1}, true); }},
      {"norm 1", [](const gb::Tensor& a) { return a.norm(1, {2}); }},
      {"norm 3", [](const gb::Tensor& a) { return a.norm(3, {0}); }},
      {"norm 1.5", [](const gb::Tensor& a) { return a.norm(1.5, {-1}); }},
      {"norm inf", [](const gb::Tensor& a) { return a.norm(kInf, {1}); }},
      {"logsumexp", [](const gb::Tensor& a) { return gb::logsumexp(a, {1}); }},
      {"logsumexp all keepdim", [](const gb::Tensor& a) { return gb::logsumexp(a, {}, true); }},
      {"prod", [](const gb::Tensor& a) { return gb::prod(a.narrow(0, 0, 1).narrow(1, 0, 2)); }},
  };
  for (auto& c : cases) {  // no structured binding: CAPTURE and the lambda capture these (Clang 14)
    const auto& name = c.first;
    const auto& f = c.second;
    CAPTURE(name);
    CHECK(one_input_gradcheck(x, f));
    CHECK(one_input_gradcheck(nc, [&](const gb::Tensor& a) { return f(a.permute({2, 1, 0})); }));
  }
  auto s = gb::randn({}, gbtest::f64_grad());  // 0-dim
  CHECK(one_input_gradcheck(s, [](const gb::Tensor& a) { return std::get<0>(a.max(0)); }));
  CHECK(one_input_gradcheck(s, [](const gb::Tensor& a) { return a.norm(); }));
  CHECK(one_input_gradcheck(s, [](const gb::Tensor& a) { return gb::var(a, {}, 0); }));
}

TEST_CASE("names and special points of the reduction gradients") {
  auto x = gb::tensor({3.0, -4.0}, gbtest::f64_grad());
  CHECK(x.var().grad_fn()->name() == "VarBackward0");
  CHECK(x.std().grad_fn()->name() == "StdBackward0");
  CHECK(std::get<0>(gb::var_mean(x)).grad_fn()->name() == "VarMeanBackward0");
  CHECK(x.norm(2, {0}).grad_fn()->name() == "NormBackward1");
  CHECK(gb::logsumexp(x, {0}).grad_fn()->name() == "LogsumexpBackward0");
  CHECK(gb::prod(x).grad_fn()->name() == "ProdBackward0");
  CHECK_FALSE(x.argmax().requires_grad());
  CHECK_FALSE(x.all().requires_grad());
  // norm 2: x / |x|, and 0 at the origin
  x.norm().backward();
  check_values(x.grad(), {0.6, -0.8});
  auto z = gb::zeros({3}, gbtest::f64_grad());
  z.norm().backward();
  check_values(z.grad(), {0, 0, 0});
  // std at a constant input: 0, not NaN
  auto c = gb::ones({4}, gbtest::f64_grad());
  c.std().backward();
  check_values(c.grad(), {0, 0, 0, 0});
  // prod with one zero: only the zero gets the product of the rest; with two zeros everything is 0
  auto p1 = gb::tensor({2.0, 0.0, 3.0}, gbtest::f64_grad());
  gb::prod(p1).backward();
  check_values(p1.grad(), {0, 6, 0});
  auto p2 = gb::tensor({0.0, 5.0, 0.0}, gbtest::f64_grad());
  gb::prod(p2).backward();
  check_values(p2.grad(), {0, 0, 0});
  auto p0 = gb::tensor({2.0, 4.0, -1.0}, gbtest::f64_grad());
  gb::prod(p0).backward();
  check_values(p0.grad(), {-4, -2, 8});
  // var: 2 (x - mean) / (n - correction)
  auto v = gb::tensor({1.0, 2.0, 6.0}, gbtest::f64_grad());
  v.var().backward();
  check_values(v.grad(), {-2, -1, 3});
}

TEST_CASE("second derivatives of var, std, norm, logsumexp and prod") {
  gb::manual_seed(11);
  auto x = gb::randn({3, 4}, gbtest::f64_grad());
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return gb::var(a, {1}); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return gb::var(a.t(), {}, 0); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return gb::std(a, {0}); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) {
    auto [v, m] = gb::var_mean(a, {1});
    return v * m;
  }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return a.norm(); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return a.norm(2, {1}, true); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return a.norm(3, {0}); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return gb::logsumexp(a, {1}); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return gb::prod(a.narrow(1, 0, 3)); }));
  CHECK(one_input_gradgradcheck(x, [](const gb::Tensor& a) { return a.amax({1}); }));
}

// The contiguous-run folds (amax/amin, max/min over all, norm, logsumexp, prod, all/any) are compiled per instruction
// set; their lanes fix the order of every sum, so each set gives the baseline's bits. Rows with a tail (1000 = 125 x
// 8), NaN and +-inf in some rows (the careful paths), float and double, one long row (split in chunks) too.
TEST_CASE("reductions over contiguous runs and over columns give the same bits under every instruction set") {
  gb::manual_seed(31);
  for (gb::ScalarType dt : {gb::kFloat, gb::kDouble}) {
    auto x = gb::randn({37, 1000}, dt) * 3.0;
    x.index_put_({2, 5}, std::numeric_limits<double>::quiet_NaN());
    x.index_put_({3, 7}, std::numeric_limits<double>::infinity());
    x.index_put_({4, 9}, -std::numeric_limits<double>::infinity());
    auto pos = x.abs() * 0.002 + 0.999;  // prod of 1000 factors near 1: finite
    auto big = gb::randn({300000}, dt);
    gbtest::check_same_bits_on_every_isa([&] {
      gbtest::Values out{
          gbtest::values(x.amax({1})), gbtest::values(x.amin({1})), gbtest::values(gb::logsumexp(x, {1})),
          gbtest::values(x.norm(2, {1})), gbtest::values(x.norm(1, {1})), gbtest::values(x.norm(3, {1})),
          gbtest::values(pos.prod(1)), gbtest::values((x > 0).all()), gbtest::values(big.max()),
          gbtest::values(gb::logsumexp(big, {0})), gbtest::values(big.norm(2, {0})), gbtest::values(x.var(1)),
          gbtest::values(x.std({1}, 0)), gbtest::values(big.var()), gbtest::values(std::get<1>(gb::var_mean(x, {1}))),
          // columns (the outputs' dim contiguous): blocks of outputs folded together per set
          gbtest::values(x.amax({0})), gbtest::values(x.amin({0})), gbtest::values(x.var(0)),
          gbtest::values(x.norm(2, {0})), gbtest::values(gb::logsumexp(x, {0})), gbtest::values(std::get<1>(x.max(0))),
          gbtest::values(pos.prod(0))};
      for (auto& v : out)  // NaN is NaN on every set, but never == itself: compare a marker in its place
        for (double& e : v)
          if (e != e) e = -12345.5;
      return out;
    });
  }
}

// max/min over a contiguous dim fold 8 lanes (each its extreme and first index) and combine them: the value and the
// first index of it must be the sequential loop's, with ties spread over lanes, NaN anywhere (the first NaN wins), a
// tail after the lanes, and on every instruction set.
TEST_CASE("max and min over a contiguous dim give the sequential loop's first index, with ties, NaN and tails") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto reference = [](const std::vector<double>& row, bool is_max) {
    int64_t best = 0;
    for (int64_t k = 1; k < int64_t(row.size()); ++k) {
      const double x = row[size_t(k)], v = row[size_t(best)];
      if (v != v) break;
      if (x != x || (is_max ? x > v : x < v)) best = k;
    }
    return best;
  };
  std::vector<std::vector<double>> rows;
  for (int64_t n : {16, 17, 23, 64, 100}) {
    std::vector<double> r(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) r[size_t(k)] = double((k * 7) % 5);  // 4 at k = 2, 7, 12, ...: ties over lanes
    rows.push_back(r);
    r[size_t(n - 1)] = 9;  // the extreme in the tail
    rows.push_back(r);
    r[size_t(n / 2)] = nan;  // a NaN mid-row, then one earlier: the first wins
    rows.push_back(r);
    r[3] = nan;
    rows.push_back(r);
  }
  // the extreme (or NaN) at 10 and 5: lane 2 holds 10 and is combined before lane 5 holding 5, the first
  for (double top : {1.0, nan}) {
    std::vector<double> r(20, 0.0);
    r[10] = r[5] = top;
    rows.push_back(r);
  }
  for (gb::ScalarType dt : {gb::kFloat, gb::kDouble, gb::kInt64})
    for (const auto& r : rows) {
      const bool has_nan = std::any_of(r.begin(), r.end(), [](double v) { return v != v; });
      if (dt == gb::kInt64 && has_nan) continue;
      CAPTURE(r.size());
      auto x = gb::tensor(gb::ArrayRef<double>(r)).to(dt).view({1, int64_t(r.size())});
      for (bool is_max : {true, false}) {
        gbtest::check_same_bits_on_every_isa([&] {
          auto [v, i] = is_max ? x.max(1) : x.min(1);
          CHECK(i.item<int64_t>() == reference(r, is_max));
          return gbtest::Values{gbtest::values(i.to(gb::kDouble))};
        });
        CHECK(x.argmax(1).item<int64_t>() == reference(r, true));
      }
    }
  auto z = gb::tensor({0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f,
                       -0.0f, -0.0f})
               .view({1, 17});
  auto [zv, zi] = z.max(1);
  CHECK(zi.item<int64_t>() == 0);  // -0 == +0: a tie, the first index
  CHECK_FALSE(std::signbit(zv.item<float>()));
}

TEST_CASE("var over contiguous runs: two passes in double, exact to float rounding even far from zero") {
  gb::manual_seed(41);
  auto x = gb::randn({3, 100003}) + 1000.0;  // mean 1000, variance 1: float sums of squares would lose it all
  auto xd = x.to(gb::kDouble);
  for (int64_t r = 0; r < 3; ++r) {
    const auto v = gbtest::values(xd.select(0, r));
    double mean = 0, m2 = 0;
    for (double e : v) mean += e;
    mean /= double(v.size());
    for (double e : v) m2 += (e - mean) * (e - mean);
    CHECK(double(x.var(1).data_ptr<float>()[r]) == doctest::Approx(m2 / double(v.size() - 1)).epsilon(1e-6));
    CHECK(double(std::get<1>(gb::var_mean(x, {1})).data_ptr<float>()[r]) == doctest::Approx(mean).epsilon(1e-7));
  }
  // one run over the whole tensor, split over the threads and combined
  CHECK(x.var().item<double>() == doctest::Approx(xd.var().item<double>()).epsilon(1e-6));
  CHECK(std::isnan(gb::var(gb::ones({5}) * std::numeric_limits<double>::infinity()).item<float>()));  // as PyTorch
}
