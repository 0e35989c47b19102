// tests/instrument/collector_test.cpp — instrument/collector.{h,cpp}: nothing is lost while rings grow, nothing in
// blocking mode, and past the largest ring every event is either a row or counted as dropped, exactly; a long run's
// two levels: every step's summary, detail in the policy's windows and the flight recorder's last steps, memory
// that replays exactly across the gaps, a summary that is never shed.
#include "instrument/collector.h"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "instrument/session.h"
#include "support/sanitizers.h"
#include "traces/query/memory_replay.h"
#include "traces/query/trace_db.h"
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

// ---- long runs: the summary of every step, detail in windows and the flight recorder's last steps ----

namespace {

// A memory event the way the allocator's observer emits one (time, span and module from the probe).
void mem(MemAction a, std::int64_t addr, std::int64_t size, MemCategory c, std::int64_t allocated,
         std::int64_t reserved) {
  MemoryEventRecord r;
  r.action = a;
  r.device = kCpu;
  r.addr = addr;
  r.size = size;
  r.requested = size;
  r.category = c;
  r.allocated = allocated;
  r.reserved = reserved;
  emit(r);
}

// `steps` steps, each a StepScope with a forward span allocating an activation and a backward span freeing it;
// a parameter block allocated before the first step. anomaly_at: a warning anomaly emitted inside that step.
void train(std::int64_t steps, std::int64_t anomaly_at = -1) {
  mem(MemAction::segment_alloc, 0x10000, 1 << 20, MemCategory::unknown, 0, 1 << 20);
  mem(MemAction::alloc, 0x10000, 4096, MemCategory::parameter, 4096, 1 << 20);
  for (std::int64_t s = 0; s < steps; ++s) {
    StepScope step(s);
    {
      GB_TRACE_SCOPE("forward");
      mem(MemAction::alloc, 0x20000, 8192, MemCategory::activation, 4096 + 8192, 1 << 20);
    }
    {
      GB_TRACE_SCOPE("backward");
      mem(MemAction::free, 0x20000, 8192, MemCategory::activation, 4096, 1 << 20);
    }
    if (s == anomaly_at) {
      AnomalyRecord a;
      a.kind = AnomalyKind::loss_spike;
      a.severity = Severity::warning;
      a.step = s;
      a.message = "planted";
      emit(a);
    }
    step.set_loss(1.0 / double(s + 1));
  }
}

std::vector<std::int64_t> steps_with(const std::string& path, const std::string& span_name) {
  gb::query::TraceDb db(path);
  std::vector<std::int64_t> out;
  db.each("SELECT DISTINCT s.step FROM spans s JOIN strings n ON n.id = s.name_id WHERE n.text = '" + span_name +
              "' ORDER BY s.step",
          [&](const gb::query::Row& r) { out.push_back(r.i64(0)); });
  return out;
}

std::vector<std::int64_t> range(std::initializer_list<std::pair<std::int64_t, std::int64_t>> spans) {
  std::vector<std::int64_t> out;
  for (auto [a, b] : spans)
    for (std::int64_t s = a; s <= b; ++s) out.push_back(s);
  return out;
}

std::string windows_text(const std::string& path) {
  std::string out;
  for (const DetailWindowRecord& w : Reader(path).all<DetailWindowRecord>())
    out += std::to_string(w.first_step) + "-" + std::to_string(w.last_step) + " " +
           std::string(kDetailReasonNames[static_cast<std::size_t>(w.reason)]) + "; ";
  return out;
}

// The memory replay of the whole file, in (t_ns, id) order: frees that found no live block.
std::int64_t unmatched_frees(const std::string& path) {
  gb::query::TraceDb db(path);
  gb::query::MemoryReplay<> replay;
  std::int64_t bad = 0;
  db.each("SELECT action, addr, size, category FROM memory_events ORDER BY t_ns, id", [&](const gb::query::Row& r) {
    if (!replay.apply(gb::query::mem_action(r.i64(0)), r.i64(1), r.i64(2), gb::query::mem_category(r.i64(3)))) ++bad;
  });
  return bad;
}

}  // namespace

TEST_CASE("a long run: every step's summary; detail in the first steps, each window and the recorder's last steps") {
  TempDir tmp;
  std::string path = tmp.file("long.db");
  const DetailPolicy policy = DetailPolicy::parse("first=3,every=10,window=2,recorder=4,recorder_mb=1,after=1");
  {
    Session s(path, SessionOptions{.detail = policy});
    train(40);
  }
  Reader r(path);
  CHECK(r.meta("detail") == policy.text());
  CHECK(r.all<StepRecord>().size() == 40);  // the summary: every step
  CHECK(steps_with(path, "step").size() == 40);
  CHECK(steps_with(path, "forward") == range({{0, 2}, {10, 11}, {20, 21}, {30, 31}, {36, 39}}));
  CHECK(steps_with(path, "backward") == steps_with(path, "forward"));
  CHECK(windows_text(path) == "0-2 first; 10-11 periodic; 20-21 periodic; 30-31 periodic; 36-39 end; ");
  CHECK(r.meta("recorder_dumps") == "1");
  CHECK(std::stoll(r.meta("events_outside_detail").value_or("0")) > 0);
  // memory: each stretch starts with what was live (the parameter, from before step 0), so every free finds its block
  CHECK(unmatched_frees(path) == 0);
  CHECK(sql_int(path, "SELECT count(*) FROM memory_events WHERE action = 7") == 4);  // 10, 20, 30, the recorder's
  CHECK(sql_int(path, "SELECT count(*) FROM memory_events WHERE action = 8 AND addr = 65536 AND category = 1") == 4);
  CHECK(sql_int(path, "SELECT count(*) FROM memory_events WHERE action = 9") == 4);  // the segment
  CHECK(sql_int(path, "SELECT count(*) FROM memory_events WHERE action = 0 AND category = 3") == 3 + 2 + 2 + 2 + 4);
}

TEST_CASE("an anomaly writes the recorder's last steps, then the steps after it in full") {
  TempDir tmp;
  std::string path = tmp.file("anomaly.db");
  {
    Session s(path, SessionOptions{.detail = DetailPolicy::parse("first=3,every=10,window=2,recorder=4,after=1")});
    train(40, 25);
  }
  CHECK(steps_with(path, "forward") == range({{0, 2}, {10, 11}, {20, 21}, {22, 26}, {30, 31}, {36, 39}}));
  CHECK(windows_text(path) ==
        "0-2 first; 10-11 periodic; 20-21 periodic; 22-26 anomaly; 30-31 periodic; 36-39 end; ");
  CHECK(unmatched_frees(path) == 0);
  CHECK(Reader(path).meta("recorder_dumps") == "2");
}

TEST_CASE("an anomaly inside a periodic window: the recorder writes the steps before the window") {
  TempDir tmp;
  std::string path = tmp.file("inside.db");
  {
    Session s(path, SessionOptions{.detail = DetailPolicy::parse("first=3,every=10,window=2,recorder=4,after=1")});
    train(40, 20);  // step 20 opens a periodic window
  }
  CHECK(windows_text(path) ==
        "0-2 first; 10-11 periodic; 17-19 anomaly; 20-21 periodic; 30-31 periodic; 36-39 end; ");
  CHECK(steps_with(path, "forward") == range({{0, 2}, {10, 11}, {17, 21}, {30, 31}, {36, 39}}));
  CHECK(unmatched_frees(path) == 0);
}

TEST_CASE("full detail: every step, one window") {
  TempDir tmp;
  std::string path = tmp.file("full.db");
  {
    Session s(path, SessionOptions{.detail = DetailPolicy::full()});
    train(30);
  }
  CHECK(steps_with(path, "forward") == range({{0, 29}}));
  CHECK(windows_text(path) == "0-29 full; ");
  CHECK(Reader(path).meta("detail") == "full");
  CHECK(unmatched_frees(path) == 0);
}

TEST_CASE("the summary is never shed: rings too small for the detail still bring every steps row") {
  TempDir tmp;
  std::string path = tmp.file("shed.db");
  constexpr std::int64_t kSteps = 200;
  {
    Session s(path, SessionOptions{.on_full = OnFull::drop, .ring_events = 64, .ring_max_events = 64,
                                   .detail = DetailPolicy::full()});
    for (std::int64_t i = 0; i < kSteps; ++i) {
      StepScope step(i);
      for (int k = 0; k < 2000; ++k) {
        GB_TRACE_SCOPE("flood");
      }
    }
  }
  Reader r(path);
  CHECK(r.all<StepRecord>().size() == kSteps);
  const std::int64_t shed = std::stoll(r.meta("shed_events.span").value_or("0"));
  CHECK(shed > 0);
  CHECK(r.meta("dropped_events") == std::to_string(shed));
  CHECK(sql_int(path, "SELECT count(*) FROM spans WHERE kind = 0 OR kind = 7") + shed >= kSteps * 2000);
}

TEST_CASE("a steps row: its span's times, where the time went, the batch") {
  TempDir tmp;
  std::string path = tmp.file("phases.db");
  {
    Session s(path);
    for (int i = 0; i < 3; ++i) {
      StepScope step(i);
      {
        PhaseScope data(Phase::data);
        std::this_thread::sleep_for(std::chrono::milliseconds(4));
        add_step_samples(32);
        add_step_samples(32);  // two micro-batches
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the forward: what the other phases leave
      {
        PhaseScope backward(Phase::backward);
        { PhaseScope nested(Phase::backward); }  // only the outermost counts
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
      }
      {
        PhaseScope opt(Phase::optimizer);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (i == 2) step.set_samples(10);  // the program's own count wins
      add_step_tokens(7);
    }
  }
  Reader r(path);
  auto steps = r.all<StepRecord>();
  REQUIRE(steps.size() == 3);
  gb::query::TraceDb db(path);
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  db.each("SELECT start_ns, end_ns FROM spans WHERE kind = 6 ORDER BY step",
          [&](const gb::query::Row& row) { spans.emplace_back(row.i64(0), row.i64(1)); });
  REQUIRE(spans.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const StepRecord& st = steps[i];
    CHECK(st.start_ns == spans[i].first);  // the step span's own times
    CHECK(st.end_ns == spans[i].second);
    REQUIRE(st.data_ns);
    CHECK(*st.data_ns >= 4'000'000);
    CHECK(*st.backward_ns >= 3'000'000);
    CHECK(*st.backward_ns < 30'000'000);
    CHECK(*st.optimizer_ns >= 1'000'000);
    CHECK(*st.forward_ns >= 2'000'000);
    CHECK(*st.forward_ns + *st.data_ns + *st.backward_ns + *st.optimizer_ns == st.end_ns - st.start_ns);
    CHECK(st.samples == (i == 2 ? 10 : 64));
    CHECK(st.tokens == 7);
  }
}

TEST_CASE("an OOM report writes the recorder's last steps, with the steps after it") {
  TempDir tmp;
  std::string path = tmp.file("oom.db");
  {
    Session s(path, SessionOptions{.detail = DetailPolicy::parse("summary,recorder=3,after=1")});
    mem(MemAction::alloc, 0x10000, 4096, MemCategory::parameter, 4096, 1 << 20);
    for (std::int64_t step = 0; step < 20; ++step) {
      StepScope st(step);
      {
        GB_TRACE_SCOPE("forward");
      }
      if (step == 12) {
        OomReportRecord oom;
        oom.requested = 1 << 30;
        oom.report = "planted";
        emit(oom);
      }
    }
  }
  CHECK(steps_with(path, "forward") == range({{10, 13}, {17, 19}}));  // 3 before and the OOM's step, 1 after; the end
  CHECK(windows_text(path) == "10-13 oom; 17-19 end; ");
  CHECK(Reader(path).all<StepRecord>().size() == 20);
}
