// tests/engine/autograd/views_test.cpp — in-place ops on views under autograd (CopySlices, AsStridedBackward0, lazy
// regeneration of older views), tested against hand-computed gradients and gradcheck.
#include "support/check.h"

using gb::indexing::Slice;
using gbtest::check_close;
using gbtest::check_values;
using gbtest::f64_grad;
using gbtest::gradcheck1;

namespace {
gb::Tensor arange_f64(int64_t n, std::vector<int64_t> shape) {
  return gb::arange(n, gb::TensorOptions().dtype(gb::kFloat64)).view(shape);
}
}  // namespace

TEST_CASE("select(...).mul_ on a view of a non-leaf: CopySlices on the base, right gradient") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto y = x * 1;
  auto v = y.select(0, 1);
  CHECK(v._base().is_same(y));
  v.mul_(2);
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "CopySlices");
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  check_close(y.select(0, 1), x.select(0, 1).detach() * 2);
  check_close(y.select(0, 0), x.select(0, 0).detach());
  y.sum().backward();
  check_values(x.grad(), {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1});
}

TEST_CASE("narrow(...).copy_(z): the overwritten part's gradient goes to z, the rest to x") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto z = gb::randn({3, 2}, f64_grad());
  auto w = arange_f64(12, {3, 4});
  auto y = x * 1;
  y.narrow(1, 0, 2).copy_(z);
  check_close(y.narrow(1, 0, 2), z.detach());
  (y * w).sum().backward();
  check_values(x.grad(), {0, 0, 2, 3, 0, 0, 6, 7, 0, 0, 10, 11});
  check_values(z.grad(), {0, 1, 4, 5, 8, 9});
}

TEST_CASE("index({Slice(), 0}).relu_(): the mask applies to the column only") {
  auto x = gb::tensor({-1.0, 2.0, 3.0, 4.0, 5.0, -6.0, 7.0, 8.0, -9.0}, gb::kFloat64).view({3, 3}).clone();
  x.requires_grad_();
  auto y = x * 1;
  y.index({Slice(), 0}).relu_();
  check_values(y.detach(), {0, 2, 3, 4, 5, -6, 7, 8, -9});
  y.sum().backward();
  check_values(x.grad(), {0, 1, 1, 1, 1, 1, 1, 1, 1});
}

TEST_CASE("gradcheck: in-place ops on select, narrow, stepped slice and transposed views of a non-leaf") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto w = gb::randn({3, 2}, f64_grad());
  auto r = gb::randn({4}, f64_grad());
  CHECK(gradcheck1([](const gb::variable_list& in) {
    auto y = in[0].cos();  // (exp would save its output: modifying it would be PyTorch's version error)
    y.select(0, 1).mul_(in[1]);
    return y * in[0];
  }, {x, r}));
  CHECK(gradcheck1([](const gb::variable_list& in) {
    auto y = in[0] * 1;
    y.narrow(1, 1, 2).mul_(in[1]);
    return y.sin();
  }, {x, w}));
  CHECK(gradcheck1([](const gb::variable_list& in) {
    auto y = in[0].sin();
    y.slice(1, 0, 4, 2).add_(in[1], 0.5);
    y.slice(0, 0, 3, 2).sigmoid_();
    return y;
  }, {x, w}));
  CHECK(gradcheck1([](const gb::variable_list& in) {
    auto y = in[0] * in[0];
    y.t().select(0, 2).tanh_();
    y.t().narrow(0, 0, 2).div_(in[1].view({2, 3}) + 3);
    return y;
  }, {x, w}));
}

TEST_CASE("gradcheck: composite in-place ops (lerp_, addcmul_, clamp_, copy_ across dtypes) on views") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto a = gb::randn({4}, f64_grad());
  auto b = gb::randn({3}, f64_grad());
  CHECK(gradcheck1([](const gb::variable_list& in) {
    auto y = in[0] * 2;
    y.select(0, 0).lerp_(in[1], 0.3);
    y.select(1, 1).addcmul_(in[2], in[2], 0.5);
    y.narrow(0, 1, 2).clamp_(-0.5, 0.5);
    return y;
  }, {x, a, b}));
  auto y = x * 1;
  y.select(0, 2).copy_(a.to(gb::kFloat32));
  y.sum().backward();
  check_values(a.grad(), {1, 1, 1, 1}, 1e-6);
}

TEST_CASE("two in-place ops on overlapping views chain their CopySlices") {
  auto x = gb::randn({4, 3}, f64_grad());
  auto s = gb::randn({3}, f64_grad());
  auto f = [](const gb::variable_list& in) {
    auto y = in[0] * in[0];
    auto a = y.narrow(0, 0, 3);
    auto b = y.narrow(0, 1, 3);  // made before a is modified: overlaps rows 1..2
    a.mul_(in[1]);
    b.exp_();
    return y;
  };
  CHECK(gradcheck1(f, {x, s}));
  // By hand: y = x^2; rows 0..2 *= s; rows 1..3 = exp(.) → d sum(y)/dx.
  auto y = f({x, s});
  REQUIRE(y.grad_fn()->name() == "CopySlices");
  y.sum().backward();
  auto xd = x.detach(), sd = s.detach();
  auto expect = 2 * xd;
  auto row = [&](int64_t i) { return expect.select(0, i); };
  row(0).mul_(sd);
  for (int64_t i = 1; i < 3; ++i) row(i).copy_(2 * xd.select(0, i) * sd * (xd.select(0, i).square() * sd).exp());
  row(3).copy_(2 * xd.select(0, 3) * xd.select(0, 3).square().exp());
  check_close(x.grad(), expect);
}

TEST_CASE("a view made before the in-place op sees the modification in its gradient") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto w = gb::randn({2, 4}, f64_grad());
  auto y = x * 1;
  auto old = y.select(0, 0);
  auto old_name = old.grad_fn()->name();
  CHECK(old_name == "SelectBackward0");
  y.narrow(0, 0, 2).mul_(w);
  CHECK(old.grad_fn()->name() == "AsStridedBackward0");  // regenerated on read
  (old * old).sum().backward();
  auto xd = x.detach().select(0, 0), wd = w.detach().select(0, 0);
  check_close(x.grad().select(0, 0), 2 * xd * wd * wd);
  check_values(x.grad().narrow(0, 1, 2), std::vector<double>(8, 0.0));
  check_close(w.grad().select(0, 0), 2 * xd * xd * wd);
  CHECK(gradcheck1([](const gb::variable_list& in) {
    auto y = in[0] * 1;
    auto old = y.t().select(0, 1);
    y.narrow(0, 0, 2).mul_(in[1]);
    return old.exp();
  }, {x, w}));
}

TEST_CASE("an in-place op on the base itself regenerates its older views") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto y = x * 1;
  auto v = y.select(0, 2);
  y.mul_(3);
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  v.sum().backward();
  check_values(x.grad(), {0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3});
}

TEST_CASE("double backward through CopySlices") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto r = gb::randn({4}, f64_grad());
  CHECK(gb::autograd::gradgradcheck(
      [](const gb::variable_list& in) {
        auto y = in[0] * in[0];
        y.select(0, 1).mul_(in[1]);
        auto old = y.narrow(0, 1, 2);
        y.t().narrow(0, 0, 2).mul_(y.t().narrow(0, 2, 2).clone());  // mul_ saves `other`: no alias of y
        return gb::variable_list{y * old.sum()};
      },
      {x, r}));
}

TEST_CASE("a base that does not require grad becomes a non-leaf when a view is written from one that does") {
  auto base = gb::zeros({3, 4}, gb::TensorOptions().dtype(gb::kFloat64));
  auto z = gb::randn({4}, f64_grad());
  auto w = arange_f64(12, {3, 4});
  base.select(0, 1).copy_(z);
  CHECK(base.requires_grad());
  CHECK_FALSE(base.is_leaf());
  CHECK(base.grad_fn()->name() == "CopySlices");
  (base * w).sum().backward();
  check_values(z.grad(), {4, 5, 6, 7});
}

TEST_CASE("a view of a leaf that requires grad is refused with PyTorch's message; no_grad updates still work") {
  auto x = gb::randn({3, 4}, f64_grad());
  CHECK_THROWS_WITH_AS(x.select(0, 1).mul_(2),
                       doctest::Contains("a view of a leaf Variable that requires grad is being used in an in-place "
                                         "operation."),
                       gb::Error);
  CHECK_THROWS_WITH_AS(x.narrow(1, 0, 2).zero_(), doctest::Contains("a view of a leaf Variable"), gb::Error);
  {
    gb::NoGradGuard ng;
    x.select(0, 1).fill_(5);
  }
  check_values(x.select(0, 1), {5, 5, 5, 5});
  CHECK(x.is_leaf());
}

TEST_CASE("a view made in no_grad mode cannot be modified in place with grad mode on") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto y = x * 1;
  gb::Tensor v;
  {
    gb::NoGradGuard ng;
    v = y.select(0, 1);
  }
  auto z = gb::randn({4}, f64_grad());
  CHECK_THROWS_WITH_AS(v.mul_(z), doctest::Contains("A view was created in no_grad mode"), gb::Error);
}

TEST_CASE("in-place on views without autograd writes through and bumps the version; detach is no autograd view") {
  auto t = gb::zeros({3, 4});
  auto v = t.select(0, 1);
  CHECK(v.is_view());
  CHECK(v._base().is_same(t));
  CHECK(v.narrow(0, 1, 2)._base().is_same(t));  // a view of a view points at the root
  auto before = t._version();
  v.fill_(2);
  v.narrow(0, 0, 2).mul_(3);
  CHECK(t._version() == before + 2);
  check_values(t, {0, 0, 0, 0, 6, 6, 2, 2, 0, 0, 0, 0});
  CHECK_FALSE(t.requires_grad());
  CHECK(t.grad_fn() == nullptr);
  auto x = gb::randn({2, 2}, gb::requires_grad());
  auto d = (x * 1).detach();
  CHECK_FALSE(d._base().defined());
  d.mul_(2);  // no autograd involved
  CHECK(d.grad_fn() == nullptr);
}

TEST_CASE("random fills of a view send no gradient to the overwritten part") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto y = x * 1;
  y.select(0, 0).normal_();
  CHECK(y.grad_fn()->name() == "CopySlices");
  y.sum().backward();
  check_values(x.grad(), {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
}

TEST_CASE("as_strided is a differentiable view") {
  auto x = gb::randn({3, 4}, f64_grad());
  auto v = x.as_strided({2, 2}, {4, 2}, 1);  // elements 1, 3, 5, 7
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  v.sum().backward();
  check_values(x.grad(), {0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0});
  auto e = gb::randn({3, 1}, f64_grad());
  CHECK(gradcheck1([](const gb::variable_list& in) { return in[0].as_strided({3, 4}, {1, 0}) * 2; }, {e}));
  CHECK_THROWS_WITH_AS(x.as_strided({4, 4}, {4, 1}), doctest::Contains("out of bounds for storage"), gb::Error);
}
