// tests/instrument/collector_test.cpp — instrument/collector.{h,cpp}: nothing is lost while rings grow, nothing in
// blocking mode, and past the largest ring every event is either a row or counted as dropped, exactly.
#include "instrument/collector.h"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "instrument/session.h"
#include "support/sanitizers.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

using namespace gb::trace;

namespace {
// Rows per thread id in the spans table.
std::map<Id, std::int64_t> spans_per_thread(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT thread_id, count(*) FROM spans GROUP BY thread_id", -1, &s, nullptr);
  std::map<Id, std::int64_t> out;
  while (sqlite3_step(s) == SQLITE_ROW) out[sqlite3_column_int64(s, 0)] = sqlite3_column_int64(s, 1);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

// Each of `threads` threads opens `per_thread` spans (pairs: an outer and an inner), returns their thread ids.
std::vector<Id> produce(int threads, std::int64_t per_thread) {
  std::vector<Id> ids(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ids[static_cast<std::size_t>(t)] = thread_id();
      for (std::int64_t i = 0; i < per_thread / 2; ++i) {
        GB_TRACE_SPAN(SpanKind::op, "outer");
        GB_TRACE_SPAN(SpanKind::op, "inner");
      }
    });
  for (auto& th : pool) th.join();
  return ids;
}
}  // namespace

TEST_CASE("blocking mode: 8 threads x 1,000,000 spans, every one is in the file with the right ids") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  constexpr std::int64_t kPerThread = gbtest::kThreadSanitizer ? 50'000 : 1'000'000;
  std::vector<Id> ids;
  {
    Session s(path, SessionOptions{.on_full = OnFull::block, .ring_events = 4096, .ring_max_events = 4096});
    REQUIRE(s.active());
    ids = produce(8, kPerThread);
  }
  Reader r(path);
  CHECK(r.meta("dropped_events") == "0");
  auto counts = spans_per_thread(path);
  for (Id id : ids) {
    CAPTURE(id);
    CHECK(counts[id] == kPerThread);
    // ids are 1..n in the thread's range, with no gap
    CHECK(sql_int(path, "SELECT min(id) FROM spans WHERE thread_id = " + std::to_string(id)) == span_id(id, 1));
    CHECK(sql_int(path, "SELECT max(id) FROM spans WHERE thread_id = " + std::to_string(id)) ==
          span_id(id, kPerThread));
  }
  // every inner span's parent is the outer one begun just before it
  CHECK(sql_int(path, "SELECT count(*) FROM spans WHERE parent_id IS NOT NULL AND parent_id != id - 1") == 0);
  CHECK(sql_int(path, "SELECT count(*) FROM spans WHERE parent_id IS NOT NULL") == 8 * kPerThread / 2);
}

TEST_CASE("a full ring grows instead of dropping: 4 threads x 200,000 spans through 64-event rings, none lost") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  constexpr std::int64_t kPerThread = 200'000;
  std::vector<Id> ids;
  {
    Session s(path, SessionOptions{.on_full = OnFull::drop, .ring_events = 64, .ring_max_events = 1 << 20});
    ids = produce(4, kPerThread);
  }
  Reader r(path);
  CHECK(r.meta("dropped_events") == "0");
  auto counts = spans_per_thread(path);
  int grown = 0;
  for (Id id : ids) {
    CAPTURE(id);
    CHECK(counts[id] == kPerThread);
    // in order across the rings: ids 1..n with no gap, every inner span under the outer one begun just before
    CHECK(sql_int(path, "SELECT max(id) FROM spans WHERE thread_id = " + std::to_string(id)) ==
          span_id(id, kPerThread));
    if (auto peak = r.meta("ring_peak_events.thread." + std::to_string(id))) {
      ++grown;
      CHECK(std::stoll(*peak) > 64);
      CHECK(std::stoll(*peak) <= 1 << 20);
    }
  }
  CHECK(grown > 0);  // a 64-event ring cannot keep up with a tight loop: it grew
  CHECK(sql_int(path, "SELECT count(*) FROM spans WHERE parent_id IS NOT NULL AND parent_id != id - 1") == 0);
}

TEST_CASE("a grown ring goes back to the session's size once the collector has caught up") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Session s(path, SessionOptions{.on_full = OnFull::drop, .ring_events = 1024, .ring_max_events = 1 << 20});
  std::uint64_t grown_to = 0, after = 0;
  std::thread([&] {
    detail::ThreadBuffer* b = detail::this_thread();
    REQUIRE(b);
    for (int i = 0; i < 200'000 && b->ring->capacity() == 1024; ++i) {
      GB_TRACE_SPAN(SpanKind::op, "burst");
    }
    grown_to = b->ring->capacity();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the collector catches up
    for (int round = 0; round < 40; ++round) {  // a steady trickle the collector keeps up with, past a few checks
      for (int i = 0; i < 100; ++i) {
        GB_TRACE_SPAN(SpanKind::op, "steady");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    after = b->ring->capacity();
  }).join();
  s.stop();
  CHECK(grown_to > 1024);
  CHECK(after == 1024);
  Reader r(path);
  CHECK(r.meta("dropped_events") == "0");
}

TEST_CASE("past the largest ring: rows plus dropped events equal the events produced, per thread") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  constexpr std::int64_t kPerThread = 200'000;
  std::vector<Id> ids;
  {
    Session s(path, SessionOptions{.on_full = OnFull::drop, .ring_events = 64, .ring_max_events = 64});
    ids = produce(4, kPerThread);
  }
  Reader r(path);
  auto counts = spans_per_thread(path);
  std::int64_t total_dropped = 0;
  for (Id id : ids) {
    CAPTURE(id);
    std::int64_t dropped = std::stoll(r.meta("dropped_events.thread." + std::to_string(id)).value_or("0"));
    CHECK(counts[id] + dropped == kPerThread);
    total_dropped += dropped;
  }
  MESSAGE(total_dropped << " of " << 4 * kPerThread << " events dropped with 64-event rings");
  CHECK(total_dropped > 0);  // a 64-event ring cannot keep up with a tight loop
  CHECK(r.meta("dropped_events") == std::to_string(total_dropped));
}

TEST_CASE("events a thread left in its ring after it exited are still written") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Id tid = -1;
  {
    Session s(path);
    std::thread([&] {
      tid = thread_id();
      for (int i = 0; i < 1000; ++i) {
        GB_TRACE_SCOPE("short-lived");
      }
    }).join();
  }
  CHECK(spans_per_thread(path)[tid] == 1000);
}
