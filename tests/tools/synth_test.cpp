// tests/tools/synth_test.cpp — the synthetic trace generator: a file `glassbox check` accepts, the span-id layout,
// the requested size, memory totals that replay, and the planted NaN.
#include <doctest/doctest.h>

#include <map>

#include "tools/check.h"
#include "tools/synth.h"
#include "traces/query/detail.h"
#include "traces/query/memory_replay.h"
#include "traces/query/trace_db.h"
#include "traces/temp_dir.h"

using namespace gb::tools;
using namespace gb::query;

namespace {
double real(const TraceDb& db, std::string_view sql) {
  double v = 0;
  db.each(sql, [&](const Row& r) { v = r.f64(0); });
  return v;
}
}  // namespace

TEST_CASE("synth: a trace glassbox check accepts, with the counts it reports") {
  TempDir tmp;
  const std::string path = tmp.file("s.db");
  SynthResult r = write_synthetic_trace(path, {.steps = 5, .layers = 3});
  TraceDb db(path);
  CheckResult c = check_trace(db);
  for (const Finding& f : c.problems) MESSAGE(f.what);
  CHECK(c.ok());
  CHECK(c.notes.empty());
  CHECK(c.spans == r.spans);
  CHECK(c.memory_events == r.memory_events);
  CHECK(c.steps == 5);
  CHECK(db.scalar("SELECT count(*) FROM grad_stats") == 5 * 6);
  CHECK(db.scalar("SELECT count(*) FROM threads") == 3);
  // Span ids: thread << 32 | n with n = 1, 2, ... in start order on every thread.
  std::map<std::int64_t, std::int64_t> last_n, last_start;
  db.each("SELECT id, start_ns FROM spans ORDER BY id", [&](const Row& row) {
    const std::int64_t thread = row.i64(0) >> 32, n = row.i64(0) & 0xffffffff;
    CHECK(n == last_n[thread] + 1);
    CHECK(row.i64(1) >= last_start[thread]);
    last_n[thread] = n, last_start[thread] = row.i64(1);
  });
  // Every backward node has the forward op of its seq.
  CHECK(db.scalar("SELECT count(*) FROM spans b WHERE b.kind = 1 AND NOT EXISTS "
                  "(SELECT 1 FROM spans f WHERE f.kind = 0 AND f.seq = b.seq)") == 0);
}

TEST_CASE("synth: --spans picks the ops per layer to land near the target") {
  TempDir tmp;
  SynthResult r = write_synthetic_trace(tmp.file("s.db"), {.steps = 10, .layers = 4, .spans = 20'000});
  CHECK(r.spans > 18'000);
  CHECK(r.spans <= 20'000);
  CHECK(r.ops_per_layer > 100);
}

TEST_CASE("synth: allocated and reserved are the running totals of the events") {
  TempDir tmp;
  const std::string path = tmp.file("s.db");
  SynthResult r = write_synthetic_trace(path, {.steps = 4, .layers = 2});
  TraceDb db(path);
  std::int64_t allocated = 0, reserved = 0, peak = 0;
  std::map<std::int64_t, std::int64_t> live;
  std::map<int, std::int64_t> categories;
  db.each("SELECT action, addr, size, allocated, reserved, category FROM memory_events ORDER BY id", [&](const Row& row) {
    if (row.i64(0) == 0) allocated += row.i64(2), live[row.i64(1)] = row.i64(2), ++categories[int(row.i64(5))];
    if (row.i64(0) == 1) allocated -= live.at(row.i64(1)), live.erase(row.i64(1));
    if (row.i64(0) == 2) reserved += row.i64(2);
    CHECK(row.i64(3) == allocated);
    CHECK(row.i64(4) == reserved);
    CHECK(allocated <= reserved);
    peak = std::max(peak, allocated);
  });
  CHECK(peak == r.peak_allocated);
  CHECK(categories.size() == 8);  // every category appears
}

TEST_CASE("synth: the planted NaN is in grad_stats and in anomalies; --nan-step -2 plants none") {
  TempDir tmp;
  const std::string path = tmp.file("s.db");
  SynthResult r = write_synthetic_trace(path, {.steps = 8, .layers = 4, .nan_step = 5, .nan_layer = 2});
  TraceDb db(path);
  CHECK(r.nan_param_id == 5);
  CHECK(db.scalar("SELECT step * 100 + param_id FROM grad_stats WHERE nan_count > 0") == 505);
  CHECK(db.scalar("SELECT count(*) FROM anomalies WHERE kind = 1 AND step = 5 AND param_id = 5") == 1);
  SynthResult none = write_synthetic_trace(tmp.file("n.db"), {.steps = 8, .layers = 4, .nan_step = -2});
  CHECK(none.nan_step == -1);
  CHECK(TraceDb(tmp.file("n.db")).scalar("SELECT count(*) FROM grad_stats WHERE nan_count > 0") == 0);
}

TEST_CASE("synth: blocks lie inside their segment and never overlap; --memory-layer-stride thins the events") {
  TempDir tmp;
  const std::string path = tmp.file("s.db");
  SynthResult r = write_synthetic_trace(path, {.steps = 4, .layers = 4});
  CHECK(r.segments > 1);
  TraceDb db(path);
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> segments;  // id -> (addr, size)
  std::map<std::int64_t, std::int64_t> live;                               // addr -> end
  std::int64_t checked = 0;
  db.each("SELECT action, addr, size, segment_id FROM memory_events ORDER BY id", [&](const Row& row) {
    if (row.i64(0) == 2) segments[row.i64(3)] = {row.i64(1), row.i64(2)};
    if (row.i64(0) != 0) {
      if (row.i64(0) == 1) live.erase(row.i64(1));
      return;
    }
    const auto [a, n] = segments.at(row.i64(3));
    CHECK(row.i64(1) >= a);
    CHECK(row.i64(1) + row.i64(2) <= a + n);
    auto next = live.lower_bound(row.i64(1));
    if (next != live.end()) CHECK(row.i64(1) + row.i64(2) <= next->first);
    if (next != live.begin()) CHECK(std::prev(next)->second <= row.i64(1));
    live[row.i64(1)] = row.i64(1) + row.i64(2);
    ++checked;
  });
  CHECK(checked > 50);
  SynthResult thin = write_synthetic_trace(tmp.file("t.db"), {.steps = 4, .layers = 4, .memory_layer_stride = 4});
  CHECK(thin.memory_events < r.memory_events / 2);
  CHECK(thin.spans == r.spans);
}

TEST_CASE("synth: --cuda writes a stream thread with kernels naming their op; --oom an oom event and report") {
  TempDir tmp;
  const std::string path = tmp.file("c.db");
  SynthResult r = write_synthetic_trace(path, {.steps = 3, .layers = 2, .cuda = true, .oom = true});
  TraceDb db(path);
  CheckResult c = check_trace(db);
  for (const Finding& f : c.problems) MESSAGE(f.what);
  CHECK(c.ok());
  CHECK(r.kernels > 0);
  CHECK(db.scalar("SELECT count(*) FROM threads WHERE role = 4") == 1);
  CHECK(db.scalar("SELECT count(*) FROM spans WHERE kind = 8") == r.kernels);
  CHECK(db.scalar("SELECT count(*) FROM kernels k JOIN spans s ON s.id = k.launch_span_id") == r.kernels);
  CHECK(db.scalar("SELECT count(*) FROM memory_events WHERE action = 4") == 1);
  CHECK(db.scalar("SELECT count(*) FROM oom_reports WHERE report LIKE 'CUDA out of memory%'") == 1);
  CHECK(r.oom_t_ns > 0);
}

TEST_CASE("synth --long-steps: every step's summary, detail only in the engine's windows, exact memory replays") {
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  SynthOptions o;
  o.long_steps = 5000;
  o.layers = 3;
  const SynthResult r = write_synthetic_trace(path, o);
  CHECK(r.steps == 5000);
  CHECK(r.spike_step == 3750);
  TraceDb db(path);
  const CheckResult c = check_trace(db);
  for (const Finding& f : c.problems) MESSAGE(f.what);
  CHECK(c.ok());
  std::string policy;
  db.each("SELECT value FROM meta WHERE key = 'detail'", [&](const Row& m) { policy = std::string(m.text(0)); });
  CHECK(policy == "first=500,every=1000,window=5,recorder=16,recorder_mb=64");

  // The summary: every step, every version 5 column; the time split adds up; a step_memory row per step.
  CHECK(db.scalar("SELECT count(*) FROM steps") == 5000);
  CHECK(db.scalar("SELECT count(*) FROM steps WHERE data_ns IS NULL OR forward_ns IS NULL OR backward_ns IS NULL OR "
                  "optimizer_ns IS NULL OR samples IS NULL OR tokens IS NULL OR loss IS NULL OR lr IS NULL") == 0);
  CHECK(db.scalar("SELECT count(*) FROM steps WHERE data_ns + forward_ns + backward_ns + optimizer_ns != "
                  "end_ns - start_ns OR forward_ns <= 0 OR backward_ns <= 0") == 0);
  CHECK(db.scalar("SELECT count(*) FROM steps WHERE grad_norm IS NULL") == 1);  // the NaN step's
  CHECK(db.scalar("SELECT step FROM steps WHERE grad_norm IS NULL") == r.nan_step);
  CHECK(db.scalar("SELECT count(*) FROM step_memory WHERE device = 0 AND allocated_peak >= allocated_end AND "
                  "reserved_peak >= allocated_peak AND parameter_peak > 0") == 5000);
  // The loss falls (the first hundred steps' mean is above the last hundred's), the spike stands out; lr warms up
  // over min(2000, steps / 20) steps and decays to about 0.
  const double early = real(db, "SELECT avg(loss) FROM steps WHERE step < 100"),
               late = real(db, "SELECT avg(loss) FROM steps WHERE step >= 4900");
  CHECK(early > 3 * late);
  CHECK(real(db, "SELECT loss FROM steps WHERE step = 3750") >
        10 * real(db, "SELECT loss FROM steps WHERE step = 3749"));
  CHECK(real(db, "SELECT lr FROM steps WHERE step = 0") < 0.01 * real(db, "SELECT lr FROM steps WHERE step = 249"));
  CHECK(real(db, "SELECT lr FROM steps WHERE step = 249") == doctest::Approx(3e-4));
  CHECK(real(db, "SELECT lr FROM steps WHERE step = 4999") < 1e-8);

  // The windows: first, periodic every 1000 (5 steps), 16 before the spike (anomaly), the last 16 (end).
  std::vector<std::vector<std::int64_t>> windows;
  db.each("SELECT first_step, last_step, reason, start_ns < end_ns FROM detail_windows ORDER BY first_step",
          [&](const Row& w) {
            windows.push_back({w.i64(0), w.i64(1), w.i64(2), w.i64(3)});
          });
  const std::vector<std::vector<std::int64_t>> expected = {{0, 499, 0, 1},     {1000, 1004, 1, 1}, {2000, 2004, 1, 1},
                                                           {3000, 3004, 1, 1}, {3735, 3750, 3, 1}, {4000, 4004, 1, 1},
                                                           {4984, 4999, 7, 1}};
  CHECK(windows == expected);
  CHECK(r.windows == 7);
  CHECK(r.detail_steps == 500 + 4 * 5 + 16 + 16);
  const gb::query::DetailWindows d = gb::query::detail_windows(db);
  CHECK_FALSE(d.all());
  // Detail only inside the windows; every window's step has its spans.
  std::int64_t outside = 0, detail_steps = 0;
  db.each("SELECT DISTINCT step FROM spans WHERE step IS NOT NULL", [&](const Row& s) {
    outside += d.has_detail(s.i64(0)) ? 0 : 1;
    ++detail_steps;
  });
  CHECK(outside == 0);
  CHECK(detail_steps == r.detail_steps);
  // grad_stats: every 10 steps, and every step of a window.
  std::int64_t stat_steps_bad = 0;
  db.each("SELECT DISTINCT step FROM grad_stats",
          [&](const Row& s) { stat_steps_bad += (s.i64(0) % 10 == 0 || d.has_detail(s.i64(0))) ? 0 : 1; });
  CHECK(stat_steps_bad == 0);
  CHECK(db.scalar("SELECT count(DISTINCT step) FROM grad_stats WHERE step % 10 = 0") == 500);
  // The anomalies at the spike: the loss spike, the NaN gradient, and the exploding norm a step before.
  CHECK(db.scalar("SELECT count(*) FROM anomalies WHERE kind = 4 AND severity = 1 AND step = 3750") == 1);
  CHECK(db.scalar("SELECT count(*) FROM anomalies WHERE kind = 1 AND severity = 2 AND step = 3750") == 1);
  CHECK(db.scalar("SELECT count(*) FROM anomalies WHERE kind = 2 AND step = 3749") == 1);

  // Memory: a resume row (and its live rows) at every window but the first; replayed in (t_ns, id) order, every
  // free finds its block and the running total is the row's `allocated` after every event.
  CHECK(db.scalar("SELECT count(*) FROM memory_events WHERE action = 7") == 6);
  CHECK(db.scalar("SELECT count(*) FROM memory_events WHERE action = 8") > 6);
  CHECK(db.scalar("SELECT count(*) FROM memory_events WHERE action = 9") >= 6);
  gb::query::MemoryReplay<> replay;
  std::int64_t lost_frees = 0, mismatches = 0, events = 0;
  db.each("SELECT action, addr, size, category, allocated FROM memory_events WHERE device = 0 ORDER BY t_ns, id",
          [&](const Row& e) {
            if (!replay.apply(gb::query::mem_action(e.i64(0)), e.i64(1), e.i64(2), gb::query::mem_category(e.i64(3))))
              ++lost_frees;
            const auto& b = replay.by_category();
            std::int64_t total = 0;
            for (std::int64_t x : b) total += x;
            // live rows are added one by one after their resume: compare at the other events
            if (e.i64(0) != 8 && e.i64(0) != 7 && total != e.i64(4)) ++mismatches;
            ++events;
          });
  CHECK(events == r.memory_events);
  CHECK(lost_frees == 0);
  CHECK(mismatches == 0);
}

TEST_CASE("synth --long-steps: a run shorter than its first window is one window, and the spike can be moved") {
  TempDir tmp;
  SynthOptions o;
  o.long_steps = 300;
  o.nan_step = 120;
  o.layers = 2;
  const SynthResult r = write_synthetic_trace(tmp.file("short.db"), o);
  TraceDb db(tmp.file("short.db"));
  CHECK(r.spike_step == 120);
  CHECK(db.scalar("SELECT count(*) FROM detail_windows") == 1);  // first: 0..299 holds the spike and the end
  CHECK(db.scalar("SELECT last_step FROM detail_windows") == 299);
  CHECK(db.scalar("SELECT count(*) FROM anomalies WHERE kind = 4 AND step = 120") == 1);
  CHECK(db.scalar("SELECT count(*) FROM memory_events WHERE action = 7") == 0);
}
