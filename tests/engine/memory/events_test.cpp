// tests/engine/memory/events_test.cpp — the tracer's hook: the exact events, in order, with running totals.
#include <doctest/doctest.h>

#include <vector>

#include <glassbox/glassbox.h>

#include "memory_test_util.h"

namespace mem = gb::memory;
using gbtest::MiB;

TEST_CASE("an observer sees segment_alloc, alloc, free, segment_free, empty_cache and oom with totals after each") {
  std::vector<mem::MemoryEvent> events;
  mem::AllocatorConfig conf;
  conf.capacity = 4 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  mem::set_event_observer([&](const mem::MemoryEvent& e) {
    if (e.device.is_meta()) events.push_back(e);
  });
  CHECK(mem::has_event_observer());
  {
    mem::CategoryGuard cat(mem::Category::activation);
    mem::AllocationContext ctx("aten::relu", "block0");
    gb::DataPtr p = a.allocate(1000, 3);
    p.deleter(p.ptr);
  }
  a.empty_cache();
  CHECK_THROWS_AS(a.allocate(5 * MiB), gb::OutOfMemoryError);
  mem::set_event_observer(nullptr);
  CHECK_FALSE(mem::has_event_observer());
  gb::DataPtr unseen = a.allocate(10);  // not observed
  unseen.deleter(unseen.ptr);

  using A = mem::MemoryAction;
  std::vector<A> actions;
  for (const auto& e : events) actions.push_back(e.action);
  // The failed 5 MiB request: the retry empties the cache first (an empty_cache event, 0 bytes), then the OOM.
  REQUIRE(actions == std::vector<A>{A::segment_alloc, A::alloc, A::free, A::segment_free, A::empty_cache,
                                    A::empty_cache, A::oom});
  CHECK(events[0].action == A::segment_alloc);
  CHECK(events[0].size == 2 * MiB);
  CHECK(events[0].stream == 3);
  CHECK(events[0].segment_id == 1);
  CHECK(events[0].reserved == 2 * MiB);
  CHECK(events[0].allocated == 0);
  CHECK(events[1].action == A::alloc);
  CHECK(events[1].addr == events[0].addr);
  CHECK(events[1].size == 1024);
  CHECK(events[1].requested == 1000);
  CHECK(events[1].category == mem::Category::activation);
  CHECK(mem::name_of(events[1].op_id) == "aten::relu");
  CHECK(mem::name_of(events[1].module_id) == "block0");
  CHECK(events[1].allocated == 1024);
  CHECK(events[2].action == A::free);
  CHECK(events[2].size == 1024);
  CHECK(events[2].category == mem::Category::activation);
  CHECK(events[2].allocated == 0);
  CHECK(events[2].reserved == 2 * MiB);
  CHECK(events[3].action == A::segment_free);
  CHECK(events[3].addr == events[0].addr);
  CHECK(events[3].reserved == 0);
  CHECK(events[4].action == A::empty_cache);
  CHECK(events[4].size == 2 * MiB);
  CHECK(events[5].action == A::empty_cache);  // the retry's release before the OOM: none since the cache is empty
  CHECK(events[5].size == 0);
  CHECK(events[6].action == A::oom);
  CHECK(events[6].size == 20 * MiB);
  CHECK(events[6].requested == 5 * MiB);
  CHECK(std::string(mem::to_string(A::segment_free)) == "segment_free");
}

TEST_CASE("re-tagging a live block is a retag event with the new category; an OOM observer sees the report") {
  std::vector<mem::MemoryEvent> events;
  mem::AllocatorConfig conf;
  conf.capacity = 4 * MiB;
  mem::CachingAllocator a(mem::make_meta_raw_allocator(), conf);
  mem::set_event_observer([&](const mem::MemoryEvent& e) {
    if (e.device.is_meta()) events.push_back(e);
  });
  int64_t oom_allocated = -1;
  mem::set_oom_observer([&](const gb::OomReport& r) { oom_allocated = r.allocated; });
  gb::DataPtr p = a.allocate(1000);
  events.clear();
  CHECK(a.set_category(p.ptr, mem::Category::activation));
  CHECK(a.set_category(p.ptr, mem::Category::activation));  // no change: no event
  REQUIRE(events.size() == 1);
  CHECK(events[0].action == mem::MemoryAction::retag);
  CHECK(events[0].category == mem::Category::activation);
  CHECK(events[0].addr == reinterpret_cast<uint64_t>(p.ptr));
  CHECK(events[0].size == 1024);
  CHECK(events[0].requested == 1000);
  CHECK(events[0].allocated == 1024);
  CHECK(std::string(mem::to_string(mem::MemoryAction::retag)) == "retag");
  CHECK_THROWS_AS(a.allocate(5 * MiB), gb::OutOfMemoryError);
  CHECK(oom_allocated == 1024);
  mem::set_event_observer(nullptr);
  mem::set_oom_observer(nullptr);
  p.deleter(p.ptr);
}
