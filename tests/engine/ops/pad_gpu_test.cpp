// tests/engine/ops/pad_gpu_test.cpp — GPU tier: constant_pad_nd on cuda (a fill, then the copy kernel inside)
// against the cpu, padding and cropping, with its gradient.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("constant_pad_nd on cuda pads and crops as on the cpu, with its gradient") {
  gb::manual_seed(72);
  gb::Tensor x = gb::randn({2, 3, 5, 6});
  for (std::vector<int64_t> pad : {std::vector<int64_t>{1, 2}, {1, 1, 2, 0}, {-1, 2, 0, -2}, {0, 0, 0, 0, 1, 1}}) {
    CAPTURE(pad);
    CHECK(gb::equal(gb::constant_pad_nd(x.to(kGpu), pad, 1.5).cpu(), gb::constant_pad_nd(x, pad, 1.5)));
    gb::Tensor xc = x.clone().requires_grad_(), xg = x.to(kGpu).requires_grad_();
    gb::Tensor yc = gb::constant_pad_nd(xc, pad, 0), yg = gb::constant_pad_nd(xg, pad, 0);
    gb::Tensor g = gb::randn(yc.sizes());
    yc.backward(g);
    yg.backward(g.to(kGpu));
    CHECK(gb::equal(xg.grad().cpu(), xc.grad()));
  }
}
