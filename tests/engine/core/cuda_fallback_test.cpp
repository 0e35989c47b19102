// tests/engine/core/cuda_fallback_test.cpp — a build without nvcc answers "no CUDA" without throwing; a build with
// it answers through engine/cuda/device.cu (tested in tests/engine/cuda/device_test.cpp).
#include "support/check.h"

TEST_CASE("CPU-only builds report no CUDA and zero devices") {
#ifdef GLASSBOX_WITH_CUDA
  CHECK(gb::cuda::compiled_with_cuda());
#else
  CHECK_FALSE(gb::cuda::compiled_with_cuda());
  CHECK(gb::cuda::device_count() == 0);
  CHECK_FALSE(gb::cuda::is_available());
#endif
  CHECK_NOTHROW(gb::cuda::is_available());
}
