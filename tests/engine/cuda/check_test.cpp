// tests/engine/cuda/check_test.cpp — engine/cuda/check.h on a machine without a usable device, where every runtime
// call fails: GB_CUDA_CHECK throws naming the call and its site, cuda_ok_or_clear answers false (true for success)
// without throwing, DeviceGuard throws and its std::nothrow form does not. (That the failure is cleared from the last
// error needs a device: without a driver the runtime's error is sticky; tests/engine/cuda/check_gpu_test.cpp.)
#include "support/check.h"

#ifdef GLASSBOX_WITH_CUDA
#include "cuda/check.h"

TEST_CASE("without a device: GB_CUDA_CHECK throws naming the call, cuda_ok_or_clear and nothrow guards do not") {
  if (gb::cuda::is_available()) return;  // needs calls that fail: this machine has a device (the GPU tier checks)
  namespace ck = gb::cuda_kernels;
  void* bogus = reinterpret_cast<void*>(std::uintptr_t(0x10));
  CHECK_FALSE(ck::cuda_ok_or_clear(cudaFree(bogus)));
  CHECK(ck::cuda_ok_or_clear(cudaSuccess));
  CHECK_THROWS_WITH(GB_CUDA_CHECK(cudaFreeHost(bogus)), doctest::Contains("cudaFreeHost(bogus) failed at "));
  CHECK_THROWS(ck::DeviceGuard(1));
  CHECK_NOTHROW(ck::DeviceGuard(1, std::nothrow));
}
#else
TEST_CASE("a build without CUDA says so") { CHECK_FALSE(gb::cuda::compiled_with_cuda()); }
#endif
