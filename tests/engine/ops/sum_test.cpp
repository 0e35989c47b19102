// tests/engine/ops/sum_test.cpp — sum and mean over dims (keepdim, negative dims, dtypes) and sum_to.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("sum and mean over any dims") {
  auto x = gb::arange(24).view({2, 3, 4}).to(gb::kFloat);
  check_values(x.sum(), {276});
  check_values(x.sum({0}), {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
  check_values(x.sum({-1}), {6, 22, 38, 54, 70, 86});
  check_values(x.sum({0, 2}), {60, 92, 124});
  CHECK(x.sum({1}, true).sizes() == gb::IntArrayRef({2, 1, 4}));
  check_values(x.mean({1}), {4, 5, 6, 7, 16, 17, 18, 19});
  CHECK(gb::arange(4).sum().scalar_type() == gb::kInt64);
  CHECK(gb::ones({3}, gb::kBool).sum().item<int64_t>() == 3);
  CHECK(gb::ones({1000}, gb::kHalf).sum().item<float>() == 1000.0f);  // accumulated in float
  CHECK_THROWS_WITH_AS(gb::arange(4).mean(), doctest::Contains("mean(): could not infer output dtype"), gb::TypeError);
  CHECK_THROWS_WITH_AS(x.sum({3}), doctest::Contains("Dimension out of range"), gb::IndexError);
  CHECK_THROWS_WITH_AS(x.sum({1, -2}), doctest::Contains("appears multiple times"), gb::Error);
  auto big = gb::ones({300, 400});
  check_values(big.sum({0}).narrow(0, 0, 2), {300, 300});
  check_values(big.sum({1}).narrow(0, 0, 2), {400, 400});
  check_values(big.t().sum({1}).narrow(0, 0, 2), {300, 300});  // non-contiguous
}

TEST_CASE("gradients of sum, mean and sum_to") {
  auto x = gb::randn({3, 4, 2}, gbtest::f64_grad());
  auto ck = [&](auto f) { return gbtest::gradcheck1([&](const gb::variable_list& v) { return f(v[0]); }, {x}); };
  CHECK(ck([](const gb::Tensor& a) { return a.sum(); }));
  CHECK(ck([](const gb::Tensor& a) { return a.sum({1}); }));
  CHECK(ck([](const gb::Tensor& a) { return a.sum({0, 2}, true); }));
  CHECK(ck([](const gb::Tensor& a) { return a.mean({-1}); }));
  CHECK(ck([](const gb::Tensor& a) { return a.transpose(0, 2).mean(); }));
  CHECK(ck([](const gb::Tensor& a) { return gb::sum_to(a, {4, 1}); }));
  auto g = gb::sum_to(gb::ones({2, 3, 4}), {3, 1});
  CHECK(g.sizes() == gb::IntArrayRef({3, 1}));
  check_values(g, {8, 8, 8});
}

TEST_CASE("sums over the leading dims of a contiguous tensor add the rows in order (a bias gradient's sum)") {
  gb::manual_seed(7);
  for (auto shape : {std::vector<int64_t>{32, 64}, std::vector<int64_t>{3, 5, 40}, std::vector<int64_t>{1000, 9}}) {
    auto x = gb::randn(shape);
    const int64_t cols = shape.back(), rows = x.numel() / cols;
    const std::vector<int64_t> lead = shape.size() == 2 ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1};
    // the rows added from zero one after another, in float: what the strided loop computed, bit for bit
    std::vector<float> want(size_t(cols), 0.0f);
    const float* p = x.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) want[size_t(j)] += p[i * cols + j];
    auto got = x.sum(lead);
    REQUIRE(got.numel() == cols);
    for (int64_t j = 0; j < cols; ++j) CHECK(got.data_ptr<float>()[j] == want[size_t(j)]);
    CHECK(x.sum(lead, true).sizes() == gb::IntArrayRef(shape.size() == 2 ? std::vector<int64_t>{1, cols}
                                                                           : std::vector<int64_t>{1, 1, cols}));
    // the same sum through the strided loop (a transposed copy read back through a .t() view) agrees
    if (shape.size() == 2) CHECK(gb::allclose(x.t().contiguous().t().sum({0}), got, 1e-6, 1e-5));
  }
  auto d = gb::randn({17, 6}, gb::kDouble);
  CHECK(gb::allclose(d.sum({0}), d.t().contiguous().sum({1}), 1e-14, 1e-14));
  auto z = -gb::zeros({4, 3});  // -0.0 summed from +0.0 is +0.0, as before
  CHECK_FALSE(std::signbit(z.sum({0}).data_ptr<float>()[0]));
}

TEST_CASE("a sum whose summed dims are outermost in memory runs as column sums: transposes, channels-last") {
  gb::manual_seed(8);
  auto x = gb::randn({300, 70});
  // x.t() summed over its second dim is x summed over its first: the same rows added in the same order, same bits
  CHECK(gb::equal(x.t().sum({1}), x.sum({0})));
  CHECK(gb::equal(x.t().mean({1}), x.mean({0})));
  // channels-last: an (N, H, W, C) buffer seen as (N, C, H, W), summed over all but the channels
  auto nhwc = gb::randn({4, 5, 6, 3});
  auto nchw = nhwc.permute({0, 3, 1, 2});
  auto got = nchw.sum({0, 2, 3});
  std::vector<double> want(3, 0.0);
  const float* p = nhwc.data_ptr<float>();
  for (int64_t i = 0; i < nhwc.numel(); ++i) want[size_t(i % 3)] += double(p[i]);
  for (int c = 0; c < 3; ++c) CHECK(double(got.data_ptr<float>()[c]) == doctest::Approx(want[size_t(c)]).epsilon(1e-5));
  CHECK(nchw.sum({0, 2, 3}, true).sizes() == gb::IntArrayRef({1, 3, 1, 1}));
  // kept dims in reversed memory order are not column sums: the strided loop, still right
  auto y = gb::randn({4, 5, 6});
  auto rev = y.permute({2, 1, 0});  // (6, 5, 4), summed over its middle dim: kept dims 0 and 2 run backwards
  CHECK(gb::allclose(rev.sum({1}).to(gb::kDouble), rev.to(gb::kDouble).sum({1}), 1e-5, 1e-5));
  CHECK(gb::allclose(rev.sum({1}), rev.contiguous().sum({1}), 1e-5, 1e-5));
  // a slice with a storage offset
  auto big = gb::randn({10, 8});
  auto slice = big.narrow(0, 3, 5).t();  // (8, 5), strides (1, 8), offset 24
  CHECK(gb::equal(slice.sum({1}), big.narrow(0, 3, 5).contiguous().sum({0})));
}
