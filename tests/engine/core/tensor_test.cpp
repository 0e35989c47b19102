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

TEST_CASE("in-place methods are const, as libtorch's: p.grad().zero_() and a const handle's add_ change the storage") {
  gb::Tensor p = gb::ones({3}, gb::requires_grad());
  (p * 2).sum().backward();
  CHECK(p.grad().sum().item<double>() == 6);
  p.grad().zero_();  // grad() is a const reference, as libtorch's
  CHECK(p.grad().sum().item<double>() == 0);
  const gb::Tensor t = gb::zeros({2});
  gb::Tensor& same = t.add_(1).mul_(3);  // libtorch returns a mutable reference from a const method
  CHECK(&same == &t);
  CHECK(t.sum().item<double>() == 6);
  const gb::Tensor leaf = gb::ones({2});
  CHECK(leaf.requires_grad_().requires_grad());
  CHECK_FALSE(leaf.set_requires_grad(false).requires_grad());
  const gb::Tensor r = gb::tensor({-1.0, 2.0});
  r.relu_().clamp_(0.5, 1.5).fill_(4);
  CHECK(r.sum().item<double>() == 8);
}

TEST_CASE("Scalar has libtorch's spellings: item().toDouble(), toLong(), isFloatingPoint() ...") {
  const gb::Scalar d = gb::tensor({2.5}).sum().item();
  CHECK(d.toDouble() == 2.5);
  CHECK(d.toFloat() == 2.5f);
  CHECK(d.isFloatingPoint());
  CHECK_FALSE(d.isIntegral(false));
  const gb::Scalar i = gb::tensor(std::vector<int64_t>{7, 8}).sum().item();
  CHECK(i.toLong() == 15);
  CHECK(i.toInt() == 15);
  CHECK(i.isIntegral(false));
  CHECK(gb::Scalar(true).toBool());
  CHECK(gb::Scalar(true).isBoolean());
  CHECK(gb::Scalar(true).isIntegral(true));
}

TEST_CASE("accessor<T, N>: reads and writes through sizes and strides (a transposed view too); checks dtype, dims, device") {
  auto x = gb::arange(6, gb::kFloat).view({2, 3});
  auto a = x.accessor<float, 2>();
  CHECK(a.size(0) == 2);
  CHECK(a.size(1) == 3);
  CHECK(a[1][2] == 5.0f);
  a[0][1] = 10.0f;
  CHECK(x[0][1].item<float>() == 10.0f);
  auto t = x.t();  // strides (1, 3)
  auto at = t.accessor<float, 2>();
  CHECK(at.stride(0) == 1);
  CHECK(at[2][1] == 5.0f);
  CHECK(at[1][0] == 10.0f);
  auto v = gb::arange(4, gb::kLong);
  int64_t sum = 0;
  auto av = v.accessor<int64_t, 1>();
  for (int64_t i = 0; i < av.size(0); ++i) sum += av[i];
  CHECK(sum == 6);
  CHECK_THROWS_WITH((x.accessor<float, 3>()), doctest::Contains("TensorAccessor expected 3 dims but tensor has 2"));
  CHECK_THROWS_AS((x.accessor<double, 2>()), gb::Error);  // the dtype is checked as data_ptr<T> does
}

TEST_CASE("assigning to a temporary writes into the tensor (x[0] = y, x[1][2] = 5), to a name rebinds it") {
  auto x = gb::zeros({2, 3});
  x[0] = gb::tensor({1.0f, 2.0f, 3.0f});
  x[1][2] = 5;
  gbtest::check_values(x, {1, 2, 3, 0, 0, 5});
  auto y = x;  // a handle: y and x are the same tensor
  y = gb::ones({1});  // rebinds y; x is unchanged
  CHECK(x.numel() == 6);
  CHECK(y.numel() == 1);
  // with autograd, as copy_: the overwritten row gets no gradient, the source gets it
  auto base = gb::zeros({2, 2}, gbtest::f64_grad()) * 1.0;
  auto src = gb::full({2}, 3.0, gbtest::f64_grad());
  base[1] = src;
  (base * gb::tensor({1.0, 2.0, 3.0, 4.0}, gb::kDouble).view({2, 2})).sum().backward();
  gbtest::check_values(src.grad(), {3, 4});
}
