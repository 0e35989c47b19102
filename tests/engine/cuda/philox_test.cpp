// tests/engine/cuda/philox_test.cpp — the cuda generators' host-side state on any machine (no device needed): each
// reservation hands out the current (seed, offset) and moves the offset past it, per device; gb::manual_seed and
// gb::cuda::manual_seed_all reset seed and offset on every device.
#include "cuda/philox.h"
#include "support/check.h"

namespace ck = gb::cuda_kernels;

TEST_CASE("reservations advance each device's offset; manual_seed resets every device") {
  gb::manual_seed(7);
  ck::PhiloxSeed a = ck::philox_reserve(0, 4), b = ck::philox_reserve(0, 4), c = ck::philox_reserve(1, 12);
  CHECK(a.seed == 7);
  CHECK(a.offset == 0);
  CHECK(b.offset == 4);  // past the 4 numbers a took
  CHECK(c.seed == 7);
  CHECK(c.offset == 0);  // device 1 has its own offset
  CHECK(ck::philox_reserve(1, 1).offset == 12);
  gb::cuda::manual_seed_all(11);
  ck::PhiloxSeed d = ck::philox_reserve(0, 4), e = ck::philox_reserve(1, 4);
  CHECK(d.seed == 11);
  CHECK(d.offset == 0);
  CHECK(e.seed == 11);
  CHECK(e.offset == 0);
  gb::manual_seed(7);
  CHECK(ck::philox_reserve(0, 4).offset == 0);
  CHECK(ck::philox_reserve(0, 4).seed == 7);
  CHECK_THROWS_WITH(ck::philox_reserve(64, 1), doctest::Contains("out of range"));
}
