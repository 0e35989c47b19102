// tests/engine/memory/host_allocator_test.cpp — the cpu raw allocator: aligned, writable host memory.
#include <doctest/doctest.h>

#include <cstring>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("host segments are 64-byte aligned real memory; the machine's RAM is the total") {
  auto raw = mem::make_host_raw_allocator();
  CHECK(raw->device().is_cpu());
  CHECK(raw->total_bytes() > (int64_t(64) << 20));
  void* p = raw->allocate(2 << 20);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
  std::memset(p, 0xab, 2 << 20);
  CHECK(static_cast<unsigned char*>(p)[(2 << 20) - 1] == 0xab);
  raw->deallocate(p, 2 << 20);
  raw->set_context_bytes(123);
  CHECK(raw->context_bytes() == 123);
}
