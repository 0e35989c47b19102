// tests/viewer/memory_model_test.cpp — MemoryModel against the trace's memory_events: the layers' sums and peaks,
// retagged blocks, the segment map, the largest live blocks (from the copy, equal to the SQL replay), and the
// answers computed off the frame equal to the computations.
#include <doctest/doctest.h>

#include <algorithm>

#include "traces/query/trace_db.h"
#include "traces/writer.h"

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;
using gb::trace::SpanKind;

namespace {

bool same(const MemoryColumn& a, const MemoryColumn& b) {
  return a.t_ns == b.t_ns && a.context == b.context && a.reserved == b.reserved && a.allocated == b.allocated &&
         a.by_category == b.by_category;
}

}  // namespace

TEST_CASE("memory layers: categories sum to allocated, reserved and allocated equal the trace's totals") {
  Fixture f;
  TraceModel m(f.path, kSync);
  REQUIRE(m.memory().has_data());
  CHECK(m.memory().device() == 0);
  CHECK(m.memory().context_bytes() == 300LL << 20);
  for (int i = 0; i <= 40; ++i) {
    const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 40;
    const MemoryColumn c = m.memory().at(t);
    std::int64_t sum = 0;
    for (std::int64_t v : c.by_category) sum += v;
    CHECK(sum == c.allocated);
    const std::string q = " FROM memory_events WHERE device = 0 AND t_ns <= " + std::to_string(t) +
                          " ORDER BY id DESC LIMIT 1";
    CHECK(c.allocated == std::max<std::int64_t>(0, sql(f.path, "SELECT allocated" + q)));
    CHECK(c.reserved == std::max<std::int64_t>(0, sql(f.path, "SELECT reserved" + q)));
    CHECK(c.reserved_unallocated() >= 0);
  }
  // Columns keep the peak whatever the zoom.
  for (int cols : {7, 300, 5000}) {
    std::int64_t peak = 0;
    for (const MemoryColumn& c : m.memory().compute_columns(m.begin_ns(), m.end_ns() + 1, cols)) {
      peak = std::max(peak, c.allocated);
      std::int64_t sum = 0;
      for (std::int64_t v : c.by_category) sum += v;
      CHECK(sum == c.allocated);
    }
    CHECK(peak == f.synth.peak_allocated);
  }
  CHECK(m.memory().peak_reserved() == f.synth.peak_reserved);
}

TEST_CASE("largest live blocks: largest first, each still live at that moment") {
  Fixture f;
  TraceModel m(f.path, kSync);
  const auto s = *m.step(1);
  const std::int64_t t = s.start_ns + (s.end_ns - s.start_ns) / 2;
  auto blocks = (*settle(m, [&] { return m.memory().largest_live(t, 5); }));
  REQUIRE(blocks.size() == 5);
  for (std::size_t i = 1; i < blocks.size(); ++i) CHECK(blocks[i - 1].size >= blocks[i].size);
  for (const LiveBlock& b : blocks) {
    CHECK(b.t_alloc_ns <= t);
    // (the allocator reuses addresses: only a free after this block's alloc counts)
    CHECK(sql(f.path, "SELECT count(*) FROM memory_events WHERE action = 1 AND addr = " + std::to_string(b.addr) +
                          " AND t_ns > " + std::to_string(b.t_alloc_ns) + " AND t_ns <= " + std::to_string(t)) == 0);
  }
}

TEST_CASE("memory: a retag event moves a live block's bytes to its new category (the engine tags after allocating)") {
  using gb::trace::MemAction;
  using gb::trace::MemCategory;
  using gb::trace::MemoryEventRecord;
  TempDir tmp;
  const std::string path = tmp.file("retag.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{0, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
    auto ev = [&](std::int64_t id, std::int64_t t, MemAction a, std::int64_t addr, std::int64_t size, MemCategory c,
                  std::int64_t allocated) {
      w.add(MemoryEventRecord{.id = id, .t_ns = t, .action = a, .device = gb::trace::kCpu, .addr = addr, .size = size,
                              .requested = size, .category = c, .allocated = allocated, .reserved = 1 << 20});
    };
    ev(1, 10, MemAction::alloc, 4096, 512, MemCategory::temporary, 512);
    ev(2, 20, MemAction::alloc, 8192, 1024, MemCategory::temporary, 1536);
    ev(3, 30, MemAction::retag, 4096, 512, MemCategory::activation, 1536);   // saved for backward
    ev(4, 40, MemAction::retag, 8192, 1024, MemCategory::parameter, 1536);   // requires_grad_()
    ev(5, 50, MemAction::retag, 4096, 512, MemCategory::temporary, 1536);    // released after its node ran
    ev(6, 60, MemAction::free, 4096, 512, MemCategory::temporary, 1024);
  }
  TraceModel m(path, kSync);
  REQUIRE(m.memory().has_data());
  auto cat = [&](std::int64_t t, MemCategory c) { return m.memory().at(t).by_category[static_cast<std::size_t>(c)]; };
  CHECK(cat(25, MemCategory::temporary) == 1536);
  CHECK(cat(35, MemCategory::activation) == 512);
  CHECK(cat(35, MemCategory::temporary) == 1024);
  CHECK(cat(45, MemCategory::parameter) == 1024);
  CHECK(cat(55, MemCategory::activation) == 0);
  CHECK(cat(55, MemCategory::temporary) == 512);
  CHECK(cat(65, MemCategory::temporary) == 0);
  CHECK(cat(65, MemCategory::parameter) == 1024);
  auto live = (*settle(m, [&] { return m.memory().largest_live(45, 5); }));
  REQUIRE(live.size() == 2);
  CHECK(live[0].size == 1024);
  CHECK(live[0].category == MemCategory::parameter);
  CHECK(live[1].category == MemCategory::activation);
}

TEST_CASE("memory: events are replayed in time order, not id order (a worker's rows written after the main thread's)") {
  // The collector writes each thread's events in order but interleaves threads by drain: here the worker's alloc
  // (t 20) and free (t 40) got ids 3 and 4, after the main thread's alloc at t 30. Read in id order, the times are
  // not sorted and the picture at t 25 misses the worker's block (512 instead of 1024); in time order it is live
  // over [20, 40).
  using gb::trace::MemAction;
  using gb::trace::MemCategory;
  using gb::trace::MemoryEventRecord;
  TempDir tmp;
  const std::string path = tmp.file("threads.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{0, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
    auto ev = [&](std::int64_t id, std::int64_t t, MemAction a, std::int64_t addr, std::int64_t size,
                  std::int64_t allocated) {
      w.add(MemoryEventRecord{.id = id, .t_ns = t, .action = a, .device = gb::trace::kCpu, .addr = addr, .size = size,
                              .requested = size, .category = MemCategory::input, .allocated = allocated,
                              .reserved = 1 << 20});
    };
    ev(1, 10, MemAction::alloc, 4096, 512, 512);    // main
    ev(2, 30, MemAction::alloc, 8192, 256, 1280);   // main, while the worker's block is live
    ev(3, 20, MemAction::alloc, 16384, 512, 1024);  // worker
    ev(4, 40, MemAction::free, 16384, 512, 768);    // worker
  }
  TraceModel m(path, kSync);
  REQUIRE(m.memory().has_data());
  auto input = [&](std::int64_t t) { return m.memory().at(t).by_category[static_cast<std::size_t>(MemCategory::input)]; };
  CHECK(m.memory().at(25).allocated == 1024);
  CHECK(input(25) == 1024);
  CHECK(m.memory().at(35).allocated == 1280);
  CHECK(input(35) == 1280);
  CHECK(m.memory().at(45).allocated == 768);
  CHECK(input(45) == 768);
  auto live = (*settle(m, [&] { return m.memory().largest_live(45, 5); }));
  CHECK(live.size() == 2);
  CHECK(gb::query::TraceDb(path).scalar("SELECT count(*) FROM memory_events") == 4);
}

TEST_CASE("segment map: live blocks inside their segments add up to allocated; reserved is the segments' sum") {
  Fixture f({.steps = 4, .layers = 4, .ops_per_layer = 1});
  TraceModel m(f.path, kSync);
  for (int i = 1; i <= 20; ++i) {
    const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 21;
    const SegmentMap& map = m.memory().replay_segments(t);
    const MemoryColumn c = m.memory().at(t);
    std::int64_t allocated = map.unplaced, reserved = 0;
    for (const SegmentRow& s : map.segments) {
      reserved += s.size;
      std::int64_t at = 0, sum = 0;
      for (const SegmentBlock& b : s.blocks) {
        CHECK(b.offset >= at);  // by offset, no overlap
        at = b.offset + b.size;
        sum += b.size;
      }
      CHECK(at <= s.size);
      CHECK(sum == s.allocated);
      CHECK(s.largest_free <= s.size - s.allocated);
      allocated += s.allocated;
    }
    CHECK(map.unplaced == 0);
    CHECK(allocated == c.allocated);
    CHECK(reserved == c.reserved);
  }
  gb::tools::write_synthetic_trace(f.path, {.steps = 2, .layers = 2, .oom = true});
  TraceModel o(f.path, kSync);
  REQUIRE(o.memory().oom_reports().size() == 1);
  CHECK(o.memory().oom_reports()[0].report.find("out of memory") != std::string::npos);
}

TEST_CASE("largest live from memory equals the SQL replay") {
  for (bool cuda : {false, true}) {
    CAPTURE(cuda);
    TempDir tmp;
    const std::string path = tmp.file("run.db");
    gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2, .cuda = cuda, .oom = cuda});
    TraceModel m(path, {.background = false});
    gb::query::TraceDb db(path);
    REQUIRE(m.memory().has_data());
    std::int64_t nonempty = 0;
    for (int i = -1; i <= 40; ++i) {
      const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 40;
      CAPTURE(t);
      const auto fast = (*settle(m, [&] { return m.memory().largest_live(t, 25); })), slow = m.memory().largest_live_sql(db, t, 25);
      REQUIRE(fast.size() == slow.size());
      nonempty += !fast.empty();
      for (std::size_t k = 0; k < fast.size(); ++k) {
        CHECK(fast[k].addr == slow[k].addr);
        CHECK(fast[k].size == slow[k].size);
        CHECK(fast[k].t_alloc_ns == slow[k].t_alloc_ns);
        CHECK(fast[k].category == slow[k].category);
        CHECK(fast[k].op == slow[k].op);
        CHECK(fast[k].module == slow[k].module);
      }
    }
    CHECK(nonempty > 30);  // most moments have live blocks: the comparison is not of empty lists
    CHECK((*settle(m, [&] { return m.memory().largest_live(m.begin_ns() - 1, 5); })).empty());
  }
}

TEST_CASE("columns / segments: pending first, then equal to the computations") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2, .cuda = true, .oom = true});
  TraceModel m(path, {.background = false});
  REQUIRE(m.memory().has_data());
  const std::int64_t t0 = m.begin_ns(), t1 = m.end_ns() + 1;
  CHECK(m.memory().columns(t0, t1, 300) == nullptr);  // posted, not computed in the call
  CHECK(m.memory().pending());
  m.wait_queries();
  const std::vector<MemoryColumn>* got = m.memory().columns(t0, t1, 300);
  REQUIRE(got != nullptr);
  CHECK_FALSE(m.memory().pending());
  const std::vector<MemoryColumn> want = m.memory().compute_columns(t0, t1, 300);
  REQUIRE(got->size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(same((*got)[i], want[i]));
  // A new window answers the previous one at once, until its own is in.
  const std::vector<MemoryColumn>* stale = m.memory().columns(t0, (t0 + t1) / 2, 50);
  REQUIRE(stale != nullptr);
  CHECK(stale->size() == 300);
  CHECK(m.memory().pending());
  m.wait_queries();
  CHECK(m.memory().columns(t0, (t0 + t1) / 2, 50)->size() == 50);

  for (int i = 1; i <= 5; ++i) {
    const std::int64_t t = t0 + (t1 - t0) * i / 6;
    const SegmentMap* s = m.memory().segments(t);
    CHECK((s == nullptr || s->t_ns != t));  // never the answer for t before its job ran
    m.wait_queries();
    s = m.memory().segments(t);
    REQUIRE(s != nullptr);
    const SegmentMap& ref = m.memory().replay_segments(t);
    CHECK(s->t_ns == t);
    CHECK(s->unplaced == ref.unplaced);
    REQUIRE(s->segments.size() == ref.segments.size());
    for (std::size_t k = 0; k < ref.segments.size(); ++k) {
      CHECK(s->segments[k].id == ref.segments[k].id);
      CHECK(s->segments[k].allocated == ref.segments[k].allocated);
      CHECK(s->segments[k].largest_free == ref.segments[k].largest_free);
      CHECK(s->segments[k].blocks.size() == ref.segments[k].blocks.size());
    }
  }
}

TEST_CASE("largest_live: pending first, then equal to the SQL replay") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2, .cuda = true});
  TraceModel m(path, {.background = false});
  gb::query::TraceDb db(path);
  REQUIRE(m.memory().has_data());
  for (int i = 1; i <= 4; ++i) {
    const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 5;
    const std::vector<LiveBlock>* first = m.memory().largest_live(t, 20);
    CHECK((i == 1) == (first == nullptr));  // nothing yet, then the previous cursor's answer
    CHECK(m.memory().pending());
    m.wait_queries();
    const std::vector<LiveBlock>* got = m.memory().largest_live(t, 20);
    REQUIRE(got != nullptr);
    CHECK_FALSE(m.memory().pending());
    const std::vector<LiveBlock> want = m.memory().largest_live_sql(db, t, 20);
    REQUIRE(got->size() == want.size());
    REQUIRE(!want.empty());
    for (std::size_t k = 0; k < want.size(); ++k) {
      CHECK((*got)[k].addr == want[k].addr);
      CHECK((*got)[k].size == want[k].size);
      CHECK((*got)[k].category == want[k].category);
      CHECK((*got)[k].op == want[k].op);
      CHECK((*got)[k].module == want[k].module);
    }
  }
}
