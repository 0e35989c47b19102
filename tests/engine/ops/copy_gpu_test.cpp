// tests/engine/ops/copy_gpu_test.cpp — GPU tier for copies between overlapping views of one cuda storage
// (engine/ops/copy.cpp, core/overlap.h): the element-parallel copy kernel reads such a source through a temporary,
// so cuda gives the cpu's result; copy_'s refusals are PyTorch's on cuda as on the cpu.
#include "ops/inplace.h"
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("gpu: overlapping copies on cuda equal the cpu's; partial overlaps of dense views are refused") {
  // rows shifted right by one in place: strided views whose elements overlap
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kInt64}) {
    CAPTURE(gb::to_string(t));
    const gb::Tensor m = gb::arange(4096 * 33).view({4096, 33}).to(t);
    gb::Tensor c = m.clone(), g = m.to(kGpu);
    c.slice(1, 1).copy_(c.slice(1, 0, 32));
    g.slice(1, 1).copy_(g.slice(1, 0, 32));
    CHECK(gb::equal(g.cpu(), c));
    CHECK(gb::equal(c.select(1, 32), m.select(1, 31)));  // the shift itself, not a smear of column 0
    // the other way, and converting dtype on the way
    gb::Tensor c2 = m.clone(), g2 = m.to(kGpu);
    c2.slice(1, 0, 32).copy_(c2.slice(1, 1).to(gb::kDouble));
    g2.slice(1, 0, 32).copy_(g2.slice(1, 1).to(gb::kDouble));
    CHECK(gb::equal(g2.cpu(), c2));
  }
  // a transposed view of the same square block (every element read and written by another thread)
  gb::Tensor sq = gb::arange(1024 * 1024).view({1024, 1024}).to(gb::kFloat);
  gb::Tensor sg = sq.to(kGpu);
  sq.copy_(sq.t().clone());
  gb::detail::copy_into(sg, sg.t());  // the ops' own copy, which takes overlapping operands
  CHECK(gb::equal(sg.cpu(), sq));
  // dense views partly overlapping: PyTorch's error on cuda too
  gb::Tensor x = gb::arange(1 << 20).to(gb::kFloat).to(kGpu);
  CHECK_THROWS_WITH_AS(x.slice(0, 1).copy_(x.slice(0, 0, (1 << 20) - 1)),
                       doctest::Contains("some elements of the input tensor and the written-to tensor refer to a "
                                         "single memory location"),
                       gb::Error);
  gb::Tensor y = x.slice(0, 0, (1 << 20) - 1).clone();
  x.slice(0, 1).copy_(y);  // through a clone, as the error says
  CHECK(x[1].item().to_double() == 0.0);
  CHECK(x[(1 << 20) - 1].item().to_double() == double((1 << 20) - 2));
}
