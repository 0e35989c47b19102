// tests/support/gpu_main.cpp — the main of the GPU tier (label gpu): without a usable CUDA device the test exits 77,
// which CTest reports as skipped, after one line saying why; GLASSBOX_EXPECT_GPU=1 (bench/gpu/run.sh sets it) makes
// a missing device a failure instead. A test that needs several GPUs (GLASSBOX_GPU_MIN_DEVICES) skips with fewer.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "glassbox/core/cuda.h"
#include "support/run_tests.h"

int main(int argc, char** argv) {
  if (!gb::cuda::is_available()) {
    const char* expect = std::getenv("GLASSBOX_EXPECT_GPU");
    const bool required = expect && std::string(expect) == "1";
    std::cout << (required ? "FAILED" : "skipped") << ": no usable CUDA device: " << gb::cuda::unavailable_reason()
              << "\n";
    return required ? 1 : 77;
  }
  // a multi-GPU test (GLASSBOX_GPU_MIN_DEVICES=n) skips on a machine with fewer GPUs, also under EXPECT_GPU
  const char* min_devices = std::getenv("GLASSBOX_GPU_MIN_DEVICES");
  if (min_devices && gb::cuda::device_count() < std::atoll(min_devices)) {
    std::cout << "skipped: needs " << min_devices << " GPUs, this machine has " << gb::cuda::device_count() << "\n";
    return 77;
  }
  return gbtest::run_tests(argc, argv);
}
