// tests/viewer/async_test.cpp — the off-frame computations (memory columns, segment map, heatmap columns): a
// request returns at once while its job is pending and the settled answer equals the in-frame one; closing a model
// (its workers) interrupts a running query; the legend lists the CUDA kinds when the trace has them.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>

#include "tools/synth.h"
#include "traces/query/trace_db.h"
#include "traces/temp_dir.h"
#include "viewer/trace_model.h"
#include "viewer/worker.h"

using namespace gb::viewer;
using gb::trace::SpanKind;

namespace {

bool same(const MemoryColumn& a, const MemoryColumn& b) {
  return a.t_ns == b.t_ns && a.context == b.context && a.reserved == b.reserved && a.allocated == b.allocated &&
         a.by_category == b.by_category;
}

}  // namespace

TEST_CASE("memory_columns_async / segment_map_async: pending first, then equal to the in-frame answers") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2, .cuda = true, .oom = true});
  TraceModel m(path, {.background = false});
  REQUIRE(m.has_memory());
  const std::int64_t t0 = m.begin_ns(), t1 = m.end_ns() + 1;
  CHECK(m.memory_columns_async(t0, t1, 300) == nullptr);  // posted, not computed in the call
  CHECK(m.memory_pending());
  m.wait_queries();
  const std::vector<MemoryColumn>* got = m.memory_columns_async(t0, t1, 300);
  REQUIRE(got != nullptr);
  CHECK_FALSE(m.memory_pending());
  const std::vector<MemoryColumn> want = m.memory_columns(t0, t1, 300);
  REQUIRE(got->size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(same((*got)[i], want[i]));
  // A new window answers the previous one at once, until its own is in.
  const std::vector<MemoryColumn>* stale = m.memory_columns_async(t0, (t0 + t1) / 2, 50);
  REQUIRE(stale != nullptr);
  CHECK(stale->size() == 300);
  CHECK(m.memory_pending());
  m.wait_queries();
  CHECK(m.memory_columns_async(t0, (t0 + t1) / 2, 50)->size() == 50);

  for (int i = 1; i <= 5; ++i) {
    const std::int64_t t = t0 + (t1 - t0) * i / 6;
    const SegmentMap* s = m.segment_map_async(t);
    CHECK((s == nullptr || s->t_ns != t));  // never the answer for t before its job ran
    m.wait_queries();
    s = m.segment_map_async(t);
    REQUIRE(s != nullptr);
    const SegmentMap& ref = m.segment_map(t);
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

TEST_CASE("largest_live_async: pending first, then equal to largest_live") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2, .cuda = true});
  TraceModel m(path, {.background = false});
  REQUIRE(m.has_memory());
  for (int i = 1; i <= 4; ++i) {
    const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 5;
    const std::vector<LiveBlock>* first = m.largest_live_async(t, 20);
    CHECK((i == 1) == (first == nullptr));  // nothing yet, then the previous cursor's answer
    CHECK(m.memory_pending());
    m.wait_queries();
    const std::vector<LiveBlock>* got = m.largest_live_async(t, 20);
    REQUIRE(got != nullptr);
    CHECK_FALSE(m.memory_pending());
    const std::vector<LiveBlock> want = m.largest_live(t, 20);
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

TEST_CASE("grad_columns_async: pending first, then equal to grad_columns") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 40, .layers = 4, .ops_per_layer = 1});
  TraceModel m(path, {.background = false});
  REQUIRE(m.grad_heatmap().cols() > 7);
  CHECK(m.grad_columns_async(7) == nullptr);
  CHECK(m.gradients_pending());
  m.wait_queries();
  const GradColumns* got = m.grad_columns_async(7);
  REQUIRE(got != nullptr);
  const GradColumns& want = m.grad_columns(7);
  CHECK(got->columns == 7);
  REQUIRE(got->best.size() == want.best.size());
  CHECK(got->flag == want.flag);
  for (std::size_t i = 0; i < want.best.size(); ++i)
    CHECK(((std::isnan(got->best[i]) && std::isnan(want.best[i])) || got->best[i] == want.best[i]));
}

TEST_CASE("Worker: destroying it interrupts a running query instead of waiting for it") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 2, .layers = 2, .ops_per_layer = 1});
  std::atomic<bool> started{false}, finished{false}, threw{false};
  auto w = std::make_unique<Worker>(path);
  w->post([&](const gb::query::TraceDb* db) {
    started = true;
    if (!db) return;  // `finished` and `threw` stay false: the checks below fail
    try {  // ~10 s of SQLite work when not interrupted
      db->scalar("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50000000) SELECT count(*) FROM c");
    } catch (const std::exception&) {
      threw = true;
    }
    finished = true;
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well inside the query
  const auto a = std::chrono::steady_clock::now();
  w.reset();
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
  CHECK(ms < 200);
  CHECK(finished);
  CHECK(threw);  // SQLITE_INTERRUPT surfaces as an exception the job treats as cancelled
}

TEST_CASE("legend_kinds: the cuda kinds only when the trace has CUDA activity") {
  TempDir tmp;
  for (bool cuda : {false, true}) {
    CAPTURE(cuda);
    const std::string path = tmp.file(cuda ? "cuda.db" : "cpu.db");
    gb::tools::write_synthetic_trace(path, {.steps = 2, .layers = 2, .ops_per_layer = 1, .cuda = cuda});
    TraceModel m(path, {.background = false});
    const auto k = m.legend_kinds();
    CHECK(std::find(k.begin(), k.end(), SpanKind::op) != k.end());
    CHECK(std::find(k.begin(), k.end(), SpanKind::step) != k.end());
    for (SpanKind c : {SpanKind::cuda_kernel, SpanKind::cuda_memcpy, SpanKind::cuda_memset, SpanKind::cuda_api})
      CHECK((std::find(k.begin(), k.end(), c) != k.end()) == cuda);
  }
}
