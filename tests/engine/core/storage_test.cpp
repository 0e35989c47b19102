// tests/engine/core/storage_test.cpp — storages: aligned host memory, the allocator seam, shared version counters.
#include <cstdint>

#include "support/check.h"

namespace {
struct CountingAllocator final : gb::Allocator {
  int allocs = 0, frees = 0;
  gb::DataPtr allocate(int64_t nbytes) override {
    ++allocs;
    void* p = std::aligned_alloc(64, size_t((nbytes + 63) / 64 * 64));
    return gb::DataPtr{p, [this](void* q) {
                         ++frees;
                         std::free(q);
                       }};
  }
};
}  // namespace

TEST_CASE("CPU storage is 64-byte aligned and sized in bytes") {
  auto s = gb::new_storage(100, gb::Device(gb::kCPU));
  CHECK(s->nbytes == 100);
  CHECK(reinterpret_cast<uintptr_t>(s->data()) % 64 == 0);
  CHECK(gb::new_storage(0, gb::Device(gb::kCPU))->data() == nullptr);
}

TEST_CASE("an allocator plugged in for a device serves every tensor made there, and gets its memory back") {
  CountingAllocator counting;
  gb::Allocator* before = gb::get_allocator(gb::kCPU);
  gb::set_allocator(gb::kCPU, &counting);
  {
    auto a = gb::ones({16});
    auto b = a * 2;
    CHECK(counting.allocs >= 2);
  }
  gb::set_allocator(gb::kCPU, before);
  CHECK(counting.frees == counting.allocs);
  CHECK(gb::get_allocator(gb::kCPU) == &gb::memory::caching_allocator(gb::kCPU));
}

TEST_CASE("by default storages come from the device's caching allocator; meta storages get addresses, no memory") {
  const int64_t before = gb::memory::memory_stats(gb::kMeta).allocated_bytes[gb::memory::kAll].current;
  {
    auto s = gb::new_storage(1000, gb::Device(gb::kMeta));
    CHECK(s->data() != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(s->data()) % 512 == 0);
    CHECK(gb::memory::memory_stats(gb::kMeta).allocated_bytes[gb::memory::kAll].current == before + 1024);
  }
  CHECK(gb::memory::memory_stats(gb::kMeta).allocated_bytes[gb::memory::kAll].current == before);
  gb::set_allocator(gb::kMeta, nullptr);  // nullptr restores the caching allocator
  CHECK(gb::get_allocator(gb::kMeta) == &gb::memory::caching_allocator(gb::kMeta));
}

TEST_CASE("views share the version counter of their storage") {
  auto x = gb::zeros({4});
  auto v = x.narrow(0, 1, 2);
  CHECK(x._version() == 0);
  v.fill_(1);
  CHECK(x._version() == 1);
  CHECK(v._version() == 1);
  CHECK(x.detach()._version() == 1);
}
