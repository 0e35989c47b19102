// GPU tier for engine/cuda/check.h: a failed runtime call whose result is dropped stays the thread's last error, which
// the next launch check would report as its own failure; cuda_ok_or_clear and GB_CUDA_CHECK clear it, and a kernel
// launched after them is checked clean.
#include <cuda_runtime.h>

#include "cuda/check.h"
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("gpu: a dropped failure stays the last error; cuda_ok_or_clear and GB_CUDA_CHECK clear it") {
  namespace ck = gb::cuda_kernels;
  gb::Tensor a = gb::ones({8}).to(kGpu);  // the context exists
  void* bogus = reinterpret_cast<void*>(std::uintptr_t(0x10));
  (void)cudaGetLastError();
  (void)cudaFree(bogus);  // the pattern cuda_ok_or_clear replaces
  CHECK(cudaPeekAtLastError() != cudaSuccess);
  (void)cudaGetLastError();

  CHECK_FALSE(ck::cuda_ok_or_clear(cudaFree(bogus)));
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  CHECK_THROWS_WITH(GB_CUDA_CHECK(cudaFreeHost(bogus)), doctest::Contains("cudaFreeHost(bogus) failed at "));
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  CHECK((a + 1).sum().item<float>() == 16.0f);  // the launch checks after it find nothing
}
