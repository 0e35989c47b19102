// tests/engine/ops/pad_test.cpp — constant_pad_nd and pad: every mode's values, negative (cropping) pads, the
// functional form with PadFuncOptions, gradients (gradcheck, gradgradcheck), meta, and the errors.
#include "support/check.h"

using gbtest::check_values;
namespace F = gb::nn::functional;

TEST_CASE("constant_pad_nd: last dims first, a fill value, negative pads crop") {
  auto x = gb::tensor({{1.0, 2.0}, {3.0, 4.0}});
  check_values(gb::constant_pad_nd(x, {1, 0}), {0, 1, 2, 0, 3, 4});
  auto p = gb::constant_pad_nd(x, {0, 1, 1, 0}, -1);
  CHECK(p.sizes() == gb::IntArrayRef({3, 3}));
  check_values(p, {-1, -1, -1, 1, 2, -1, 3, 4, -1});
  check_values(gb::constant_pad_nd(x, {-1, 1}), {2, 0, 4, 0});
  check_values(gb::constant_pad_nd(x, {0, 0, -1, 0}), {3, 4});
  CHECK(gb::constant_pad_nd(x, {-2, 0}).sizes() == gb::IntArrayRef({2, 0}));
  auto i = gb::constant_pad_nd(gb::tensor({5, 6}, gb::kInt64), {1, 1}, 9);
  CHECK(i.scalar_type() == gb::kInt64);
  check_values(i, {9, 5, 6, 9});
  check_values(gb::pad(x, {1, 1}, "constant", 2.0), {2, 1, 2, 2, 2, 3, 4, 2});
  check_values(F::pad(x, F::PadFuncOptions({1, 0}).value(5)), {5, 1, 2, 5, 3, 4});
}

TEST_CASE("pad: reflect, replicate, circular") {
  auto x = gb::arange(1, 4, gb::kFloat64).view({1, 3});  // [[1, 2, 3]]
  check_values(gb::pad(x, {2, 1}, "reflect"), {3, 2, 1, 2, 3, 2});
  check_values(gb::pad(x, {2, 1}, "replicate"), {1, 1, 1, 2, 3, 3});
  check_values(gb::pad(x, {2, 1}, "circular"), {2, 3, 1, 2, 3, 1});
  check_values(F::pad(x, F::PadFuncOptions({1, 1}).mode(gb::kReflect)), {2, 1, 2, 3, 2});
  check_values(F::pad(x, F::PadFuncOptions({1, 1}).mode(gb::kReplicate)), {1, 1, 2, 3, 3});
  check_values(F::pad(x, F::PadFuncOptions({1, 1}).mode("circular")), {3, 1, 2, 3, 1});
  auto img = gb::arange(4, gb::kFloat64).view({1, 1, 2, 2});  // [[0, 1], [2, 3]]
  auto r = gb::pad(img, {1, 1, 1, 0}, "replicate");
  CHECK(r.sizes() == gb::IntArrayRef({1, 1, 3, 4}));
  check_values(r, {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3});
  auto rf = gb::pad(img, {1, 0, 0, 1}, "reflect");
  check_values(rf, {1, 0, 1, 3, 2, 3, 1, 0, 1});
  auto z = gb::pad(x, {0, 0}, "reflect");
  z.fill_(0);
  CHECK(x.index({0, 0}).item<double>() == 1);  // a new tensor even without padding
}

TEST_CASE("pad gradients") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gbtest::f64_grad());
  auto c = gb::constant_pad_nd(x, {1, -1});  // [0, 1, 2]
  CHECK(c.grad_fn()->name() == "ConstantPadNdBackward0");
  (c * gb::tensor({1.0, 10.0, 100.0}, gb::kFloat64)).sum().backward();
  check_values(x.grad(), {10, 100, 0});
  x.mutable_grad() = gb::Tensor();
  gb::pad(x.view({1, 3}), {2, 1}, "reflect").sum().backward();  // [3, 2, 1, 2, 3, 2]: 1 once, 2 three times
  check_values(x.grad(), {1, 3, 2});
  gb::manual_seed(45);
  auto a = gb::randn({2, 2, 3, 4}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& in) {
        return gb::constant_pad_nd(in[0], {1, -2, 0, 2}, 0.5);
      },
      {a}));
  CHECK(gb::autograd::gradgradcheck(
      [](const gb::variable_list& in) {
        return gb::variable_list{gb::constant_pad_nd(in[0], {2, 1}).square()};
      },
      {a}));
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    INFO(mode);
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& in) { return gb::pad(in[0], {2, 1, 1, 2}, mode); }, {a}));
    CHECK(gbtest::gradcheck1(
        [&](const gb::variable_list& in) {
          return gb::pad(in[0].select(0, 0), {1, 3}, mode);
        },
        {a}));
  }
  auto m = gb::empty({2, 3, 4}, gb::TensorOptions().device(gb::kMeta));
  CHECK(gb::constant_pad_nd(m, {1, 1}).sizes() == gb::IntArrayRef({2, 3, 6}));
  CHECK(gb::pad(m, {1, 1, 2, 2}, "reflect").sizes() == gb::IntArrayRef({2, 7, 6}));
  CHECK(gb::pad(m, {1, 1}, "replicate").is_meta());
}

TEST_CASE("pad errors") {
  auto x = gb::zeros({1, 2, 3});
  CHECK_THROWS_WITH_AS(gb::constant_pad_nd(x, {1, 1, 1}),
                       doctest::Contains("Length of pad must be even but instead it "
                                         "equals 3"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::constant_pad_nd(x, {1, 1, 1, 1, 1, 1, 1, 1}),
                       "Length of pad should be no more than twice the number of dimensions of the input. Pad length "
                       "is 8 while the input has 3 dimensions.",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::constant_pad_nd(x, {-2, -2}),
                       "The input size 3, plus negative padding -2 and -2 resulted in a negative output size, which is "
                       "invalid. Check dimension 2 of your input.",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::pad(x, {3, 0}, "reflect"),
                       "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                       "padding (3, 0) at dimension 2 of input [1, 2, 3]",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::pad(x, {4, 0}, "circular"),
                       doctest::Contains("Padding value causes wrapping around more than once"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::pad(x, {1, 0}, "reflect", 1.0),
                       doctest::Contains("Padding mode \"reflect\" doesn't take in value argument"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::pad(x, {1, 0}, "mirror"), doctest::Contains("pad: unrecognised padding mode \"mirror\""),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::pad(gb::zeros({3}), {1, 0}, "replicate"),
                       doctest::Contains("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::pad(x, {-1, 0}, "replicate"), doctest::Contains("is only supported in mode \"constant\""),
                       gb::Error);
}
