// tests/engine/memory/cuda_allocator_gpu_test.cpp — GPU tier: cuda:0's caching allocator over real cudaMalloc
// (engine/memory/cuda_allocator.cu): the context measured at init, segments reserved and reused, the stats after
// real allocations, and an OOM report on a capacity-limited device naming the op and the category.
#include <string>

#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("allocations on cuda go through the caching allocator") {
  gb::memory::empty_cache(kGpu);
  const auto before = gb::memory::memory_stats(kGpu);
  {
    gb::Tensor a = gb::empty({1 << 20}, kGpu);  // 4 MiB: a large-pool segment
    gb::Tensor b = gb::empty({100}, kGpu);      // 400 B -> 512 B in a 2 MiB small segment
    const auto during = gb::memory::memory_stats(kGpu);
    CHECK(during.allocated_bytes[gb::memory::kAll].current - before.allocated_bytes[gb::memory::kAll].current == (4 << 20) + 512);
    CHECK(during.reserved_bytes[gb::memory::kAll].current - before.reserved_bytes[gb::memory::kAll].current == (20 << 20) + (2 << 20));
  }
  const auto after = gb::memory::memory_stats(kGpu);
  CHECK(after.allocated_bytes[gb::memory::kAll].current == before.allocated_bytes[gb::memory::kAll].current);
  CHECK(after.reserved_bytes[gb::memory::kAll].current > before.reserved_bytes[gb::memory::kAll].current);  // cached, not returned
  gb::memory::empty_cache(kGpu);
  CHECK(gb::memory::memory_stats(kGpu).reserved_bytes[gb::memory::kAll].current == before.reserved_bytes[gb::memory::kAll].current);
  CHECK(gb::memory::caching_allocator(kGpu).context_bytes() > 0);  // the CUDA context, measured at init
}

TEST_CASE("a capacity-limited cuda device runs out of memory with a report") {
  gb::memory::empty_cache(kGpu);
  const int64_t old_capacity = gb::memory::capacity(kGpu);
  const auto stats = gb::memory::memory_stats(kGpu);  // the capacity counts the context too, as a GPU's does
  gb::memory::set_capacity(kGpu, stats.context_bytes + stats.reserved_bytes[gb::memory::kAll].current + (64 << 20));
  try {
    gb::Tensor big = gb::ones({32 << 20}, kGpu);  // 128 MiB
    FAIL_CHECK("no OOM");
  } catch (const gb::OutOfMemoryError& e) {
    const std::string what = e.what();
    CHECK(what.find("CUDA out of memory") != std::string::npos);
    CHECK(what.find("GPU 0 has a total capacity") != std::string::npos);
  }
  gb::memory::set_capacity(kGpu, old_capacity);
  gb::Tensor ok = gb::ones({32 << 20}, kGpu);  // fits once the limit is lifted
  CHECK(ok.sum().item().to_double() == double(32 << 20));
}
