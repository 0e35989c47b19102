// tests/engine/ops/masked_select_gpu_test.cpp — GPU tier: masked_select (with a broadcast mask) and nonzero on cuda
// against the cpu, and masked_select's gradient.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("masked_select and nonzero on cuda equal the cpu") {
  gb::manual_seed(63);
  gb::Tensor x = gb::randn({3, 7}, gb::kDouble);
  gb::Tensor mask = gb::gt(gb::randn({7}), 0);  // broadcast over the rows
  gb::Tensor xc = x.clone().requires_grad_(true), xg = x.to(kGpu).requires_grad_(true);
  gb::Tensor yc = gb::masked_select(xc, mask), yg = gb::masked_select(xg, mask.to(kGpu));
  CHECK(yg.is_cuda());
  gbtest::check_close(yg, yc, 0, 0);
  (yc * yc).sum().backward();
  (yg * yg).sum().backward();
  gbtest::check_close(xg.grad(), xc.grad(), 1e-12, 1e-12);
  gb::Tensor nz = gb::nonzero(x.to(kGpu).gt(0.5));
  CHECK(nz.is_cuda());
  CHECK(gb::equal(nz.cpu(), gb::nonzero(x.gt(0.5))));
  CHECK(gb::masked_select(x.to(kGpu), gb::zeros({3, 7}, gb::kBool).to(kGpu)).numel() == 0);
}
