// tests/engine/ops/index_gpu_test.cpp — GPU tier: index_select, embedding, gather and scatter_add on cuda
// (engine/cuda/index.cu) against the cpu: along every dim, int64 and int32 indices, repeated indices accumulating,
// padding_idx, float16 and int64 values, double backward, and an out-of-range index refused before anything runs,
// naming it.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("index_select on cuda equals the cpu, with gradients of both orders") {
  gb::manual_seed(121);
  gb::Tensor a = gb::randn({4, 5, 6}, gb::kDouble);
  for (gb::ScalarType it : {gb::kInt64, gb::kInt32})
    for (int64_t dim : {0, 1, 2}) {
      CAPTURE(dim);
      gb::Tensor idx = gb::tensor({3, 0, 3, 1}, gb::kInt64).to(it);  // 3 twice: its gradient adds up
      CHECK(gb::equal(gb::index_select(a.to(kGpu), dim, idx.to(kGpu)).cpu(), gb::index_select(a, dim, idx)));
      gb::Tensor ac = a.clone().requires_grad_(), ag = a.to(kGpu).requires_grad_();
      gb::Tensor gc = gb::autograd::grad({gb::index_select(ac, dim, idx).square().sum()}, {ac}, {}, true, true)[0];
      gb::Tensor gg =
          gb::autograd::grad({gb::index_select(ag, dim, idx.to(kGpu)).square().sum()}, {ag}, {}, true, true)[0];
      gbtest::check_close(gg, gc, 1e-12, 1e-12);
      gc.pow(3).sum().backward();
      gg.pow(3).sum().backward();
      gbtest::check_close(ag.grad(), ac.grad(), 1e-12, 1e-12);
    }
  // checked on the device: the op returns at once, the error comes at the next synchronization (here .cpu())
  gb::Tensor bad = gb::index_select(a.to(kGpu), 1, gb::tensor({0, 5}, gb::kInt64).to(kGpu));
  CHECK_THROWS_WITH(bad.cpu(), doctest::Contains(
                                   "index_select() on cuda:0: index 5 is out of bounds for dimension 1 with size 5"));
  CHECK(gb::equal(gb::index_select(a.to(kGpu), 1, gb::tensor({4}, gb::kInt64).to(kGpu)).cpu(),
                  gb::index_select(a, 1, gb::tensor({4}, gb::kInt64))));  // reported once: the device goes on
  gb::index_select(a.to(kGpu), 0, gb::tensor({-1}, gb::kInt64).to(kGpu));
  CHECK_THROWS_WITH(gb::cuda::synchronize(), doctest::Contains("index -1 is out of bounds for dimension 0"));
}

TEST_CASE("embedding on cuda equals the cpu, with padding_idx and float16 weights") {
  gb::manual_seed(122);
  gb::Tensor w = gb::randn({10, 7});
  gb::Tensor ids = gb::tensor({1, 4, 4, 9, 0, 4}, gb::kInt64).reshape({2, 3});
  for (int64_t padding : {-1, 4}) {
    CAPTURE(padding);
    gb::Tensor wc = w.clone().requires_grad_(), wg = w.to(kGpu).requires_grad_();
    gb::Tensor yc = gb::embedding(wc, ids, padding), yg = gb::embedding(wg, ids.to(kGpu), padding);
    CHECK(gb::equal(yg.cpu(), yc));
    gb::Tensor g = gb::randn({2, 3, 7});
    yc.backward(g);
    yg.backward(g.to(kGpu));
    gbtest::check_close(wg.grad(), wc.grad(), 1e-6, 1e-6);  // row 4 three times, or none with padding_idx 4
    CHECK(yg.grad_fn()->name() == "EmbeddingBackward0");
  }
  gb::Tensor wh = w.to(gb::kHalf).to(kGpu).requires_grad_();
  gb::Tensor yh = gb::embedding(wh, ids.to(gb::kInt32).to(kGpu), -1);
  CHECK(yh.scalar_type() == gb::kHalf);
  yh.sum().backward();
  CHECK(wh.grad().scalar_type() == gb::kHalf);
  CHECK(wh.grad().cpu()[4][0].item().to_double() == 3.0);
  CHECK_THROWS_WITH(gb::embedding(w.to(kGpu), gb::tensor({10}, gb::kInt64).to(kGpu), -1).sum().item(),
                    doctest::Contains("embedding() on cuda:0: index 10 is out of bounds"));
}

TEST_CASE("gather and scatter_add on cuda equal the cpu, with their gradients") {
  gb::manual_seed(123);
  gb::Tensor a = gb::randn({3, 5, 4}, gb::kDouble);
  for (int64_t dim : {0, 1, 2}) {
    CAPTURE(dim);
    gb::Tensor idx = gb::randint(0, a.size(dim), {3, 2, 4}).clamp_max(a.size(dim) - 1);  // repeats included
    if (dim != 0) idx = idx.narrow(0, 0, 3);
    CHECK(gb::equal(gb::gather(a.to(kGpu), dim, idx.to(kGpu)).cpu(), gb::gather(a, dim, idx)));
    gb::Tensor src = gb::randn(idx.sizes(), gb::kDouble);
    gbtest::check_close(gb::scatter_add(a.to(kGpu), dim, idx.to(kGpu), src.to(kGpu)), gb::scatter_add(a, dim, idx, src),
                        1e-12, 1e-12);
    gb::Tensor ac = a.clone().requires_grad_(), ag = a.to(kGpu).requires_grad_();
    gb::Tensor w = gb::randn(idx.sizes(), gb::kDouble);
    (gb::gather(ac, dim, idx) * w).sum().backward();
    (gb::gather(ag, dim, idx.to(kGpu)) * w.to(kGpu)).sum().backward();
    gbtest::check_close(ag.grad(), ac.grad(), 1e-12, 1e-12);  // repeated indices add up
  }
  // a transposed (non-contiguous) self, int64 values, float16 adds, the index checked first
  gb::Tensor t = gb::randn({4, 6}).t();
  gb::Tensor i2 = gb::tensor({0, 3, 3, 1, 2, 0}, gb::kInt64).reshape({6, 1});
  CHECK(gb::equal(gb::gather(t.to(kGpu), 1, i2.to(kGpu)).cpu(), gb::gather(t, 1, i2)));
  gb::Tensor counts = gb::zeros({5}, gb::kInt64);
  gb::Tensor ids = gb::tensor({1, 1, 4, 1}, gb::kInt64);
  CHECK(gb::equal(gb::scatter_add(counts.to(kGpu), 0, ids.to(kGpu), gb::ones({4}, gb::kInt64).to(kGpu)).cpu(),
                  gb::tensor({0, 3, 0, 0, 1}, gb::kInt64)));
  gb::Tensor h = gb::scatter_add(gb::zeros({3}, gb::kHalf).to(kGpu), 0, gb::tensor({2, 2}, gb::kInt64).to(kGpu),
                                 gb::full({2}, 0.5, gb::kHalf).to(kGpu));
  CHECK(h.cpu()[2].item().to_double() == 1.0);
  CHECK_THROWS_WITH(gb::gather(a.to(kGpu), 1, gb::full({3, 1, 4}, 5, gb::kInt64).to(kGpu)).cpu(),
                    doctest::Contains("gather() on cuda:0: index 5 is out of bounds for dimension 1 with size 5"));
  gb::Tensor sa = gb::scatter_add(gb::zeros({3}).to(kGpu), 0, gb::tensor({1, 3}, gb::kInt64).to(kGpu),
                                  gb::ones({2}).to(kGpu));
  CHECK_THROWS_WITH(gb::cuda::synchronize(), doctest::Contains("scatter_add() on cuda:0: index 3"));
  CHECK(gb::equal(sa.cpu(), gb::tensor({0.f, 1.f, 0.f})));  // the bad element was skipped, the good one added
}
