// tests/engine/ops/view_test.cpp — views share storage, have the right strides, and differentiate correctly.
#include "support/check.h"

using gbtest::check_values;
using namespace gb::indexing;

TEST_CASE("views share storage with their base") {
  auto x = gb::arange(12).view({3, 4});
  auto t = x.t();
  CHECK(t.storage() == x.storage());
  CHECK(t.strides() == gb::IntArrayRef({1, 4}));
  CHECK(t.is_view());
  auto row = x.select(0, 1);
  check_values(row, {4, 5, 6, 7});
  auto col = x.narrow(1, 2, 2);
  check_values(col, {2, 3, 6, 7, 10, 11});
  {
    gb::NoGradGuard ng;
    row.fill_(0);
  }
  check_values(x.select(0, 1), {0, 0, 0, 0});  // written through the view
  check_values(x.slice(1, 0, 4, 2), {0, 2, 0, 0, 8, 10});
  check_values(x.index({Slice(), -1}), {3, 0, 11});
  check_values(x.index({1, Slice(1, 3)}), {0, 0});
  CHECK(x.index({None, Ellipsis, 0}).sizes() == gb::IntArrayRef({1, 3}));
  check_values(x[2], {8, 9, 10, 11});
}

TEST_CASE("view, reshape, flatten, squeeze, unsqueeze, expand, permute") {
  auto x = gb::arange(24).view({2, 3, 4});
  CHECK(x.view({-1, 4}).sizes() == gb::IntArrayRef({6, 4}));
  CHECK(x.reshape({4, -1}).sizes() == gb::IntArrayRef({4, 6}));
  auto p = x.permute({2, 0, 1});
  CHECK(p.sizes() == gb::IntArrayRef({4, 2, 3}));
  CHECK_FALSE(p.is_contiguous());
  CHECK_THROWS_WITH_AS(p.view({-1}), doctest::Contains("view size is not compatible with input tensor's size and stride"),
                       gb::Error);
  auto r = p.reshape({-1});  // copies
  CHECK(r.storage() != x.storage());
  check_values(r.narrow(0, 0, 4), {0, 4, 8, 12});
  CHECK(x.flatten(1).sizes() == gb::IntArrayRef({2, 12}));
  CHECK(x.unflatten(2, {2, 2}).sizes() == gb::IntArrayRef({2, 3, 2, 2}));
  auto u = gb::ones({3}).unsqueeze(0).unsqueeze(-1);
  CHECK(u.sizes() == gb::IntArrayRef({1, 3, 1}));
  CHECK(u.squeeze().sizes() == gb::IntArrayRef({3}));
  CHECK(u.squeeze(0).sizes() == gb::IntArrayRef({3, 1}));
  auto e = gb::tensor({1.0, 2.0}).view({2, 1}).expand({2, 3});
  CHECK(e.strides() == gb::IntArrayRef({1, 0}));
  check_values(e, {1, 1, 1, 2, 2, 2});
  CHECK_THROWS_WITH_AS(gb::ones({2}).expand({3}), doctest::Contains("must match the existing size (2) at non-singleton dimension 0"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(x.view({5, 5}), doctest::Contains("shape '[5, 5]' is invalid for input of size 24"), gb::Error);
  CHECK_THROWS_WITH_AS(x.select(0, 2), doctest::Contains("index 2 out of range"), gb::IndexError);
  CHECK_THROWS_WITH_AS(x.permute({0, 0, 1}), doctest::Contains("duplicate dims"), gb::Error);
  CHECK_THROWS_WITH_AS(x.t(), doctest::Contains("t() expects a tensor with <= 2 dimensions"), gb::Error);
}

TEST_CASE("gradients flow through every view op") {
  auto x = gb::randn({3, 4}, gbtest::f64_grad());
  auto ck = [&](auto f) { return gbtest::gradcheck1([&](const gb::variable_list& v) { return f(v[0]); }, {x}); };
  CHECK(ck([](const gb::Tensor& a) { return a.view({4, 3}) * 2; }));
  CHECK(ck([](const gb::Tensor& a) { return a.t().reshape({-1}) * a.reshape({-1}); }));
  CHECK(ck([](const gb::Tensor& a) { return a.permute({1, 0}).narrow(0, 1, 2) * 3; }));
  CHECK(ck([](const gb::Tensor& a) { return a.select(1, 2) * a.select(1, 0); }));
  CHECK(ck([](const gb::Tensor& a) { return a.slice(1, 0, 4, 2) * 1.5; }));
  CHECK(ck([](const gb::Tensor& a) { return a.unsqueeze(0).expand({2, 3, 4}) * 1.0; }));
  CHECK(ck([](const gb::Tensor& a) { return a.unsqueeze(1).squeeze(1).flatten() * 2; }));
  CHECK(ck([](const gb::Tensor& a) { return a.index({Slice(1, 3), 2}) * 2; }));
  CHECK(gb::autograd::gradgradcheck([](const gb::variable_list& v) { return gb::variable_list{v[0].select(0, 1) * v[0].select(0, 2)}; }, {x}));
}

TEST_CASE("index_put_ copies (broadcast) or fills through basic indexing, in place, with gradients") {
  using gb::indexing::Slice;
  auto x = gb::zeros({3, 4}, gb::kDouble);
  x.index_put_({Slice(1, 3), 0}, gb::tensor({7.0, 8.0}, gb::kDouble));
  x.index_put_({0}, 1.5);
  x.index_put_({Slice(), Slice(2, gb::indexing::None)}, gb::tensor({-1.0, -2.0}, gb::kDouble));  // broadcast rows
  gbtest::check_values(x, {1.5, 1.5, -1, -2, 7, 0, -1, -2, 8, 0, -1, -2});
  // gradients: the overwritten part of the base gets none; the source gets the indexed gradient
  auto base = gb::ones({2, 3}, gbtest::f64_grad()) * 1.0;
  auto src = gb::full({2}, 4.0, gbtest::f64_grad());
  base.index_put_({Slice(), 1}, src);
  (base * gb::arange(6, gb::kDouble).view({2, 3})).sum().backward();
  gbtest::check_values(src.grad(), {1, 4});
}
