// tests/engine/ops/copy_test.cpp — clone, contiguous, copy_ (broadcast, dtype conversion, autograd), fill_, zero_.
#include "support/check.h"

using gbtest::check_values;

TEST_CASE("clone and contiguous copy; copy_ broadcasts and converts") {
  auto x = gb::arange(6).view({2, 3}).to(gb::kFloat);
  auto c = x.clone();
  CHECK(c.storage() != x.storage());
  auto t = x.t();
  auto tc = t.contiguous();
  CHECK(tc.is_contiguous());
  check_values(tc, {0, 3, 1, 4, 2, 5});
  CHECK(x.contiguous().is_same(x));
  auto d = gb::zeros({2, 3}, gb::kFloat64);
  d.copy_(gb::tensor({1, 2, 3}));
  check_values(d, {1, 2, 3, 1, 2, 3});
  CHECK(d._version() == 1);
  CHECK_THROWS_WITH_AS(d.copy_(gb::ones({4})), doctest::Contains("copy_"), gb::Error);
  d.fill_(7);
  check_values(d, {7, 7, 7, 7, 7, 7});
  d.zero_();
  check_values(d, {0, 0, 0, 0, 0, 0});
  auto strided = gb::zeros({3, 3}).t();
  strided.fill_(2);
  check_values(strided.sum(), {18});
}

TEST_CASE("copy_ into a non-leaf routes gradients to the source") {
  auto src = gb::tensor({1.0, 2.0}, gbtest::f64_grad());
  auto base = gb::tensor({5.0, 5.0}, gbtest::f64_grad());
  auto y = base * 1.0;
  y.copy_(src * 3);
  y.sum().backward();
  check_values(src.grad(), {3, 3});
  check_values(base.grad(), {0, 0});  // overwritten: no gradient to what was there
  auto x = gb::randn({3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0].clone() * 2; }, {x}));
}

TEST_CASE("transposed copies (the tiled path) are exact in every element size") {
  for (auto dt : {gb::kFloat, gb::kFloat64, gb::kHalf, gb::kInt32}) {
    auto x = gb::arange(100 * 70).view({100, 70}).to(dt);
    auto t = x.t().contiguous();
    REQUIRE(t.sizes() == gb::IntArrayRef({70, 100}));
    auto tv = gbtest::values(t), xv = gbtest::values(x);
    bool ok = true;
    for (int64_t i = 0; i < 70; ++i)
      for (int64_t j = 0; j < 100; ++j) ok &= tv[i * 100 + j] == xv[j * 70 + i];
    CHECK(ok);
  }
  auto strided = gb::arange(64 * 80).view({64, 80}).to(gb::kFloat).slice(1, 0, 80, 2);  // column stride 2
  auto c = strided.contiguous();
  CHECK(gbtest::values(c)[1] == 2);
  CHECK(gbtest::values(c)[40] == 80);
}

TEST_CASE("to(gb::kCUDA) compiles as in libtorch; without a device it is a clear error, to(gb::kMeta) works") {
  auto x = gb::ones({2, 3});
  if (!gb::cuda::is_available())
    CHECK_THROWS_WITH(x.to(gb::kCUDA), doctest::Contains("CUDA is not available"));
  auto m = x.to(gb::kMeta);  // the DeviceType overload: Device(kMeta), no TensorOptions ambiguity
  CHECK(m.is_meta());
  CHECK(m.sizes() == x.sizes());
}

TEST_CASE("a contiguous row broadcast down a contiguous destination is copied row by row (addmm's bias)") {
  auto row = gb::arange(5).to(gb::kFloat);
  auto dst = gb::empty({3, 5});
  dst.copy_(row);
  for (int64_t i = 0; i < 3; ++i) CHECK(gb::equal(dst[i], row));
  auto cube = gb::empty({2, 3, 5});
  cube.copy_(gb::arange(15).view({1, 3, 5}).to(gb::kFloat));  // a leading size-1 dim
  CHECK(gb::equal(cube[1], gb::arange(15).view({3, 5}).to(gb::kFloat)));
  auto big = gb::empty({4096, 33});  // split across the pool
  big.copy_(gb::arange(33).to(gb::kFloat));
  CHECK(gb::equal(big.sum({0}), gb::arange(33).to(gb::kFloat) * 4096));
  // src inside dst (a partial overlap of two dense views): refused as PyTorch refuses it
  auto m = gb::arange(12).view({3, 4}).to(gb::kFloat);
  CHECK_THROWS_WITH_AS(m.copy_(m[0]), doctest::Contains("some elements of the input tensor and the written-to"),
                       gb::Error);
  m.copy_(m[0].clone());
  for (int64_t i = 0; i < 3; ++i) CHECK(gb::equal(m[i], gb::arange(4).to(gb::kFloat)));
  // other dtypes convert through the general loop
  auto ints = gb::empty({2, 3}, gb::kInt64);
  ints.copy_(gb::tensor({1.5f, 2.5f, -3.5f}));
  CHECK(gb::equal(ints[1], gb::tensor({int64_t(1), int64_t(2), int64_t(-3)})));
}

TEST_CASE("copy_ between overlapping views: PyTorch's refusals, and a source read before it is overwritten") {
  auto x = gb::arange(6).to(gb::kFloat);
  CHECK_THROWS_WITH_AS(x.slice(0, 1).copy_(x.slice(0, 0, 5)),
                       doctest::Contains("unsupported operation: some elements of the input tensor and the written-to "
                                         "tensor refer to a single memory location"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 5).copy_(x.slice(0, 1)), doctest::Contains("Please clone() the tensor"),
                       gb::Error);
  check_values(x, {0, 1, 2, 3, 4, 5});  // nothing written
  CHECK_THROWS_WITH_AS(gb::arange(3).to(gb::kFloat).expand({2, 3}).copy_(gb::ones({2, 3})),
                       doctest::Contains("more than one element of the written-to tensor"), gb::Error);
  x.copy_(x.view({6}));  // the same bytes: allowed, nothing changes
  check_values(x, {0, 1, 2, 3, 4, 5});
  x.slice(0, 0, 6, 2).copy_(x.slice(0, 1, 6, 2));  // interleaved: no element shared
  check_values(x, {1, 1, 3, 3, 5, 5});
  // Strided views whose elements overlap (PyTorch cannot tell: it copies in its loop's order, smearing the first
  // column along each row). The source is read whole before any element is written: each row shifted by one.
  auto m = gb::arange(8).view({2, 4}).to(gb::kFloat);
  m.slice(1, 1).copy_(m.slice(1, 0, 3));
  check_values(m, {0, 0, 1, 2, 4, 4, 5, 6});
  auto d = gb::arange(8).view({2, 4}).to(gb::kFloat64);  // converting between dtypes too
  d.slice(1, 1).copy_(d.slice(1, 0, 3).to(gb::kFloat));
  check_values(d, {0, 0, 1, 2, 4, 4, 5, 6});
}
