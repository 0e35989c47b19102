// tests/tools/synth_test.cpp — the synthetic trace generator: a file `glassbox check` accepts, the span-id layout,
// the requested size, memory totals that replay, and the planted NaN.
#include <doctest/doctest.h>

#include <map>

#include "tools/check.h"
#include "tools/synth.h"
#include "traces/query/trace_db.h"
#include "traces/temp_dir.h"

using namespace gb::tools;
using namespace gb::query;

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
