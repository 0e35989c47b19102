// tests/engine/data/pinned_cache_test.cpp — engine/data/pinned_cache.h with a fake backend: blocks are reused by size
// class, never while a recorded copy has not completed, handed back when the backend runs out, and counted.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>

#include "data/pinned_cache.h"

namespace pinned_cache_test {
using gb::data::detail::PinnedBackend;
using gb::data::detail::PinnedCache;

// A backend whose events complete when the test says so and whose memory can run out.
struct Fake {
  std::map<void*, size_t> live;  // blocks made and not freed, with their sizes
  std::vector<bool> events_done;
  int64_t budget = 1 << 30;  // bytes it may still hand out
  int destroyed = 0;
  PinnedBackend backend() {
    PinnedBackend b;
    b.alloc = [this](size_t n) -> void* {
      if (int64_t(n) > budget) return nullptr;
      budget -= int64_t(n);
      void* p = std::malloc(n);
      live[p] = n;
      return p;
    };
    b.free = [this](void* p) {
      REQUIRE(live.count(p) == 1);
      budget += int64_t(live[p]);
      live.erase(p);
      std::free(p);
    };
    b.record = [this](int, void*) -> void* {
      events_done.push_back(false);
      return reinterpret_cast<void*>(events_done.size());  // event k is index k-1
    };
    b.done = [this](int, void* e) { return bool(events_done.at(reinterpret_cast<size_t>(e) - 1)); };
    b.destroy = [this](int, void*) { ++destroyed; };
    return b;
  }
};

TEST_CASE("size classes are powers of two from 512 bytes") {
  CHECK(PinnedCache::size_class(1) == 512);
  CHECK(PinnedCache::size_class(512) == 512);
  CHECK(PinnedCache::size_class(513) == 1024);
  CHECK(PinnedCache::size_class(3u << 20) == (4u << 20));
}

TEST_CASE("a released block is handed out again for its size class, and counted") {
  Fake f;
  PinnedCache c(f.backend());
  void* a = c.allocate(1000);
  REQUIRE(a);
  c.release(a);
  CHECK(c.allocate(600) == a);  // same class (1024): the cache's block
  void* b = c.allocate(1000);   // a is in use: a new one
  CHECK(b != a);
  void* big = c.allocate(5000);  // another class
  CHECK(f.live.size() == 3);
  auto s = c.stats();
  CHECK(s.allocations == 4);
  CHECK(s.cache_hits == 1);
  CHECK(s.backend_allocations == 3);
  CHECK(s.allocated_bytes == 1024 + 1024 + 8192);
  CHECK(s.reserved_bytes == 1024 + 1024 + 8192);
  c.release(b);
  c.release(big);
  c.release(a);
  CHECK(c.stats().allocated_bytes == 0);
  CHECK(c.stats().reserved_bytes == 1024 + 1024 + 8192);
  c.empty();
  CHECK(f.live.empty());
  CHECK(c.stats().reserved_bytes == 0);
  CHECK(c.stats().backend_frees == 3);
}

TEST_CASE("a block is not reused while a copy recorded on it is running") {
  Fake f;
  PinnedCache c(f.backend());
  void* a = c.allocate(4096);
  CHECK(c.record_use(a, 0, nullptr));
  c.release(a);  // the copy still reads it
  void* b = c.allocate(4096);
  CHECK(b != a);
  c.empty();  // a is not free yet: it stays
  CHECK(f.live.count(a) == 1);
  f.events_done[0] = true;  // the copy completed
  void* again = c.allocate(4096);
  CHECK(again == a);
  CHECK(f.destroyed == 1);
  // uses on two streams: both must complete
  CHECK(c.record_use(again, 0, nullptr));
  CHECK(c.record_use(again, 1, nullptr));
  c.release(again);
  f.events_done[2] = true;
  void* other = c.allocate(4096);
  CHECK(other != a);
  f.events_done[1] = true;
  CHECK(c.allocate(4096) == a);
  CHECK(f.destroyed == 3);
  // a block that is not the cache's, or not in use, records nothing
  int outside = 0;
  CHECK_FALSE(c.record_use(&outside, 0, nullptr));
  c.release(&outside);  // ignored
  c.release(b);
  c.release(other);
  c.release(a);
}

TEST_CASE("when the backend runs out, the free blocks are returned and the allocation tried again") {
  Fake f;
  f.budget = 8192;
  PinnedCache c(f.backend());
  void* a = c.allocate(4096);
  void* b = c.allocate(4096);
  REQUIRE((a && b));
  c.release(a);
  c.release(b);
  void* big = c.allocate(8192);  // needs what the two cached blocks hold
  CHECK(big != nullptr);
  CHECK(f.live.size() == 1);
  CHECK(c.stats().backend_frees == 2);
  CHECK(c.allocate(8192) == nullptr);  // nothing left to return: the caller names the error
  c.release(big);
}

}  // namespace pinned_cache_test
