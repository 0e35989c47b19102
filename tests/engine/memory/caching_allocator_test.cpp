// tests/engine/memory/caching_allocator_test.cpp — the caching allocator's rules one by one, on the meta raw
// allocator (no memory): rounding, pools, best fit, split thresholds, merging, streams, max_split_size,
// empty_cache, capacity and context, retry-then-OOM, categories and re-tagging, allocation contexts, threads.
#include <doctest/doctest.h>

#include <memory>
#include <thread>
#include <vector>

#include <glassbox/glassbox.h>

#include "memory_test_util.h"

namespace mem = gb::memory;
using gbtest::MiB;

namespace {

// A block the test frees explicitly or at scope end (declare the allocator first).
struct Held {
  gb::DataPtr p;
  Held() = default;
  explicit Held(gb::DataPtr d) : p(std::move(d)) {}
  Held(Held&& o) noexcept : p(std::move(o.p)) { o.p.deleter = nullptr; }
  Held& operator=(Held&& o) noexcept {
    release();
    p = std::move(o.p);
    o.p.deleter = nullptr;
    return *this;
  }
  ~Held() { release(); }
  void release() {
    if (p.deleter) p.deleter(p.ptr);
    p.deleter = nullptr;
  }
  uintptr_t addr() const { return reinterpret_cast<uintptr_t>(p.ptr); }
};

mem::CachingAllocator meta_allocator(mem::AllocatorConfig conf = {}) {
  return mem::CachingAllocator(mem::make_meta_raw_allocator(), conf);
}

// The (size, state) sequence of segment i's blocks.
std::vector<std::pair<int64_t, bool>> layout(const mem::CachingAllocator& a, size_t i = 0) {
  std::vector<std::pair<int64_t, bool>> out;
  auto snap = a.snapshot();
  REQUIRE(i < snap.segments.size());
  for (const auto& b : snap.segments[i].blocks) out.emplace_back(b.size, b.state == mem::BlockState::active_allocated);
  return out;
}

}  // namespace

TEST_CASE("sizes round to 512 B and pick their pool's segment size as PyTorch does") {
  CHECK(mem::round_size(1) == 512);
  CHECK(mem::round_size(512) == 512);
  CHECK(mem::round_size(513) == 1024);
  CHECK(mem::round_size(MiB) == MiB);
  CHECK(mem::allocation_size(512) == 2 * MiB);
  CHECK(mem::allocation_size(MiB) == 2 * MiB);
  CHECK(mem::allocation_size(MiB + 512) == 20 * MiB);
  CHECK(mem::allocation_size(10 * MiB - 512) == 20 * MiB);
  CHECK(mem::allocation_size(10 * MiB) == 10 * MiB);
  CHECK(mem::allocation_size(11 * MiB + 512) == 12 * MiB);
}

TEST_CASE("zero bytes give nullptr and no block; negative sizes are an error") {
  auto a = meta_allocator();
  gb::DataPtr p = a.allocate(0);
  CHECK(p.ptr == nullptr);
  CHECK(!p.deleter);
  CHECK(a.stats().allocation[mem::kAll].allocated == 0);
  CHECK_THROWS_WITH_AS(a.allocate(-1), doctest::Contains("negative number of bytes"), gb::Error);
}

TEST_CASE("a small request is carved from a 2 MiB segment; the rest stays cached as an inactive split") {
  auto a = meta_allocator();
  Held x(a.allocate(1));
  auto s = a.stats();
  CHECK(s.allocated_bytes[mem::kAll].current == 512);
  CHECK(s.allocated_bytes[mem::kSmallPool].current == 512);
  CHECK(s.requested_bytes[mem::kAll].current == 1);
  CHECK(s.reserved_bytes[mem::kSmallPool].current == 2 * MiB);
  CHECK(s.reserved_bytes[mem::kLargePool].current == 0);
  CHECK(s.segment[mem::kSmallPool].current == 1);
  CHECK(s.inactive_split_bytes[mem::kAll].current == 2 * MiB - 512);
  CHECK(s.inactive_split[mem::kAll].current == 1);
  CHECK(layout(a) == std::vector<std::pair<int64_t, bool>>{{512, true}, {2 * MiB - 512, false}});
  CHECK(a.snapshot().segments[0].is_small);
}

TEST_CASE("small pool: a remainder of 512 B is split off; large pool: only a remainder over 1 MiB is") {
  auto a = meta_allocator();
  Held x(a.allocate(MiB));
  Held y(a.allocate(MiB - 512));  // takes the cached 1 MiB block: a 512 B remainder is split off
  CHECK(layout(a) == std::vector<std::pair<int64_t, bool>>{{MiB, true}, {MiB - 512, true}, {512, false}});
  Held z(a.allocate(100));  // best fit: the 512 B block, no new segment
  CHECK(a.stats().segment[mem::kAll].current == 1);
  CHECK(layout(a).back() == std::pair<int64_t, bool>{512, true});

  Held big(a.allocate(19 * MiB));  // 20 MiB segment, remainder exactly 1 MiB: not split
  auto s = a.stats();
  CHECK(s.allocated_bytes[mem::kLargePool].current == 20 * MiB);
  CHECK(s.requested_bytes[mem::kLargePool].current == 19 * MiB);
  CHECK(layout(a, 1) == std::vector<std::pair<int64_t, bool>>{{20 * MiB, true}});
  Held big2(a.allocate(19 * MiB - 512));  // remainder 1 MiB + 512: split
  CHECK(layout(a, 2) == std::vector<std::pair<int64_t, bool>>{{19 * MiB - 512, true}, {MiB + 512, false}});
}

TEST_CASE("best fit takes the smallest cached block that fits; freed neighbours merge at once") {
  auto a = meta_allocator();
  Held p1(a.allocate(4096)), g1(a.allocate(512)), p2(a.allocate(8192)), g2(a.allocate(512));
  const uintptr_t a1 = p1.addr(), a2 = p2.addr();
  p1.release();
  p2.release();
  Held q(a.allocate(4000));  // fits the 4096 block exactly
  CHECK(q.addr() == a1);
  Held r(a.allocate(5000));  // the 8192 block, split into 5120 + 3072
  CHECK(r.addr() == a2);
  CHECK(layout(a) == std::vector<std::pair<int64_t, bool>>{{4096, true}, {512, true}, {5120, true}, {3072, false},
                                                           {512, true}, {2 * MiB - 13312, false}});
  // Free the middle blocks in an order that needs both-side merges: the segment becomes one free block again.
  r.release();
  g1.release();
  q.release();
  CHECK(layout(a) == std::vector<std::pair<int64_t, bool>>{{12800, false}, {512, true}, {2 * MiB - 13312, false}});
  g2.release();
  CHECK(layout(a) == std::vector<std::pair<int64_t, bool>>{{2 * MiB, false}});
  auto s = a.stats();
  CHECK(s.inactive_split_bytes[mem::kAll].current == 0);
  CHECK(s.inactive_split[mem::kAll].current == 0);
  CHECK(s.allocated_bytes[mem::kAll].current == 0);
  CHECK(s.allocated_bytes[mem::kAll].peak == 4096 + 512 + 8192 + 512);
  CHECK(s.reserved_bytes[mem::kAll].current == 2 * MiB);
}

// The meta device's addresses, with events the test completes by hand: what record_stream waits on (a stream's
// queued work) is modelled by `done`.
class EventRaw final : public mem::RawAllocator {
 public:
  struct Event {
    int64_t stream;
    bool done = false, destroyed = false;
  };
  std::vector<Event> events;
  int waits = 0;

  void* allocate(size_t n) override { return meta_->allocate(n); }
  void deallocate(void* p, size_t n) override { meta_->deallocate(p, n); }
  gb::Device device() const override { return gb::Device(gb::kCUDA, 0); }
  int64_t total_bytes() const override { return 0; }
  int64_t context_bytes() const override { return 0; }
  void set_context_bytes(int64_t) override {}
  void* record_event(int64_t stream) override {
    events.push_back({stream});
    return reinterpret_cast<void*>(events.size());  // 1-based index
  }
  bool event_done(void* e) override { return at(e).done; }
  void wait_event(void* e) override {
    ++waits;
    at(e).done = true;
  }
  void destroy_event(void* e) override {
    CHECK_FALSE(at(e).destroyed);
    at(e).destroyed = true;
  }
  Event& at(void* e) { return events[reinterpret_cast<size_t>(e) - 1]; }

 private:
  std::unique_ptr<mem::RawAllocator> meta_ = mem::make_meta_raw_allocator();
};

TEST_CASE("blocks are reused within a stream only") {
  auto a = meta_allocator();
  Held x(a.allocate(1000, 0));
  const uintptr_t addr = x.addr();
  x.release();
  Held y(a.allocate(1000, 1));  // stream 1 cannot take stream 0's cached block: a new segment
  CHECK(y.addr() != addr);
  CHECK(a.stats().segment[mem::kAll].current == 2);
  auto snap = a.snapshot();
  CHECK(snap.segments[1].stream == 1);
  Held z(a.allocate(1000, 0));  // stream 0 gets its block back
  CHECK(z.addr() == addr);
}

TEST_CASE("record_stream: a block used on another stream is reused only after that stream's work") {
  auto raw = std::make_unique<EventRaw>();
  EventRaw& ev = *raw;
  mem::CachingAllocator a(std::move(raw));
  Held x(a.allocate(1000, 1));  // made on stream 1
  const uintptr_t addr = x.addr();
  a.record_stream(x.p.ptr, 2);   // also read by stream 2
  a.record_stream(x.p.ptr, 2);   // twice is once
  a.record_stream(x.p.ptr, 1);   // its own stream: nothing to wait for
  a.record_stream(reinterpret_cast<char*>(x.p.ptr) + 100, 3);  // any address inside the block
  x.release();
  REQUIRE(ev.events.size() == 2);  // one event per other stream, recorded at the free
  CHECK(ev.events[0].stream == 2);
  CHECK(ev.events[1].stream == 3);
  CHECK(a.stats().allocated_bytes[mem::kAll].current == 0);  // freed as far as the stats go
  {
    Held y(a.allocate(1000, 1));  // stream 1 may not take it yet: its events are pending
    CHECK(y.addr() != addr);
  }
  ev.events[0].done = true;
  {
    Held y(a.allocate(1000, 1));  // one event of two done: still pending
    CHECK(y.addr() != addr);
  }
  ev.events[1].done = true;
  Held z(a.allocate(1000, 1));  // both done: the block is back in stream 1's pool, best fit again
  CHECK(z.addr() == addr);
  CHECK(ev.events[0].destroyed);
  CHECK(ev.events[1].destroyed);
  CHECK_THROWS_WITH(a.record_stream(reinterpret_cast<void*>(0x10), 2), doctest::Contains("no live block"));
}

TEST_CASE("record_stream: empty_cache waits for pending events, then releases the segment") {
  auto raw = std::make_unique<EventRaw>();
  EventRaw& ev = *raw;
  mem::CachingAllocator a(std::move(raw));
  {
    Held x(a.allocate(4 * MiB, 0));
    a.record_stream(x.p.ptr, 7);
  }
  CHECK(a.stats().reserved_bytes[mem::kAll].current == 20 * MiB);
  CHECK(ev.waits == 0);
  a.empty_cache();
  CHECK(ev.waits == 1);
  CHECK(ev.events[0].destroyed);
  CHECK(a.stats().reserved_bytes[mem::kAll].current == 0);
  // cpu and meta have no streams: record_stream then free leaves nothing pending
  mem::CachingAllocator m = meta_allocator();
  Held y(m.allocate(1000, 0));
  const uintptr_t addr = y.addr();
  m.record_stream(y.p.ptr, 5);
  y.release();
  Held w(m.allocate(1000, 0));
  CHECK(w.addr() == addr);
}

TEST_CASE("a block waiting for events is not merged into its free neighbours") {
  auto raw = std::make_unique<EventRaw>();
  EventRaw& ev = *raw;
  mem::CachingAllocator a(std::move(raw));
  Held l(a.allocate(512, 0)), m(a.allocate(512, 0)), r(a.allocate(512, 0));
  a.record_stream(m.p.ptr, 9);
  m.release();  // pending
  l.release();  // must not swallow m
  r.release();
  auto lay = layout(a);
  CHECK(lay.size() >= 3);
  CHECK(lay[0].first == 512);  // l alone, m still apart
  CHECK(lay[1].first == 512);
  ev.events[0].done = true;
  Held n(a.allocate(512, 0));  // processes the event: everything merges back
  n.release();
  CHECK(layout(a).size() == 1);
}
TEST_CASE("max_split_size: oversize blocks are never split and small requests never take them") {
  auto a = meta_allocator();
  CHECK_THROWS_WITH_AS(a.set_max_split_size(20 * MiB), doctest::Contains("more than 20 MiB"), gb::Error);
  a.set_max_split_size(40 * MiB);
  Held big(a.allocate(50 * MiB));
  CHECK(a.stats().oversize_allocations.current == 1);
  CHECK(a.stats().oversize_segments.current == 1);
  big.release();
  Held mid(a.allocate(30 * MiB));  // below max_split: may not take the cached 50 MiB block
  CHECK(a.stats().segment[mem::kAll].current == 2);
  Held large(a.allocate(45 * MiB));  // >= max_split: takes the 50 MiB block whole (within 20 MiB of the request)
  CHECK(a.stats().segment[mem::kAll].current == 2);
  CHECK(a.stats().allocated_bytes[mem::kAll].current == 50 * MiB + 30 * MiB);
  CHECK(a.snapshot().segments[0].blocks.size() == 1);

  auto b = meta_allocator();  // without the limit the same 50 MiB block is split for a 30 MiB request
  Held big_b(b.allocate(50 * MiB));
  big_b.release();
  Held mid_b(b.allocate(30 * MiB));
  CHECK(b.stats().segment[mem::kAll].current == 1);
  CHECK(layout(b) == std::vector<std::pair<int64_t, bool>>{{30 * MiB, true}, {20 * MiB, false}});
}

TEST_CASE("empty_cache returns whole free segments and keeps segments with live blocks") {
  auto a = meta_allocator();
  Held s1(a.allocate(100)), s1b(a.allocate(MiB));
  Held s2(a.allocate(MiB));  // does not fit the 1 MiB - 512 left in the first segment: a second one
  Held l1(a.allocate(5 * MiB));
  CHECK(a.stats().segment[mem::kSmallPool].current == 2);
  CHECK(a.stats().reserved_bytes[mem::kAll].current == 2 * MiB + 2 * MiB + 20 * MiB);
  s1b.release();
  s2.release();
  l1.release();
  a.empty_cache();
  auto s = a.stats();
  CHECK(s.reserved_bytes[mem::kAll].current == 2 * MiB);  // only s1's segment is left
  CHECK(s.segment[mem::kAll].current == 1);
  CHECK(s.reserved_bytes[mem::kAll].peak == 24 * MiB);
  CHECK(s.reserved_bytes[mem::kAll].freed == 22 * MiB);
  s1.release();
  a.empty_cache();
  CHECK(a.stats().reserved_bytes[mem::kAll].current == 0);
}

TEST_CASE("the capacity counts context and reserved; a refused segment frees the cache and retries once, then OOM") {
  mem::AllocatorConfig conf;
  conf.capacity = 21 * MiB;
  auto a = meta_allocator(conf);
  Held small(a.allocate(1));
  small.release();  // 2 MiB cached in the small pool
  Held big(a.allocate(20 * MiB));  // 2 + 20 > 21: release the cached 2 MiB, retry, succeed
  auto s = a.stats();
  CHECK(s.num_alloc_retries == 1);
  CHECK(s.num_ooms == 0);
  CHECK(s.reserved_bytes[mem::kAll].current == 20 * MiB);
  try {
    (void)a.allocate(1);  // needs a 2 MiB segment: 22 > 21
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    CHECK(e.requested() == 1);
    CHECK(e.report().alloc_size == 2 * MiB);
    CHECK(e.capacity() == 21 * MiB);
    CHECK(e.free() == MiB);
    CHECK(e.allocated() == 20 * MiB);
    CHECK(e.reserved() == 20 * MiB);
  }
  s = a.stats();
  CHECK(s.num_alloc_retries == 2);
  CHECK(s.num_ooms == 1);
  CHECK(s.allocated_bytes[mem::kAll].current == 20 * MiB);  // nothing leaked by the failed request

  a.set_capacity(0);  // unlimited again
  Held later(a.allocate(1));
  CHECK(a.stats().reserved_bytes[mem::kAll].current == 22 * MiB);
  CHECK_THROWS_WITH_AS(a.set_capacity(-1), doctest::Contains("must be >= 0"), gb::Error);
}

TEST_CASE("the device context takes its share of the capacity") {
  mem::AllocatorConfig conf;
  conf.capacity = 21 * MiB;
  conf.context = 4 * MiB;
  auto a = meta_allocator(conf);
  CHECK(a.context_bytes() == 4 * MiB);
  CHECK(a.stats().context_bytes == 4 * MiB);
  try {
    (void)a.allocate(20 * MiB);  // 4 + 20 > 21
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    CHECK(e.free() == 17 * MiB);
    CHECK(e.report().context == 4 * MiB);
  }
  a.set_context_bytes(0);
  Held fits(a.allocate(20 * MiB));
  CHECK(a.stats().reserved_bytes[mem::kAll].current == 20 * MiB);
}

TEST_CASE("every allocation carries the thread's category, op and module; a block can be re-tagged by any pointer into it") {
  auto a = meta_allocator();
  Held p;
  {
    mem::CategoryGuard cat(mem::Category::parameter);
    mem::AllocationContext ctx("aten::linear", "encoder.fc1");
    p = Held(a.allocate(1000));
  }
  Held t(a.allocate(600));  // outside the guards: temporary (the default), no op or module
  auto s = a.stats();
  CHECK(s.allocated_bytes_by_category[int(mem::Category::parameter)].current == 1024);
  CHECK(s.allocated_bytes_by_category[int(mem::Category::temporary)].current == 1024);
  auto snap = a.snapshot();
  const auto& b0 = snap.segments[0].blocks[0];
  CHECK(b0.category == mem::Category::parameter);
  CHECK(b0.op == "aten::linear");
  CHECK(b0.module == "encoder.fc1");
  CHECK(snap.segments[0].blocks[1].op.empty());

  CHECK(a.set_category(reinterpret_cast<char*>(p.p.ptr) + 700, mem::Category::activation));
  CHECK(a.category_of(p.p.ptr) == mem::Category::activation);
  s = a.stats();
  CHECK(s.allocated_bytes_by_category[int(mem::Category::parameter)].current == 0);
  CHECK(s.allocated_bytes_by_category[int(mem::Category::parameter)].peak == 1024);
  CHECK(s.allocated_bytes_by_category[int(mem::Category::activation)].current == 1024);
  const uintptr_t freed = p.addr();
  p.release();
  CHECK_FALSE(a.set_category(reinterpret_cast<void*>(freed), mem::Category::gradient));  // a free block
  CHECK_FALSE(a.category_of(reinterpret_cast<void*>(freed)).has_value());
  int local = 0;
  CHECK_FALSE(a.set_category(&local, mem::Category::gradient));  // not this allocator's memory
  CHECK(a.stats().allocated_bytes_by_category[int(mem::Category::activation)].current == 0);
}

TEST_CASE("threads allocating and freeing at once leave consistent stats") {
  auto a = meta_allocator();
  auto work = [&](int seed) {
    std::vector<gb::DataPtr> held;
    for (int i = 0; i < 20000; ++i) {
      held.push_back(a.allocate(512 * (1 + (i * seed) % 64)));
      if (held.size() > 16) {
        held.front().deleter(held.front().ptr);
        held.erase(held.begin());
      }
    }
    for (auto& d : held) d.deleter(d.ptr);
  };
  std::thread t1(work, 7), t2(work, 13);
  t1.join();
  t2.join();
  auto s = a.stats();
  CHECK(s.allocation[mem::kAll].allocated == 40000);
  CHECK(s.allocation[mem::kAll].current == 0);
  CHECK(s.allocated_bytes[mem::kAll].current == 0);
  CHECK(s.inactive_split_bytes[mem::kAll].current == 0);
  a.empty_cache();
  CHECK(a.stats().reserved_bytes[mem::kAll].current == 0);
}
