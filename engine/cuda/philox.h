// engine/cuda/philox.h — the cuda devices' random generators as the kernels need them (internal; host code, in
// every build): per device a seed and an offset. A random op reserves the numbers it will use: it gets the current
// (seed, offset) and the offset moves past them, so the next op draws fresh numbers (PyTorch's Philox
// seed/offset scheme). gb::cuda::manual_seed(_all) and gb::manual_seed set the seeds and reset the offsets.
#pragma once

#include <cstdint>

namespace gb::cuda_kernels {

struct PhiloxSeed {
  uint64_t seed = 0, offset = 0;
};

// The (seed, offset) for an op on `device` that takes `increment` numbers of each Philox subsequence it uses.
PhiloxSeed philox_reserve(int device, uint64_t increment);

// Every device's generator to `seed`, offsets to 0.
void philox_seed_all(uint64_t seed);

}  // namespace gb::cuda_kernels
