// Tests engine/core/composed.h: every op whose cuda path is a composition of other ops computes, on that path, what
// its cpu loop computes — run on the cpu under ComposedPathForTest, element for element (NaN, Inf, ties, empty
// dims, broadcasting, 16-bit dtypes), with the op's own gradient on top.
#include "core/composed.h"
#include "support/check.h"

using gb::detail::ComposedPathForTest;

namespace {

// f() on the cpu loop and on the composed path.
template <class F>
void same(const F& f, double rtol = 0, double atol = 0) {
  const gb::Tensor loop = f();
  gb::Tensor composed;
  {
    ComposedPathForTest on;
    composed = f();
  }
  REQUIRE(composed.scalar_type() == loop.scalar_type());
  gbtest::check_close(composed, loop, rtol, atol);
}

gb::Tensor with_specials() {  // finite values, ties, +-0, NaN and infinities
  return gb::tensor(std::vector<float>{3, -1, 3, 0, -0.f, NAN, INFINITY, -INFINITY, 2, 3, -7, 0.5}).view({3, 4});
}

}  // namespace

TEST_CASE(
    "composed: logical ops, float predicates, clamp with tensor bounds, lerp, addcmul/addcdiv, masked_fill, "
    "tril/triu equal the loops") {
  const gb::Tensor x = with_specials(), y = gb::tensor(std::vector<int64_t>{0, 1, 2, 0}), b = gb::gt(x, 0);
  same([&] { return gb::logical_not(x); });
  same([&] { return gb::logical_not(b); });
  same([&] { return gb::logical_and(x, y); });  // broadcast (3,4) with (4)
  same([&] { return gb::logical_or(b, y); });
  same([&] { return gb::isnan(x); });
  same([&] { return gb::isinf(x); });
  same([&] { return gb::isfinite(x); });
  same([&] { return gb::isfinite(x.to(gb::kHalf)); });
  same([&] { return gb::masked_fill(x, b, -2.5); });
  same([&] { return gb::masked_fill(y, gb::tensor(std::vector<bool>{true, false, true, false}), 9); });
  same([&] { return gb::clamp(x, gb::tensor(std::vector<float>{0, NAN, -1, 2}), std::nullopt); });  // a NaN bound
  same([&] { return gb::clamp(y, std::nullopt, gb::tensor(std::vector<int64_t>{1, 1, 1, 1}).view({1, 4})); });
  same([&] { return gb::clamp(x, gb::full({3, 1}, -0.5), gb::full({4}, 2.5)); });
  same([&] { return gb::lerp(x, x * 2, 0.3); });
  same([&] { return gb::lerp(x.to(gb::kDouble), gb::ones({4}, gb::kDouble), 0.75); });
  same([&] { return gb::addcmul(x, x, gb::full({4}, 0.5), 3); });
  same([&] { return gb::addcdiv(x.to(gb::kDouble), gb::ones({3, 4}, gb::kDouble), x.to(gb::kDouble) + 9, -2); });
  same([&] {
    gb::Tensor c = gb::zeros({3, 4});
    c.addcmul_(x, x, 0.5);
    c.lerp_(gb::ones({3, 4}), 0.6);
    return c;
  });
  same([&] { return gb::tril(x, -1); });
  same([&] { return gb::triu(x.to(gb::kDouble), 1); });
  same([&] {
    gb::Tensor c = x.clone();
    c.masked_fill_(b, 7);
    return c;
  });
  gb::Tensor a = gb::randn({3, 4}, gb::kDouble).requires_grad_(true);
  gb::Tensor g1 = gb::autograd::grad({gb::tril(a).square().sum()}, {a})[0], g2;
  {
    ComposedPathForTest on;
    g2 = gb::autograd::grad({gb::tril(a).square().sum()}, {a})[0];
  }
  gbtest::check_close(g2, g1, 0, 0);
}

TEST_CASE("composed: equal, allclose, all, any answer as the loops") {
  const gb::Tensor x = with_specials();
  for (bool composed : {false, true}) {
    CAPTURE(composed);
    std::optional<ComposedPathForTest> on;
    if (composed) on.emplace();
    CHECK(gb::equal(gb::ones({2, 3}), gb::ones({2, 3})));
    CHECK(!gb::equal(gb::ones({2, 3}), gb::tensor(std::vector<float>{1, 1, 1, 1, 0, 1}).view({2, 3})));
    CHECK(!gb::equal(x, x));  // NaN != NaN
    CHECK(gb::allclose(gb::tensor({1.0, 2.0}), gb::tensor({1.0 + 1e-9, 2.0})));
    CHECK(!gb::allclose(gb::tensor({1.0, 2.0}), gb::tensor({1.1, 2.0})));
    CHECK(!gb::allclose(x, x));
    CHECK(gb::allclose(x, x, 1e-5, 1e-8, /*equal_nan=*/true));
    CHECK(!gb::allclose(gb::tensor({double(INFINITY)}), gb::tensor({1e30})));
    CHECK(gb::all(gb::ones({3})).item<bool>());
    CHECK(!gb::all(gb::tensor(std::vector<int64_t>{1, 0})).item<bool>());
    CHECK(gb::any(x).item<bool>());
    CHECK(!gb::any(gb::zeros({0})).item<bool>());
    CHECK(gb::all(gb::zeros({0})).item<bool>());
  }
}

TEST_CASE("composed: argmax/argmin, max/min over a dim, var/std, norm, logsumexp equal the loops") {
  const gb::Tensor x = gb::tensor(std::vector<float>{3, -1, 3, 0, 5, 5, -2, 1, 0, NAN, 4, -9}).view({3, 4});
  const gb::Tensor r = gb::randn({4, 5, 6}, gb::kDouble);
  same([&] { return gb::argmax(x); });  // NaN wins
  same([&] { return gb::argmin(r); });
  same([&] { return gb::argmax(x, 1, false); });  // ties: the first
  same([&] { return gb::argmin(x, 0, true); });
  same([&] { return gb::argmax(gb::tensor(std::vector<int64_t>{4, 9, 9, 1}), 0, false); });
  same([&] { return std::get<0>(gb::max(x, 1, false)); });
  same([&] { return std::get<1>(gb::max(x, 1, false)); });
  for (int64_t dim : {0, 1})  // the gradient goes to the index picked (MaxBackward0's mask, on the device on cuda)
    same([&] {
      gb::Tensor leaf = gb::tensor(std::vector<double>{3, -1, 2, 0, 5, 4, -2, 7, 1, 6, 8, -3}).view({3, 4});
      leaf.requires_grad_();
      (std::get<0>(gb::min(leaf, dim, true)) * 2.0).sum().backward();
      return leaf.grad();
    });
  same([&] { return std::get<1>(gb::min(r, 2, true)); });
  same([&] { return gb::var(r, {1}, 1, false); }, 1e-12, 1e-12);
  same([&] { return gb::std(r, {0, 2}, 0, true); }, 1e-12, 1e-12);
  same([&] { return std::get<1>(gb::var_mean(r, {2}, 1, false)); }, 1e-12, 1e-12);
  for (double p : {0.0, 1.0, 2.0, 3.0, double(INFINITY), -double(INFINITY)}) {
    CAPTURE(p);
    same([&] { return gb::norm(r, p, {1}, false); }, 1e-12, 1e-12);
    same([&] { return gb::norm(r.to(gb::kFloat), p, {}, false); }, 1e-6, 1e-6);
  }
  same([&] { return gb::logsumexp(r, {2}, false); }, 1e-12, 1e-12);
  same([&] {
    return gb::logsumexp(gb::tensor(std::vector<float>{-INFINITY, -INFINITY, 1, INFINITY}).view({2, 2}), {1}, true);
  });
  // the op's own gradient runs on top of the composed forward
  gb::Tensor a = r.clone().requires_grad_(true);
  gb::Tensor g1 = gb::autograd::grad({gb::logsumexp(a, {1}, false).sum() + gb::norm(a, 2, {2}, false).sum()}, {a})[0];
  gb::Tensor g2;
  {
    ComposedPathForTest on;
    g2 = gb::autograd::grad({gb::logsumexp(a, {1}, false).sum() + gb::norm(a, 2, {2}, false).sum()}, {a})[0];
  }
  gbtest::check_close(g2, g1, 1e-12, 1e-12);
}

TEST_CASE("composed: flip and the pointwise losses (mse, l1, smooth_l1, huber, bce, bce with logits) equal the loops") {
  const gb::Tensor r = gb::randn({4, 5, 6}, gb::kDouble);
  same([&] { return gb::flip(r, {0, 2}); });
  same([&] { return gb::flip(gb::arange(5), {0}); });
  const gb::Tensor t = gb::randn({5, 6}, gb::kDouble);  // broadcast against r
  for (gb::Reduction red : {gb::Reduction::Mean, gb::Reduction::Sum, gb::Reduction::None}) {
    CAPTURE(int(red));
    same([&] { return gb::mse_loss(r, t, red); }, 1e-12, 1e-12);
    same([&] { return gb::l1_loss(r, t, red); }, 1e-12, 1e-12);
    same([&] { return gb::smooth_l1_loss(r, t, red, 0.7); }, 1e-12, 1e-12);
    same([&] { return gb::huber_loss(r, t, red, 0.7); }, 1e-12, 1e-12);
    same([&] { return gb::mse_loss(r.to(gb::kHalf), t.to(gb::kHalf), red); }, 1e-3, 1e-3);
    const gb::Tensor p = gb::sigmoid(r), y = gb::rand({4, 5, 6}, gb::kDouble), w = gb::rand({6}, gb::kDouble);
    same([&] { return gb::binary_cross_entropy(p, y, w, red); }, 1e-12, 1e-12);
    same([&] { return gb::binary_cross_entropy(gb::tensor({0.0, 1.0}), gb::tensor({1.0, 0.0}), {}, red); });  // -100
    same([&] { return gb::binary_cross_entropy_with_logits(r * 30, y, w, w * 3, red); }, 1e-12, 1e-12);
    same([&] { return gb::binary_cross_entropy_with_logits(r, y, {}, {}, red); }, 1e-12, 1e-12);
  }
  {
    ComposedPathForTest on;
    CHECK_THROWS_WITH(gb::binary_cross_entropy(gb::tensor({1.5}), gb::tensor({1.0})),
                      doctest::Contains("between 0 and 1"));
  }
  gb::Tensor a = r.clone().requires_grad_(true);
  gb::Tensor g1 =
      gb::autograd::grad({gb::l1_loss(a, t) + gb::huber_loss(a.flip({1}), t, gb::Reduction::Sum, 0.5)}, {a})[0];
  gb::Tensor g2;
  {
    ComposedPathForTest on;
    g2 = gb::autograd::grad({gb::l1_loss(a, t) + gb::huber_loss(a.flip({1}), t, gb::Reduction::Sum, 0.5)}, {a})[0];
  }
  gbtest::check_close(g2, g1, 1e-12, 1e-12);
}

TEST_CASE("composed: index() with integer tensors keeps them on the device: the host plan's values and errors") {
  using namespace gb::indexing;
  const gb::Tensor x = gb::randn({4, 5, 6}, gb::kDouble);
  const gb::Tensor rows = gb::tensor(std::vector<int64_t>{3, -1, 0, 3}),
                   cols = gb::tensor(std::vector<int64_t>{1, -6, 4, 0});
  same([&] { return x.index({rows}); });
  same([&] { return x.index({Slice(), gb::tensor(std::vector<int32_t>{1, -5, 4, 0})}); });
  same([&] { return x.index({rows, Slice(), cols}); });  // apart: the indexed dims first
  same([&] { return x.index({rows.view({2, 2}), gb::tensor(std::vector<int64_t>{1, -5, 4, 0}).view({2, 2})}); });
  same([&] { return x.index({Slice(), gb::tensor(std::vector<int64_t>{}), Slice()}); });  // empty
  same([&] { return x.index({gb::gt(x, 0)}); });                                          // a mask: the host plan
  gb::Tensor a = x.clone().requires_grad_(true);
  gb::Tensor g1 = gb::autograd::grad({a.index({rows, Slice(), cols}).square().sum()}, {a})[0], g2;
  {
    ComposedPathForTest on;
    g2 = gb::autograd::grad({a.index({rows, Slice(), cols}).square().sum()}, {a})[0];
    CHECK_THROWS_WITH(x.index({Slice(), gb::tensor(std::vector<int64_t>{0, 5})}),
                      doctest::Contains("index 5 is out of bounds for dimension 1 with size 5"));
    CHECK_THROWS_WITH(x.index({gb::tensor(std::vector<int64_t>{-5})}),
                      doctest::Contains("index -5 is out of bounds for dimension 0 with size 4"));
  }
  gbtest::check_close(g2, g1, 0, 0);
}
