// tests/engine/ops/rearrange_gpu_test.cpp — GPU tier: roll and repeat on cuda (copies through the copy kernel)
// against the cpu, with their gradients.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("roll and repeat on cuda equal the cpu, with their gradients") {
  gb::manual_seed(73);
  gb::Tensor x = gb::randn({3, 4, 5});
  CHECK(gb::equal(gb::roll(x.to(kGpu), {2, -1}, {0, 2}).cpu(), gb::roll(x, {2, -1}, {0, 2})));
  CHECK(gb::equal(gb::roll(x.to(kGpu), {7}, {}).cpu(), gb::roll(x, {7}, {})));  // over the flattened tensor
  CHECK(gb::equal(x.to(kGpu).repeat({2, 1, 3}).cpu(), x.repeat({2, 1, 3})));
  CHECK(gb::equal(x.to(kGpu).repeat({2, 1, 1, 2}).cpu(), x.repeat({2, 1, 1, 2})));  // a new leading dim
  gb::Tensor xc = x.clone().requires_grad_(), xg = x.to(kGpu).requires_grad_();
  gb::Tensor w = gb::randn({6, 4, 10});
  (xc.repeat({2, 1, 2}) * w).sum().backward();
  (xg.repeat({2, 1, 2}) * w.to(kGpu)).sum().backward();
  gbtest::check_close(xg.grad(), xc.grad(), 1e-6, 1e-6);  // each element's copies' gradients summed
  gb::Tensor rc = x.clone().requires_grad_(), rg = x.to(kGpu).requires_grad_();
  gb::Tensor v = gb::randn({3, 4, 5});
  (gb::roll(rc, {1}, {1}) * v).sum().backward();
  (gb::roll(rg, {1}, {1}) * v.to(kGpu)).sum().backward();
  CHECK(gb::equal(rg.grad().cpu(), rc.grad()));
}
