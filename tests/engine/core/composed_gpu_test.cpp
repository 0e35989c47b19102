// GPU tier for engine/core/composed.h: the composed ops on cuda equal the cpu — logical ops, float predicates,
// masked_fill, tril/triu, equal/allclose/all/any, argmax/argmin, max/min over a dim, var/std, norm, logsumexp, flip,
// dot/outer and the pointwise losses (with gradients).
#include "support/check.h"

using gbtest::kGpu;

namespace {
template <class F>
void on_both(const F& f, double rtol = 0, double atol = 0) {
  gbtest::check_close(f(kGpu), f(gb::Device(gb::kCPU)), rtol, atol);
}
}  // namespace

TEST_CASE("gpu: composed ops equal the cpu") {
  gb::manual_seed(81);
  const gb::Tensor x = gb::tensor(std::vector<float>{3, -1, 3, 0, 5, 5, -2, 1, 0, NAN, INFINITY, -9}).view({3, 4});
  const gb::Tensor r = gb::randn({4, 5, 6}, gb::kDouble), t = gb::randn({5, 6}, gb::kDouble);
  on_both([&](gb::Device d) { return gb::logical_and(x.to(d), gb::gt(x, 0).to(d)); });
  on_both([&](gb::Device d) { return gb::logical_or(x.to(d), gb::lt(x, 0).to(d)); });
  on_both([&](gb::Device d) { return gb::logical_not(x.to(d)); });
  on_both([&](gb::Device d) { return gb::isnan(x.to(d)); });
  on_both([&](gb::Device d) { return gb::isinf(x.to(d)); });
  on_both([&](gb::Device d) { return gb::isfinite(x.to(d)); });
  on_both([&](gb::Device d) { return gb::masked_fill(x.to(d), gb::gt(x, 1).to(d), 0.25); });
  on_both([&](gb::Device d) { return gb::tril(r.to(d), 1); });
  on_both([&](gb::Device d) { return gb::argmax(x.to(d), 1, false); });
  on_both([&](gb::Device d) { return gb::argmin(r.to(d)); });
  on_both([&](gb::Device d) { return std::get<1>(gb::max(r.to(d), 2, true)); });
  on_both([&](gb::Device d) { return gb::var(r.to(d), {1}, 1, false); }, 1e-12, 1e-12);
  on_both([&](gb::Device d) { return gb::norm(r.to(d), 3, {2}, false); }, 1e-12, 1e-12);
  on_both([&](gb::Device d) { return gb::logsumexp(r.to(d), {0}, false); }, 1e-12, 1e-12);
  on_both([&](gb::Device d) { return gb::flip(r.to(d), {1}); });
  on_both([&](gb::Device d) { return gb::dot(t[0].to(d), t[1].to(d)); }, 1e-12, 1e-12);
  on_both([&](gb::Device d) { return gb::outer(t[0].to(d), t[1].to(d)); });
  on_both([&](gb::Device d) { return gb::mse_loss(r.to(d), t.to(d)); }, 1e-12, 1e-12);
  on_both([&](gb::Device d) { return gb::huber_loss(r.to(d), t.to(d), gb::Reduction::None, 0.5); }, 1e-12, 1e-12);
  on_both([&](gb::Device d) { return gb::kl_div(r.to(d), t.to(d).softmax(1), gb::Reduction::Sum); }, 1e-12, 1e-12);
  on_both(
      [&](gb::Device d) {
        return gb::binary_cross_entropy_with_logits(r.to(d), gb::rand({4, 5, 6}, gb::kDouble).to(d), {}, {});
      },
      1e-12, 1e-12);
  on_both(
      [&](gb::Device d) {
        return gb::binary_cross_entropy(gb::sigmoid(r).to(d), gb::rand({4, 5, 6}, gb::kDouble).to(d));
      },
      1e-12, 1e-12);
  CHECK(gb::equal(r.to(kGpu), r.to(kGpu)));
  CHECK(!gb::allclose(r.to(kGpu), (r + 1e-3).to(kGpu)));
  CHECK(gb::any(x.to(kGpu)).item<bool>());
  on_both(
      [&](gb::Device d) {
        gb::Tensor a = r.to(d).requires_grad_(true);
        return gb::autograd::grad({gb::smooth_l1_loss(a, t.to(d)) + gb::logsumexp(a, {2}, false).sum()}, {a})[0];
      },
      1e-12, 1e-12);
}

TEST_CASE("gpu: reflect/replicate/circular pad, upsample, one_hot and the random fills on cuda") {
  gb::manual_seed(82);
  const gb::Tensor img = gb::randn({2, 3, 5, 6});
  for (const char* mode : {"reflect", "replicate", "circular"})
    on_both([&](gb::Device d) { return gb::pad(img.to(d), {2, 1, 1, 3}, mode); });
  on_both([&](gb::Device d) { return gb::upsample(img.to(d), {10, 12}, "bilinear", false, {}); }, 1e-6, 1e-6);
  on_both([&](gb::Device d) { return gb::upsample(img.to(d), {7, 9}, "nearest", false, {}); });
  const gb::Tensor cls = gb::tensor(std::vector<int64_t>{3, 0, 2});
  on_both([&](gb::Device d) { return gb::one_hot(cls.to(d), 5); });
  on_both([&](gb::Device d) {  // the host generator's draws: the cpu's numbers on every device
    gb::manual_seed(5);
    gb::Tensor t = gb::empty({7, 3}, gb::TensorOptions().device(d));
    t.normal_(1, 2);
    gb::Tensor u = gb::empty({4}, gb::TensorOptions().device(d));
    u.uniform_(-1, 1);
    return gb::cat({t.view({-1}), u, gb::bernoulli(gb::full({5}, 0.5).to(d))});
  });
}

TEST_CASE("gpu: prod on cuda (the row reduction's product) equals the cpu, with its gradient") {
  gb::manual_seed(83);
  const gb::Tensor x = gb::rand({6, 9}, gb::kDouble) + 0.5;
  gbtest::check_close(gb::prod(x.to(kGpu)), gb::prod(x), 1e-12, 1e-12);
  gbtest::check_close(gb::prod(x.to(kGpu), 1, true), gb::prod(x, 1, true), 1e-12, 1e-12);
  CHECK(gb::equal(gb::prod(gb::tensor(std::vector<int64_t>{3, -2, 5}).to(kGpu)).cpu(), gb::tensor(int64_t(-30))));
  gb::Tensor a = x.clone().requires_grad_(true), b = x.to(kGpu).requires_grad_(true);
  gb::prod(a, 0, false).sum().backward();
  gb::prod(b, 0, false).sum().backward();
  gbtest::check_close(b.grad(), a.grad(), 1e-10, 1e-12);
}

TEST_CASE("gpu: clamp with tensor bounds, lerp, addcmul/addcdiv (the generic optimizer steps' ops) on cuda") {
  gb::manual_seed(84);
  const gb::Tensor x = gb::randn({8, 16}, gb::kDouble), y = gb::rand({8, 16}, gb::kDouble) + 0.1;
  on_both([&](gb::Device d) { return gb::clamp(x.to(d), gb::full({16}, -0.5, gb::kDouble).to(d), std::nullopt); });
  on_both([&](gb::Device d) { return gb::lerp(x.to(d), y.to(d), 0.8); }, 1e-15, 1e-15);
  on_both([&](gb::Device d) {
    gb::Tensor s = x.to(d).clone();
    s.addcmul_(x.to(d), y.to(d), 0.1).addcdiv_(x.to(d), y.to(d), -0.01).clamp_(-1, 1);
    return s;
  }, 1e-15, 1e-15);
  // a traced-style generic Adam step (what runs on cuda while the monitor is active)
  on_both([&](gb::Device d) {
    gb::manual_seed(7);
    gb::Tensor p = x.to(d).clone().requires_grad_(true);
    gb::optim::Adam opt({p}, gb::optim::AdamOptions(0.1).amsgrad(true));
    for (int i = 0; i < 3; ++i) {
      opt.zero_grad();
      (p * p * y.to(d)).sum().backward();
      opt.step();
    }
    return p.detach();
  }, 1e-6, 1e-6);
}
