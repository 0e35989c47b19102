// tests/engine/memory/snapshot_test.cpp — snapshots: segments in creation order, blocks tiling them with offsets,
// requested sizes and states.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("a snapshot lists segments by id and their blocks by offset") {
  mem::CachingAllocator a(mem::make_meta_raw_allocator());
  gb::DataPtr x = a.allocate(700), y = a.allocate(5 << 20, 2), z = a.allocate(100);
  auto snap = a.snapshot();
  REQUIRE(snap.segments.size() == 2);
  const auto& s0 = snap.segments[0];
  CHECK(s0.id == 1);
  CHECK(s0.is_small);
  CHECK(s0.total_size == (2 << 20));
  CHECK(s0.allocated_size == 1024 + 512);
  CHECK(s0.requested_size == 800);
  REQUIRE(s0.blocks.size() == 3);
  CHECK(s0.blocks[0].address == reinterpret_cast<uint64_t>(x.ptr));
  CHECK(s0.blocks[1].offset == 1024);
  CHECK(s0.blocks[1].address == reinterpret_cast<uint64_t>(z.ptr));
  CHECK(s0.blocks[1].requested_size == 100);
  CHECK(s0.blocks[2].state == mem::BlockState::inactive);
  CHECK(s0.blocks[2].size == (2 << 20) - 1536);
  const auto& s1 = snap.segments[1];
  CHECK(s1.id == 2);
  CHECK_FALSE(s1.is_small);
  CHECK(s1.stream == 2);
  CHECK(s1.address == reinterpret_cast<uint64_t>(y.ptr));
  CHECK(std::string(mem::to_string(s1.blocks[0].state)) == "active_allocated");
  for (auto* d : {&x, &y, &z}) d->deleter(d->ptr);
  a.empty_cache();
  CHECK(a.snapshot().segments.empty());
}
