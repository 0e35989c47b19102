// tests/engine/cuda/device_test.cpp — device discovery answers consistently and never throws (gpu tier: on a
// machine without a GPU it checks the "no device" answers; with one, that at least one device is seen).
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "support/check.h"

TEST_CASE("device discovery is consistent") {
  int64_t n = gb::cuda::device_count();
  CHECK(n >= 0);
  CHECK(gb::cuda::is_available() == (n > 0));
  if (!gb::cuda::compiled_with_cuda()) CHECK(n == 0);
  // is_available() false comes with its reason, naming the piece; true with none.
  const std::string why = gb::cuda::unavailable_reason();
  CHECK(why.empty() == gb::cuda::is_available());
  if (!gb::cuda::compiled_with_cuda()) CHECK(why.find("built without CUDA") != std::string::npos);
  if (gb::cuda::compiled_with_cuda() && n == 0 && !dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) &&
      !dlopen("libcuda.so.1", RTLD_LAZY))  // this machine and CI: the toolkit, no driver
    CHECK(why.rfind("no NVIDIA driver: libcuda.so.1 is not on this machine", 0) == 0);
  // GLASSBOX_EXPECT_GPU=1 is set by the GPU runner: there the device must be found.
  if (const char* e = std::getenv("GLASSBOX_EXPECT_GPU"); e && std::string(e) == "1") {
    CHECK(gb::cuda::compiled_with_cuda());
    CHECK(n > 0);
  }
}
