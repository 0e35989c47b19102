// tests/traces/query/memory_replay_test.cpp — traces/query/memory_replay.h: blocks and category bytes, event by event.
#include "traces/query/memory_replay.h"

#include <doctest/doctest.h>

using gb::trace::MemAction;
using gb::trace::MemCategory;

namespace {
std::int64_t bytes(const gb::query::MemoryReplay<>& r, MemCategory c) {
  return r.by_category()[static_cast<std::size_t>(c)];
}
}  // namespace

TEST_CASE("alloc, retag and free move bytes between categories; peaks are the largest running sums") {
  gb::query::MemoryReplay<> r;
  CHECK(r.apply(MemAction::alloc, 0x100, 512, MemCategory::temporary));
  CHECK(r.apply(MemAction::alloc, 0x300, 256, MemCategory::activation));
  CHECK(bytes(r, MemCategory::temporary) == 512);
  CHECK(r.apply(MemAction::retag, 0x100, 0, MemCategory::parameter));  // the engine retags after allocating
  CHECK(bytes(r, MemCategory::temporary) == 0);
  CHECK(bytes(r, MemCategory::parameter) == 512);
  CHECK(r.apply(MemAction::free, 0x300, 256, MemCategory::unknown));  // the block's own category loses it
  CHECK(bytes(r, MemCategory::activation) == 0);
  CHECK(r.peaks()[static_cast<std::size_t>(MemCategory::activation)] == 256);
  CHECK(r.peaks()[static_cast<std::size_t>(MemCategory::temporary)] == 512);
  REQUIRE(r.live().size() == 1);
  CHECK(r.live().at(0x100).size == 512);
  CHECK(r.live().at(0x100).category == MemCategory::parameter);
}

TEST_CASE("damaged traces: an unmatched free is reported and changes nothing; an alloc over a live block replaces it") {
  gb::query::MemoryReplay<> r;
  CHECK_FALSE(r.apply(MemAction::free, 0x40, 64, MemCategory::gradient));
  CHECK_FALSE(r.apply(MemAction::retag, 0x40, 0, MemCategory::gradient));
  CHECK(r.live().empty());
  CHECK(r.apply(MemAction::alloc, 0x40, 64, MemCategory::gradient));
  CHECK(r.apply(MemAction::alloc, 0x40, 16, MemCategory::input));  // not counted twice
  CHECK(bytes(r, MemCategory::gradient) == 0);
  CHECK(bytes(r, MemCategory::input) == 16);
  CHECK(r.apply(MemAction::segment_alloc, 0x0, 1 << 20, MemCategory::unknown));  // segments are not blocks
  CHECK(r.live().size() == 1);
  CHECK(gb::query::mem_category(99) == MemCategory::unknown);  // a category from a newer or damaged file
  CHECK(gb::query::mem_category(-1) == MemCategory::unknown);
  CHECK(gb::query::mem_category(7) == MemCategory::autograd_detail);
}

TEST_CASE("each block carries the caller's payload from its alloc") {
  struct Where {
    std::int64_t t = 0;
    int op = 0;
  };
  gb::query::MemoryReplay<Where> r;
  r.apply(MemAction::alloc, 1, 8, MemCategory::activation, Where{100, 7});
  r.apply(MemAction::retag, 1, 0, MemCategory::gradient, Where{200, 9});  // a retag keeps the alloc's payload
  CHECK(r.live().at(1).extra.t == 100);
  CHECK(r.live().at(1).extra.op == 7);
}

TEST_CASE("detail that resumes after a gap: resume forgets every block, live rows are the blocks live then") {
  gb::query::MemoryReplay<> r;
  r.apply(MemAction::alloc, 0x100, 512, MemCategory::parameter);
  r.apply(MemAction::alloc, 0x200, 1024, MemCategory::activation);  // freed during the gap: its free was not kept
  CHECK(bytes(r, MemCategory::activation) == 1024);
  CHECK(r.apply(MemAction::resume, 0, 0, MemCategory::unknown));
  CHECK(r.live().empty());
  CHECK(bytes(r, MemCategory::parameter) == 0);
  CHECK(r.apply(MemAction::live, 0x100, 512, MemCategory::parameter));
  CHECK(r.apply(MemAction::live, 0x300, 2048, MemCategory::optimizer_state));  // allocated during the gap
  CHECK(r.apply(MemAction::live_segment, 0x0, 2 << 20, MemCategory::unknown));  // segments are not blocks
  CHECK(r.live().size() == 2);
  CHECK(bytes(r, MemCategory::parameter) == 512);
  CHECK(bytes(r, MemCategory::optimizer_state) == 2048);
  CHECK(bytes(r, MemCategory::activation) == 0);
  CHECK(r.apply(MemAction::free, 0x300, 2048, MemCategory::unknown));  // a block from before the gap is found
  CHECK(bytes(r, MemCategory::optimizer_state) == 0);
  CHECK_FALSE(r.apply(MemAction::free, 0x200, 1024, MemCategory::unknown));  // gone at the resume
  CHECK(r.peaks()[static_cast<std::size_t>(MemCategory::activation)] == 1024);  // peaks survive a resume
}
