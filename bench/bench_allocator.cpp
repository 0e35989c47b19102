// bench/bench_allocator.cpp — a cached allocation + free from the cpu caching allocator, in ns, against plain
// malloc/free in the same run (libtorch's CPU allocator does not cache, so it is no peer here). Target: <= 100 ns
// median. Also: the same through a tensor (gb::empty + release), and with an event observer installed.
#include <glassbox/glassbox.h>

#include <cstdlib>

#include "bench_common.h"

namespace {
inline void keep(void* p) { asm volatile("" : : "r"(p) : "memory"); }
}  // namespace

int main() {
  gb::set_num_threads(1);
  auto& cache = gb::memory::caching_allocator(gb::kCPU);
  const int inner = 20000;
  const double seconds = 0.3;
  const std::pair<int64_t, const char*> sizes[] = {{512, "512B"}, {64 << 10, "64KiB"}, {4 << 20, "4MiB"}};
  for (const auto& size : sizes) {
    const int64_t n = size.first;  // (not a structured binding: Clang 14's lambdas cannot capture one)
    const char* name = size.second;
    auto [ours, peer] = bench::compare(
        [&] {
          gb::DataPtr p = cache.allocate(n);
          keep(p.ptr);
          p.deleter(p.ptr);
        },
        [&] {
          void* p = std::malloc(size_t(n));
          keep(p);
          std::free(p);
        },
        inner, seconds);
    bench::emit_vs("allocator", std::string("cached_alloc_free_") + name + "_ns", ours * 1e9, "ns", "malloc", peer * 1e9);
  }
  {  // with the tracer's hook installed: the observer copies the event
    int64_t seen = 0;
    gb::memory::set_event_observer([&](const gb::memory::MemoryEvent& e) { seen += e.size; });
    auto [ours, peer] = bench::compare(
        [&] {
          gb::DataPtr p = cache.allocate(512);
          keep(p.ptr);
          p.deleter(p.ptr);
        },
        [&] {
          void* p = std::malloc(512);
          keep(p);
          std::free(p);
        },
        inner, seconds);
    gb::memory::set_event_observer(nullptr);
    bench::emit_vs("allocator", "cached_alloc_free_512B_observed_ns", ours * 1e9, "ns", "malloc", peer * 1e9);
    keep(&seen);
  }
  {  // a whole tensor: TensorImpl + StorageImpl + the cached block
    auto [ours, peer] = bench::compare(
        [&] {
          auto t = gb::empty({128});
          keep(t.data_ptr());
        },
        [&] {
          void* p = std::malloc(512);
          keep(p);
          std::free(p);
        },
        inner, seconds);
    bench::emit_vs("allocator", "empty_tensor_128_ns", ours * 1e9, "ns", "malloc", peer * 1e9);
  }
  return 0;
}
