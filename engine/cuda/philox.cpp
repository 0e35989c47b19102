// engine/cuda/philox.cpp — the cuda generators' host-side state (see philox.h) and torch::cuda::manual_seed(_all).
// Host code only: it builds without CUDA too, where the seeds are kept and never read.
#include "cuda/philox.h"

#include <array>
#include <mutex>

#include "glassbox/core/cuda.h"
#include "glassbox/core/cuda_stream.h"
#include "glassbox/core/error.h"

namespace gb {
namespace cuda_kernels {
namespace {

constexpr int kMaxDevices = 64;
constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default_rng_seed_val, as gb::Generator's

struct Generators {
  std::mutex mu;
  std::array<PhiloxSeed, kMaxDevices> state;
  Generators() { state.fill(PhiloxSeed{kDefaultSeed, 0}); }
};

Generators& generators() {
  static Generators g;
  return g;
}

}  // namespace

PhiloxSeed philox_reserve(int device, uint64_t increment) {
  GB_CHECK(device >= 0 && device < kMaxDevices, "cuda random generator: device index ", device, " out of range");
  Generators& g = generators();
  std::lock_guard<std::mutex> lock(g.mu);
  const PhiloxSeed now = g.state[size_t(device)];
  g.state[size_t(device)].offset += increment;
  return now;
}

void philox_seed_all(uint64_t seed) {
  Generators& g = generators();
  std::lock_guard<std::mutex> lock(g.mu);
  g.state.fill(PhiloxSeed{seed, 0});
}

}  // namespace cuda_kernels

namespace cuda {

void manual_seed(uint64_t seed) {
  const int device = is_available() ? current_device() : 0;
  std::lock_guard<std::mutex> lock(cuda_kernels::generators().mu);
  cuda_kernels::generators().state[size_t(device)] = cuda_kernels::PhiloxSeed{seed, 0};
}

void manual_seed_all(uint64_t seed) { cuda_kernels::philox_seed_all(seed); }

}  // namespace cuda
}  // namespace gb
