// tests/engine/memory/meta_allocator_test.cpp — the meta raw allocator: an address space without memory.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("meta addresses are 512-aligned, increasing, never reused, and cost no memory") {
  auto raw = mem::make_meta_raw_allocator();
  CHECK(raw->device().is_meta());
  CHECK(raw->total_bytes() == 0);
  void* a = raw->allocate(size_t(1) << 40);  // a TiB: nothing is touched
  void* b = raw->allocate(1000);
  CHECK(reinterpret_cast<uintptr_t>(a) == (uintptr_t(1) << 44));
  CHECK(reinterpret_cast<uintptr_t>(b) == reinterpret_cast<uintptr_t>(a) + (uintptr_t(1) << 40));
  raw->deallocate(b, 1000);
  void* c = raw->allocate(512);
  CHECK(reinterpret_cast<uintptr_t>(c) == reinterpret_cast<uintptr_t>(b) + 1024);
  CHECK(reinterpret_cast<uintptr_t>(c) % 512 == 0);
  CHECK(raw->context_bytes() == 0);
  raw->set_context_bytes(500 << 20);
  CHECK(raw->context_bytes() == (500 << 20));
}
