// glassbox/core/generator.h — a seeded random source (mt19937_64, like PyTorch's CPU generator in spirit).
//
// Same seed, same numbers on every run and every thread count: random kernels draw serially from the generator.
// The state can be saved and restored (checkpoints store it).
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace gb {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) { manual_seed(seed); }
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    engine_.seed(seed);
    has_spare_ = false;
  }
  uint64_t initial_seed() const { return seed_; }
  uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1) with 53 (double) or 24 (float) random bits.
  double uniform_double() { return double(engine_() >> 11) * (1.0 / 9007199254740992.0); }
  float uniform_float() { return float(engine_() >> 40) * (1.0f / 16777216.0f); }
  // Standard normal (Box–Muller, caching the second value).
  double normal();
  // The full state as text, and back (for checkpoints).
  std::string get_state() const;
  void set_state(const std::string& state);

 private:
  std::mt19937_64 engine_;
  uint64_t seed_ = 0;
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace gb
