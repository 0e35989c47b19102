// tests/engine/ops/join_gpu_test.cpp — GPU tier: cat and stack on cuda (the copy kernel into slices of the output)
// against the cpu, along every dim, with dtype promotion and the legacy empty input, and their gradients.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("cat and stack on cuda equal the cpu, with their gradients") {
  gb::manual_seed(71);
  gb::Tensor a = gb::randn({2, 3, 4}), b = gb::randn({2, 5, 4}), c = gb::randn({2, 3, 4});
  for (int64_t d : {0, 1, 2}) {
    CAPTURE(d);
    gb::Tensor bb = d == 1 ? b : c;  // sizes match except in dim d
    CHECK(gb::equal(gb::cat({a.to(kGpu), bb.to(kGpu)}, d).cpu(), gb::cat({a, bb}, d)));
    CHECK(gb::equal(gb::stack({a.to(kGpu), c.to(kGpu)}, d).cpu(), gb::stack({a, c}, d)));
  }
  // promotion (float + double -> double), a transposed input, the legacy 1-d empty input skipped
  gb::Tensor out =
      gb::cat({a.to(kGpu), c.to(gb::kDouble).to(kGpu).transpose(1, 2).transpose(1, 2), gb::empty({0}).to(kGpu)}, 0);
  CHECK(out.scalar_type() == gb::kDouble);
  CHECK(gb::equal(out.cpu(), gb::cat({a.to(gb::kDouble), c.to(gb::kDouble)}, 0)));
  // gradients: slices of the incoming gradient
  gb::Tensor ag = a.to(kGpu).requires_grad_(), bg = b.to(kGpu).requires_grad_();
  gb::Tensor w = gb::randn({2, 8, 4});
  (gb::cat({ag, bg}, 1) * w.to(kGpu)).sum().backward();
  CHECK(gb::equal(ag.grad().cpu(), w.narrow(1, 0, 3)));
  CHECK(gb::equal(bg.grad().cpu(), w.narrow(1, 3, 5)));
  gb::Tensor cg = c.to(kGpu).requires_grad_();
  (gb::stack({ag, cg}, 2) * gb::randn({2, 3, 2, 4}).to(kGpu)).sum().backward();
  CHECK(cg.grad().device() == kGpu);
  // tensors on two devices are refused, naming both
  CHECK_THROWS_WITH(gb::cat({a, b.to(kGpu)}, 1), doctest::Contains("cuda"));
}
