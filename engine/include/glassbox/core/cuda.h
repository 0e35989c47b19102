// glassbox/core/cuda.h — whether this build and this machine can run CUDA (torch::cuda::is_available).
//
// A build with nvcc compiles the CUDA sources; the machine still needs a driver and a device. Both questions are
// answered without throwing, so code and tests can branch: if (gb::cuda::is_available()) { ... }.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace gb::cuda {

bool compiled_with_cuda();   // built with nvcc (GLASSBOX_CUDA=ON and nvcc found)
int64_t device_count();      // 0 without a driver or device, or in a CPU-only build
bool is_available();         // device_count() > 0
// Why is_available() is false, in one line naming the missing piece ("no NVIDIA driver: libcuda.so.1 is not on this
// machine ..."); empty when it is true. `glassbox env` gives the whole picture (driver, libraries, GPUs).
std::string unavailable_reason();

// Waits until every stream of the device (-1: the current device) has finished its work (cudaDeviceSynchronize).
// Throws gb::Error with unavailable_reason() when CUDA is not available.
void synchronize(int64_t device_index = -1);

// Throws gb::Error naming the device and why, unless `index` is a CUDA device this process can use (-1: the
// current one). Every entry to cuda:N calls it first, so the first error a user sees is the real one.
void check_device_index(int64_t index);

// torch::cuda::manual_seed / manual_seed_all: the seed of the current device's (or every device's) random
// generator, which cuda random ops (dropout) draw from: Philox4x32-10 counters keyed by the seed, an offset that
// each call advances past the numbers it used, and the element's index. gb::manual_seed seeds them too, as
// torch::manual_seed does. Needs no device: the generators are host-side state until a kernel reads them.
void manual_seed(uint64_t seed);
void manual_seed_all(uint64_t seed);

}  // namespace gb::cuda

// torch.backends.cuda.matmul.allow_tf32: float32 matrix products on cuda may use TF32 tensor cores (10-bit
// mantissa inputs, float32 accumulation). Off by default, as in PyTorch since 1.12.
namespace gb::backends::cuda::matmul {
inline std::atomic<bool> allow_tf32{false};
}  // namespace gb::backends::cuda::matmul
