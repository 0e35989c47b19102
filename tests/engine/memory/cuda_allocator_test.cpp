// tests/engine/memory/cuda_allocator_test.cpp — cuda's raw allocator (gpu tier: without a device it checks the
// error; with one, that segments come from cudaMalloc and the context was measured).
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("cuda's raw allocator allocates device memory, or says why it cannot") {
  if (!gb::cuda::is_available()) {
    CHECK_THROWS_WITH_AS(mem::make_cuda_raw_allocator(0), doctest::Contains("cannot allocate on cuda:0"), gb::Error);
    return;
  }
  auto raw = mem::make_cuda_raw_allocator(0);
  CHECK(raw->device() == gb::Device(gb::kCUDA, 0));
  CHECK(raw->total_bytes() > 0);
  CHECK(raw->context_bytes() > 0);
  CHECK(raw->context_bytes() < raw->total_bytes());
  CHECK_THROWS_WITH_AS(raw->set_context_bytes(0), doctest::Contains("measured with cudaMemGetInfo"), gb::Error);
  void* p = raw->allocate(2 << 20);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(p) % 512 == 0);
  raw->deallocate(p, 2 << 20);
  CHECK(raw->allocate(size_t(1) << 50) == nullptr);  // a PiB: out of memory is nullptr, not an exception
  mem::CachingAllocator a(mem::make_cuda_raw_allocator(0));
  gb::DataPtr d = a.allocate(1000);
  CHECK(a.stats().reserved_bytes[mem::kAll].current == (2 << 20));
  d.deleter(d.ptr);
}
