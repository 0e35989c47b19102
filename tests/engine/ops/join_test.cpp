// tests/engine/ops/join_test.cpp — cat, stack (copies with CatBackward0/StackBackward0) and split, split_with_sizes,
// chunk, unbind (views sharing storage): values, PyTorch's edge rules, errors and gradients.
#include "support/check.h"

using gbtest::check_values;

namespace {
std::vector<std::vector<int64_t>> shapes_of(const std::vector<gb::Tensor>& ts) {
  std::vector<std::vector<int64_t>> r;
  for (const auto& t : ts) r.push_back(t.sizes().vec());
  return r;
}
using Shapes = std::vector<std::vector<int64_t>>;
}  // namespace

TEST_CASE("cat joins along any dim") {
  auto a = gb::arange(6).view({2, 3});
  auto b = gb::arange(6, 10).view({2, 2});
  auto c = gb::cat({a, b}, 1);
  CHECK(c.sizes() == gb::IntArrayRef({2, 5}));
  check_values(c, {0, 1, 2, 6, 7, 3, 4, 5, 8, 9});
  CHECK(c.scalar_type() == gb::kInt64);
  check_values(gb::cat({a, b}, -1), {0, 1, 2, 6, 7, 3, 4, 5, 8, 9});
  auto r = gb::cat({a, a.narrow(0, 1, 1), a}, 0);
  CHECK(r.sizes() == gb::IntArrayRef({5, 3}));
  check_values(r, {0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  // non-contiguous inputs
  auto t = gb::cat({a.t(), a.t()}, 1);
  CHECK(t.sizes() == gb::IntArrayRef({3, 4}));
  check_values(t, {0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5});
  // a single input is copied
  auto one = gb::cat({a});
  CHECK(one.storage() != a.storage());
  check_values(one, {0, 1, 2, 3, 4, 5});
}

TEST_CASE("cat promotes dtypes and skips legacy 1-D empty tensors") {
  auto i = gb::arange(2);
  auto f = gb::tensor({0.5});
  auto d = gb::tensor({1.5}, gb::kFloat64);
  CHECK(gb::cat({i, f}).scalar_type() == gb::kFloat);
  CHECK(gb::cat({f, d}).scalar_type() == gb::kFloat64);
  check_values(gb::cat({i, f, d}), {0, 1, 0.5, 1.5});
  auto m = gb::ones({2, 2}, gb::kFloat);
  auto e = gb::empty({0}, gb::kFloat);
  auto r = gb::cat({e, m, e, m}, 1);  // the [0]-shaped tensors are skipped whatever their rank
  CHECK(r.sizes() == gb::IntArrayRef({2, 4}));
  CHECK(gb::cat({e, e}).sizes() == gb::IntArrayRef({0}));
  CHECK(gb::cat({gb::empty({0, 3}, gb::kFloat), gb::ones({2, 3}, gb::kFloat)}).sizes() == gb::IntArrayRef({2, 3}));
}

TEST_CASE("cat errors name the tensor and the shapes") {
  auto a = gb::ones({2, 3}, gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::cat({a, gb::ones({3, 3}, gb::kFloat)}, 1),
                       doctest::Contains("Sizes of tensors must match except in dimension 1. Expected size 2 but got "
                                         "size 3 for tensor number 1 in the list"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::cat({a, a, gb::ones({2, 4}, gb::kFloat)}, 0), doctest::Contains("tensor number 2"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::cat({a, gb::ones({3, 3}, gb::kFloat)}, 1), doctest::Contains("[2, 3] and [3, 3]"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::cat({a, gb::ones({2, 3, 1}, gb::kFloat)}),
                       doctest::Contains("Tensors must have same number of dimensions: got 2 and 3"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::cat(gb::TensorList{}), doctest::Contains("expected a non-empty list of Tensors"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::cat({a, gb::ones({}, gb::kFloat)}),
                       doctest::Contains("zero-dimensional tensor (at position 1) cannot be concatenated"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::cat({a, a}, 2), doctest::Contains("Dimension out of range"), gb::IndexError);
}

TEST_CASE("stack adds a dim") {
  auto a = gb::tensor({1.0, 2.0, 3.0});
  auto b = gb::tensor({4.0, 5.0, 6.0});
  auto s0 = gb::stack({a, b});
  CHECK(s0.sizes() == gb::IntArrayRef({2, 3}));
  check_values(s0, {1, 2, 3, 4, 5, 6});
  auto s1 = gb::stack({a, b}, -1);
  CHECK(s1.sizes() == gb::IntArrayRef({3, 2}));
  check_values(s1, {1, 4, 2, 5, 3, 6});
  auto m = gb::arange(6).view({2, 3});
  auto s2 = gb::stack({m, m.t().t(), m}, 1);
  CHECK(s2.sizes() == gb::IntArrayRef({2, 3, 3}));
  check_values(s2.select(1, 2), {0, 1, 2, 3, 4, 5});
  CHECK(gb::stack({gb::arange(2), a.narrow(0, 0, 2)}).scalar_type() == gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::stack({a, gb::ones({4}, gb::kFloat)}),
                       doctest::Contains("stack expects each tensor to be equal size, but got [3] at entry 0 and [4] at "
                                         "entry 1"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::stack(gb::TensorList{}), doctest::Contains("stack expects a non-empty TensorList"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::stack({a, b}, 3), doctest::Contains("Dimension out of range"), gb::IndexError);
}

TEST_CASE("split, split_with_sizes, chunk and unbind return views") {
  auto x = gb::arange(10).view({5, 2});
  auto parts = x.split(2);
  CHECK(shapes_of(parts) == Shapes{{2, 2}, {2, 2}, {1, 2}});
  check_values(parts[2], {8, 9});
  for (const auto& p : parts) CHECK(p.storage() == x.storage());
  CHECK(shapes_of(gb::split(x, 7)) == Shapes{{5, 2}});
  CHECK(shapes_of(gb::split(x, 1, 1)) == Shapes{{5, 1}, {5, 1}});
  auto ws = x.split_with_sizes({1, 0, 4});
  CHECK(shapes_of(ws) == Shapes{{1, 2}, {0, 2}, {4, 2}});
  check_values(ws[2], {2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(shapes_of(gb::chunk(x, 3)) == Shapes{{2, 2}, {2, 2}, {1, 2}});
  CHECK(shapes_of(gb::chunk(gb::arange(6), 4)) == Shapes{{2}, {2}, {2}});  // like PyTorch: fewer chunks than asked
  CHECK(shapes_of(gb::chunk(gb::empty({0, 2}), 3)) == Shapes{{0, 2}, {0, 2}, {0, 2}});
  CHECK(shapes_of(gb::split(gb::empty({0}), 0)) == Shapes{{0}});
  auto rows = x.unbind();
  CHECK(rows.size() == 5);
  check_values(rows[3], {6, 7});
  auto cols = x.unbind(-1);
  CHECK(shapes_of(cols) == Shapes{{5}, {5}});
  check_values(cols[1], {1, 3, 5, 7, 9});
  {  // writing through a piece is seen by the base
    gb::NoGradGuard ng;
    cols[0].fill_(-1);
  }
  check_values(x.select(1, 0), {-1, -1, -1, -1, -1});
  CHECK_THROWS_WITH_AS(gb::split(x, -1), doctest::Contains("split expects split_size be non-negative, but got split_size=-1"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::split(x, 0), doctest::Contains("split_size can only be 0 if dimension size is 0"), gb::Error);
  CHECK_THROWS_WITH_AS(x.split_with_sizes({1, 1}),
                       doctest::Contains("split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size "
                                         "at dimension 0), but got split_sizes=[1, 1]"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(x.split_with_sizes({6, -1}), doctest::Contains("only non-negative entries"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::chunk(x, 0), doctest::Contains("chunk expects `chunks` to be greater than 0, got: 0"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::unbind(gb::tensor(1.0)), doctest::Contains("tensor has no dimensions"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::split(x, 2, 2), doctest::Contains("Dimension out of range"), gb::IndexError);
}

TEST_CASE("gradients of cat, stack and the splits") {
  gb::manual_seed(7);
  auto a = gb::randn({2, 3}, gbtest::f64_grad());
  auto b = gb::randn({2, 1}, gbtest::f64_grad());
  auto c = gb::randn({3}, gbtest::f64_grad());
  auto x = gb::cat({a, b}, 1);
  CHECK(x.grad_fn()->name() == "CatBackward0");
  CHECK(gb::stack({a, a}).grad_fn()->name() == "StackBackward0");
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::cat({v[0], v[1], v[0]}, 1); }, {a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::cat({v[0].t(), v[1].t()}, 0); }, {a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::stack({v[0], v[1], v[0]}, 1); },
                           {c, gb::randn({3}, gbtest::f64_grad())}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) {
    auto p = v[0].split(2, 1);
    return p[0] * 2.0 + p[1] * 3.0;
  }, {gb::randn({2, 4}, gbtest::f64_grad())}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) {
    auto p = v[0].unbind(1);
    return p[0] * p[2];
  }, {a}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) {
    auto p = v[0].chunk(2, 0);
    return gb::cat({p[1], p[0]});
  }, {gb::randn({5, 2}, gbtest::f64_grad())}));
  // a legacy-skipped input gets an empty gradient; a mixed-dtype input gets its own dtype back
  auto e = gb::empty({0}, gbtest::f64_grad());
  auto f32 = gb::ones({2}, gb::TensorOptions().dtype(gb::kFloat).requires_grad(true));
  auto y = gb::cat({e, c, f32});
  CHECK(y.scalar_type() == gb::kFloat64);
  (y * gb::arange(5, gb::TensorOptions().dtype(gb::kFloat64))).sum().backward();
  CHECK(e.grad().sizes() == gb::IntArrayRef({0}));
  check_values(c.grad(), {0, 1, 2});
  CHECK(f32.grad().scalar_type() == gb::kFloat);
  check_values(f32.grad(), {3, 4});
  // double backward through cat (its backward is made of differentiable slices)
  CHECK(gb::autograd::gradgradcheck(
      [](const gb::variable_list& v) { return gb::variable_list{gb::cat({v[0] * v[0], v[1]}, 1)}; }, {a, b}));
}
