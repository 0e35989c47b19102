// GPU tier for cumsum on cuda (engine/cuda/cumsum.cu): the cpu's bits for float32/64 and integers along every dim,
// float16 within its rounding, and the gradient (a reversed running sum, through flip).
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("gpu: cumsum on cuda equals the cpu along every dim, with its gradient") {
  gb::manual_seed(91);
  const gb::Tensor x = gb::randn({3, 40, 5});
  for (int64_t d = 0; d < 3; ++d) {
    CAPTURE(d);
    CHECK(gb::equal(gb::cumsum(x.to(kGpu), d).cpu(), gb::cumsum(x, d)));
    CHECK(gb::equal(gb::cumsum(x.to(gb::kDouble).to(kGpu), d).cpu(), gb::cumsum(x.to(gb::kDouble), d)));
  }
  const gb::Tensor i = gb::randint(-5, 5, {7, 9});
  CHECK(gb::equal(gb::cumsum(i.to(kGpu), 1).cpu(), gb::cumsum(i, 1)));
  CHECK(gb::equal(gb::cumsum(i.to(gb::kInt32).to(kGpu), 0).cpu(), gb::cumsum(i.to(gb::kInt32), 0)));
  gbtest::check_close(gb::cumsum(x.to(gb::kHalf).to(kGpu), 1), gb::cumsum(x.to(gb::kHalf), 1), 1e-2, 1e-2);
  gb::Tensor a = x.clone().requires_grad_(true), b = x.to(kGpu).requires_grad_(true);
  (gb::cumsum(a, 1) * gb::cumsum(a, 1)).sum().backward();
  (gb::cumsum(b, 1) * gb::cumsum(b, 1)).sum().backward();
  gbtest::check_close(b.grad(), a.grad(), 1e-5, 1e-5);
}
