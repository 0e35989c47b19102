// tests/engine/core/factory_test.cpp — factories: fills, ranges, eye, random draws, from_blob, from values.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("constant factories and their dtypes") {
  check_values(gb::zeros({2}), {0, 0});
  check_values(gb::ones({2}, gb::kInt32), {1, 1});
  CHECK(gb::ones({2}, gb::kInt32).scalar_type() == gb::kInt32);
  check_values(gb::full({3}, 2.5), {2.5, 2.5, 2.5});
  CHECK(gb::full({1}, 3).scalar_type() == gb::kInt64);
  CHECK(gb::full({1}, true).scalar_type() == gb::kBool);
  auto like = gb::zeros_like(gb::ones({2, 3}, gb::kFloat64));
  CHECK(like.scalar_type() == gb::kFloat64);
  CHECK(like.sizes() == gb::IntArrayRef({2, 3}));
  CHECK(gb::empty({0, 3}).numel() == 0);
  CHECK_THROWS_WITH_AS(gb::zeros({2, -1}), doctest::Contains("Trying to create tensor with negative dimension -1"), gb::Error);
  CHECK(gb::ones({2}, gb::requires_grad()).requires_grad());
}

TEST_CASE("arange, linspace and eye follow PyTorch") {
  auto a = gb::arange(0, 10, 3);
  CHECK(a.scalar_type() == gb::kInt64);
  check_values(a, {0, 3, 6, 9});
  auto f = gb::arange(0.0, 1.0, 0.25);
  CHECK(f.scalar_type() == gb::kFloat);
  check_values(f, {0, 0.25, 0.5, 0.75});
  check_values(gb::arange(5, 0, -2), {5, 3, 1});
  CHECK_THROWS_WITH_AS(gb::arange(0, 5, 0), doctest::Contains("step must be nonzero"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::arange(5, 0, 1), doctest::Contains("inconsistent with step sign"), gb::Error);
  check_values(gb::linspace(0, 1, 5), {0, 0.25, 0.5, 0.75, 1});
  check_values(gb::eye(2, 3), {1, 0, 0, 0, 1, 0});
}

TEST_CASE("random factories are seeded and have the right statistics") {
  gb::manual_seed(42);
  auto a = gb::randn({1000});
  gb::manual_seed(42);
  auto b = gb::randn({1000});
  CHECK(gbtest::values(a) == gbtest::values(b));
  auto m = a.mean().item<double>();
  CHECK(std::fabs(m) < 0.15);
  auto u = gb::rand({2000}, gb::kFloat64);
  auto uv = gbtest::values(u);
  double lo = 1, hi = 0, sum = 0;
  for (double v : uv) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  CHECK(lo >= 0);
  CHECK(hi < 1);
  CHECK(std::fabs(sum / 2000 - 0.5) < 0.05);
  auto r = gb::randint(3, 7, {500});
  auto rv = gbtest::values(r);
  for (double v : rv) CHECK((v >= 3 && v < 7));
  auto p = gbtest::values(gb::randperm(10));
  std::sort(p.begin(), p.end());
  for (int i = 0; i < 10; ++i) CHECK(p[i] == i);
  gb::Generator g(7), h(7);
  CHECK(gbtest::values(gb::randn({4}, g)) == gbtest::values(gb::randn({4}, h)));
  auto state = g.get_state();
  auto next1 = gbtest::values(gb::randn({3}, g));
  g.set_state(state);
  CHECK(gbtest::values(gb::randn({3}, g)) == next1);
}

TEST_CASE("from_blob borrows memory and tensor() copies values") {
  float buf[6] = {1, 2, 3, 4, 5, 6};
  auto t = gb::from_blob(buf, {2, 3});
  check_values(t, {1, 2, 3, 4, 5, 6});
  buf[0] = 10;
  CHECK(t.data_ptr<float>()[0] == 10);  // shares memory
  bool deleted = false;
  {
    auto owned = gb::from_blob(buf, {6}, [&](void*) { deleted = true; });
  }
  CHECK(deleted);
  auto strided = gb::from_blob(buf, {3}, {2});
  check_values(strided, {10, 3, 5});
  CHECK(gb::tensor({1, 2}).scalar_type() == gb::kInt64);
  CHECK(gb::tensor({1.0, 2.0}).scalar_type() == gb::kFloat);
  CHECK(gb::tensor({{1.0, 2.0}, {3.0, 4.0}}).sizes() == gb::IntArrayRef({2, 2}));
  // a matrix's dtype as torch::tensor infers it: ints int64, any float the default float, bools bool
  CHECK(gb::tensor({{1, 2}, {3, 4}}).scalar_type() == gb::kInt64);
  check_values(gb::tensor({{1, 2}, {3, 4}}), {1, 2, 3, 4});
  CHECK(gb::tensor({{1, 2.5}, {3, 4}}).scalar_type() == gb::kFloat);
  CHECK(gb::tensor({{true, false}}).scalar_type() == gb::kBool);
  CHECK(gb::tensor({1, 2.5}).scalar_type() == gb::kFloat);           // a flat list: any float decides
  CHECK(gb::tensor({true, false}).scalar_type() == gb::kBool);
  CHECK(gb::tensor({{1, 2}}, gb::kDouble).scalar_type() == gb::kDouble);
  CHECK(gb::tensor(2, gb::kLong).dim() == 0);  // a 0-dim int, not ambiguous
  CHECK(gb::tensor(true).scalar_type() == gb::kBool);
  CHECK_THROWS_WITH_AS(gb::tensor({{1.0, 2.0}, {3.0}}), doctest::Contains("expected sequence of length 2"), gb::Error);
}

TEST_CASE("tensor(): a braced list always makes a dimension, a number none, as torch::tensor") {
  using Shape = std::vector<int64_t>;
  auto shape = [](const gb::Tensor& t) { return t.sizes().vec(); };
  CHECK(shape(gb::tensor({7})) == Shape{1});  // not a 0-dim tensor: the one-element list is a list
  CHECK(shape(gb::tensor({1.0f})) == Shape{1});
  CHECK(shape(gb::tensor(7)) == Shape{});
  CHECK(gb::tensor(7).item<int64_t>() == 7);
  CHECK(shape(gb::tensor(2.5f)) == Shape{});
  CHECK(gb::tensor(2.5f).item<double>() == 2.5);
  CHECK(gb::tensor(true).item<bool>());
  CHECK(gb::tensor(-3, gb::kInt16).item<int64_t>() == -3);
  CHECK(shape(gb::tensor({{0}, {1}})) == Shape{2, 1});  // rows of one element
  check_values(gb::tensor({{0}, {1}}), {0, 1});
  CHECK(shape(gb::tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})) == Shape{2, 2, 2});
  check_values(gb::tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}), {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(shape(gb::tensor({})) == Shape{0});
  CHECK(gb::tensor({}).scalar_type() == gb::kFloat);
  CHECK(shape(gb::tensor({{}, {}})) == Shape{2, 0});
  // std::vector and ArrayRef keep their element type's dtype (int and double by torch::tensor's rule)
  CHECK(gb::tensor(std::vector<uint8_t>{1, 2, 255}).scalar_type() == gb::kUInt8);
  check_values(gb::tensor(std::vector<uint8_t>{1, 2, 255}), {1, 2, 255});
  CHECK(gb::tensor(std::vector<int16_t>{-3}).scalar_type() == gb::kInt16);
  CHECK(gb::tensor(std::vector<int>{4, 5}).scalar_type() == gb::kInt64);
  CHECK(gb::tensor(std::vector<double>{0.5}).scalar_type() == gb::kFloat);
  CHECK(gb::tensor(std::vector<bool>{true, false, true}).scalar_type() == gb::kBool);
  std::vector<double> d{1.5, -2};
  CHECK(shape(gb::tensor(gb::ArrayRef<double>(d))) == Shape{2});
  check_values(gb::tensor(gb::ArrayRef<double>(d), gb::kDouble), {1.5, -2});
  // a list of vectors stacks them
  std::vector<int64_t> r0{1, 2}, r1{3, 4};
  CHECK(shape(gb::tensor({r0, r1})) == Shape{2, 2});
  check_values(gb::tensor({r0, r1}), {1, 2, 3, 4});
  // integer values into a float list keep their exact value; a float into an integer dtype truncates as PyTorch
  CHECK(gb::tensor({int64_t(1) << 53, int64_t(3)}, gb::kInt64)[0].item<int64_t>() == (int64_t(1) << 53));
  check_values(gb::tensor({-1.5, 2.7}, gb::kInt64), {-1, 2});
  check_values(gb::tensor({true, false}, gb::kFloat), {1, 0});
  auto g = gb::tensor({{1.0, 2.0}}, gb::TensorOptions().requires_grad(true));
  CHECK(g.requires_grad());
  CHECK(g.is_leaf());
  CHECK_THROWS_WITH_AS(gb::tensor({{{1, 2}}, {{3}}}), doctest::Contains("expected sequence of length 2"), gb::Error);
}
