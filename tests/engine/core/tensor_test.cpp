// tests/engine/core/tensor_test.cpp — Tensor's own state: sizes, strides, dtype, device, item, data_ptr, names.
#include "support/check.h"

TEST_CASE("sizes, strides, numel, dim and contiguity") {
  auto x = gb::zeros({2, 3, 4});
  CHECK(x.sizes() == gb::IntArrayRef({2, 3, 4}));
  CHECK(x.strides() == gb::IntArrayRef({12, 4, 1}));
  CHECK(x.numel() == 24);
  CHECK(x.dim() == 3);
  CHECK(x.size(-1) == 4);
  CHECK(x.is_contiguous());
  CHECK_FALSE(x.transpose(0, 2).is_contiguous());
  CHECK(x.nbytes() == 96);
  CHECK(x.element_size() == 4);
  CHECK_THROWS_WITH_AS(x.size(3), doctest::Contains("Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
                       gb::IndexError);
  CHECK(x.toString() == "CPUFloatType");
  CHECK(x.options().dtype() == gb::kFloat);
  CHECK(x.device() == gb::Device("cpu"));
}

TEST_CASE("item and data_ptr check what they are given") {
  auto s = gb::tensor(2.5);
  CHECK(s.dim() == 0);
  CHECK(s.item<double>() == 2.5);
  CHECK(s.item<int>() == 2);
  CHECK(gb::tensor({7}).item<int64_t>() == 7);
  CHECK_THROWS_WITH_AS(gb::ones({2}).item<float>(), doctest::Contains("a Tensor with 2 elements cannot be converted to Scalar"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::ones({2}).data_ptr<double>(), doctest::Contains("dtype is float32"), gb::TypeError);
  float* p = gb::ones({2}).data_ptr<float>();
  CHECK(p != nullptr);
}

TEST_CASE("dtypes convert with to() and keep values") {
  auto x = gb::tensor({1.5, -2.25, 3.0});
  for (auto t : {gb::kFloat64, gb::kHalf, gb::kBFloat16, gb::kFloat}) {
    auto y = x.to(t);
    CHECK(y.scalar_type() == t);
    gbtest::check_values(y, {1.5, -2.25, 3.0});
  }
  gbtest::check_values(x.to(gb::kInt64), {1, -2, 3});
  gbtest::check_values(x.to(gb::kInt32), {1, -2, 3});
  gbtest::check_values(x.to(gb::kBool), {1, 1, 1});
  CHECK(x.to(gb::kFloat).is_same(x));  // no copy when nothing changes
  CHECK_FALSE(x.to(gb::kFloat, false, /*copy=*/true).is_same(x));
}

TEST_CASE("to() keeps gradients flowing and returns them in the source dtype") {
  auto x = gb::ones({3}, gb::requires_grad());
  auto y = x.to(gb::kFloat64) * 2;
  CHECK(y.scalar_type() == gb::kFloat64);
  y.sum().backward();
  CHECK(x.grad().scalar_type() == gb::kFloat);
  gbtest::check_values(x.grad(), {2, 2, 2});
}

TEST_CASE("names label tensors") {
  auto x = gb::ones({1});
  x.set_name("weights");
  CHECK(x.name() == "weights");
  CHECK(x.detach().name() == "weights");
}
