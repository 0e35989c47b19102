// tests/engine/ops/sort_test.cpp — sort, argsort, topk: values and indices along any dim, stable ties in both
// directions, NaN ordering, integer and bool inputs, 0-dim and empty inputs, gradients (gradcheck, gradgradcheck),
// the meta device, and the errors.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("sort: ascending and descending along any dim, stable on ties") {
  auto x = gb::tensor({{3.0, 1.0, 2.0, 1.0}, {0.0, -1.0, 5.0, 0.0}});
  auto [v, i] = gb::sort(x);
  check_values(v, {1, 1, 2, 3, -1, 0, 0, 5});
  check_values(i, {1, 3, 2, 0, 1, 0, 3, 2});
  CHECK(i.scalar_type() == gb::kInt64);
  auto [vd, id] = x.sort(1, true);
  check_values(vd, {3, 2, 1, 1, 5, 0, 0, -1});
  check_values(id, {0, 2, 1, 3, 2, 0, 3, 1});  // equal elements keep their order descending too
  auto [v0, i0] = x.sort(0);
  check_values(v0, {0, -1, 2, 0, 3, 1, 5, 1});
  check_values(i0, {1, 1, 0, 1, 0, 0, 1, 0});
  auto [vs, is] = x.sort(/*stable=*/true, -1, false);
  CHECK(gb::equal(vs, v));
  CHECK(gb::equal(is, i));
  CHECK(gb::equal(x.argsort(1, true), id));
  CHECK(gb::equal(gb::argsort(x, 0), i0));
  // a transposed (non-contiguous) input
  auto [vt, it] = x.t().sort(0);
  check_values(vt, {1, -1, 1, 0, 2, 0, 3, 5});
  check_values(it, {1, 1, 3, 0, 2, 3, 0, 2});
}

TEST_CASE("sort: NaN is larger than every number; integers and bool; 0-dim and empty") {
  const double nan = gbtest::kNaN, inf = gbtest::kInf;
  auto x = gb::tensor({2.0, nan, -inf, 1.0, nan});
  auto [v, i] = x.sort();
  check_values(i, {2, 3, 0, 1, 4});
  auto [vd, id] = x.sort(0, true);
  check_values(id, {1, 4, 0, 3, 2});
  CHECK(std::isnan(vd[0].item<double>()));
  auto xi = gb::tensor({5, -2, 7, 0}, gb::kInt64);
  auto [vi, ii] = xi.sort(0, true);
  CHECK(vi.scalar_type() == gb::kInt64);
  check_values(vi, {7, 5, 0, -2});
  auto [vb, ib] = (xi > 0).sort();
  check_values(vb, {0, 0, 1, 1});
  check_values(ib, {1, 3, 0, 2});
  auto s = gb::tensor({4.0}).reshape({});
  auto [v0, i0] = s.sort();
  CHECK(v0.dim() == 0);
  CHECK(v0.item<double>() == 4);
  CHECK(i0.item<int64_t>() == 0);
  auto [ve, ie] = gb::zeros({2, 0}).sort(1);
  CHECK(ve.sizes() == gb::IntArrayRef({2, 0}));
  CHECK(ie.sizes() == gb::IntArrayRef({2, 0}));
}

TEST_CASE("topk: largest or smallest, sorted or in order, ties, k = 0 and k = n") {
  auto x = gb::tensor({{1.0, 5.0, 3.0, 5.0, 2.0}, {0.0, -1.0, 4.0, 2.0, 8.0}});
  auto [v, i] = x.topk(2);
  check_values(v, {5, 5, 8, 4});
  check_values(i, {1, 3, 4, 2});
  auto [vs, is] = gb::topk(x, 3, 1, /*largest=*/false);
  check_values(vs, {1, 2, 3, -1, 0, 2});
  check_values(is, {0, 4, 2, 1, 0, 3});
  auto [vu, iu] = gb::topk(x, 3, 1, true, /*sorted=*/false);  // in their order along the dim
  check_values(vu, {5, 3, 5, 4, 2, 8});
  check_values(iu, {1, 2, 3, 2, 3, 4});
  auto [v0, i0] = x.topk(2, 0);
  check_values(v0, {1, 5, 4, 5, 8, 0, -1, 3, 2, 2});
  CHECK(std::get<0>(x.topk(0)).sizes() == gb::IntArrayRef({2, 0}));
  CHECK(std::get<0>(x.topk(5)).sizes() == gb::IntArrayRef({2, 5}));
  auto [vt, it] = gb::tensor({3.0}).reshape({}).topk(1);
  CHECK(vt.dim() == 0);
  CHECK(it.item<int64_t>() == 0);
}

TEST_CASE("sort and topk gradients flow to where each value came from") {
  auto x = gb::tensor({3.0, 1.0, 2.0}, gbtest::f64_grad());
  auto [v, i] = x.sort();
  CHECK(v.grad_fn()->name() == "SortBackward0");
  CHECK_FALSE(i.requires_grad());
  (v * gb::tensor({1.0, 10.0, 100.0}, gb::kFloat64)).sum().backward();
  check_values(x.grad(), {100, 1, 10});
  x.mutable_grad() = gb::Tensor();
  auto [t, ti] = x.topk(2);
  CHECK(t.grad_fn()->name() == "TopkBackward0");
  (t * gb::tensor({1.0, 10.0}, gb::kFloat64)).sum().backward();
  check_values(x.grad(), {1, 0, 10});
  gb::manual_seed(41);
  auto a = gb::randn({3, 5, 2}, gbtest::f64_grad());
  for (int64_t d : {0, 1, -1}) {
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& in) { return std::get<0>(in[0].sort(d, true)); }, {a}));
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& in) { return std::get<0>(in[0].topk(2, d, false)); }, {a}));
    CHECK(gb::autograd::gradgradcheck(
        [&](const gb::variable_list& in) { return gb::variable_list{std::get<0>(in[0].topk(2, d))}; }, {a}));
  }
}

TEST_CASE("sort and topk on the meta device: shapes, no values") {
  auto m = gb::empty({4, 6}, gb::TensorOptions().device(gb::kMeta));
  auto [v, i] = m.sort(1);
  CHECK(v.is_meta());
  CHECK(i.sizes() == gb::IntArrayRef({4, 6}));
  auto [tv, ti] = m.topk(3, 0);
  CHECK(tv.sizes() == gb::IntArrayRef({3, 6}));
  CHECK(ti.scalar_type() == gb::kInt64);
}

TEST_CASE("sort and topk errors") {
  auto x = gb::zeros({2, 3});
  CHECK_THROWS_WITH_AS(x.topk(4),
                       "selected index k out of range: topk got k = 4 for dimension 1 of size 3 (input "
                       "shape [2, 3]); pass 0 <= k <= 3.",
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(x.topk(-1, 0), doctest::Contains("selected index k out of range"), gb::IndexError);
  CHECK_THROWS_WITH_AS(x.sort(2), "sort: Dimension out of range (expected to be in range of [-2, 1], but got 2)",
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(x.topk(1, -3), doctest::Contains("topk: Dimension out of range"), gb::IndexError);
}
