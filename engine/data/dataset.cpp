// engine/data/dataset.cpp — the per-sample generator and get_worker_info() (thread-local state of the loader).
#include "glassbox/data/dataset.h"

namespace gb::data {
namespace {
thread_local detail::SampleScope* t_scope = nullptr;
thread_local std::optional<WorkerInfo> t_worker_info;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

Generator& sample_generator() { return t_scope ? t_scope->generator() : gb::default_generator(); }

std::optional<WorkerInfo> get_worker_info() { return t_worker_info; }

namespace detail {
uint64_t sample_seed(uint64_t base_seed, int64_t position) {
  return splitmix64(base_seed ^ splitmix64(static_cast<uint64_t>(position)));
}

SampleScope::SampleScope(uint64_t base_seed, int64_t position)
    : seed_(sample_seed(base_seed, position)), prev_(t_scope), default_guard_(&sample_generator) {
  t_scope = this;
}
SampleScope::~SampleScope() { t_scope = prev_; }
Generator& SampleScope::generator() {
  if (!gen_) gen_.emplace(seed_);
  return *gen_;
}

void set_worker_info(const std::optional<WorkerInfo>& info) { t_worker_info = info; }
}  // namespace detail

}  // namespace gb::data
