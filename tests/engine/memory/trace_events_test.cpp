// tests/engine/memory/trace_events_test.cpp — memory in the trace (engine/memory/trace_events.cpp): a traced
// forward/backward writes memory_events whose running totals are the allocator's, with categories; meta rows say
// each device's total, context and capacity; an OOM writes an oom_reports row; `glassbox report` shows the peaks per
// category; with tracing off no observer is installed.
#include <doctest/doctest.h>

#include <sstream>

#include <glassbox/glassbox.h>

#include "instrument/session.h"
#include "traces/query/memory.h"
#include "tools/report.h"
#include "traces/query/trace_db.h"
#include "traces/temp_dir.h"

namespace mem = gb::memory;
namespace F = gb::nn::functional;

namespace {
std::int64_t count(const std::string& path, const std::string& where) {
  return sql_int(path, "SELECT COUNT(*) FROM memory_events WHERE " + where);
}
}  // namespace

TEST_CASE("a traced forward/backward: memory_events' running totals end at memory_stats, categories present") {
  TempDir tmp;
  const std::string path = tmp.file("mem.db");
  const gb::Device cpu(gb::kCPU);
  CHECK_FALSE(mem::has_event_observer());  // tracing off: nothing installed, an allocation pays one load
  int64_t allocated = 0, reserved = 0, peak = 0;
  {
    gb::trace::Session session(path);
    REQUIRE(session.active());
    {
      auto w1 = gb::randn({256, 128}, gb::requires_grad());
      CHECK(mem::has_event_observer());  // installed at session start (or, here, with the first allocator)
      auto w2 = gb::randn({10, 256}, gb::requires_grad());
      gb::Tensor x;
      {
        mem::CategoryGuard cat(mem::Category::input);
        x = gb::randn({64, 128});
      }
      GB_TRACE_SPAN_AS(step, gb::trace::SpanKind::step, "step");
      auto loss = F::linear(F::relu(F::linear(x, w1)), w2).sum();
      loss.backward();
      mem::empty_cache(cpu);  // an empty_cache row too
      peak = mem::memory_stats(cpu).allocated_bytes[mem::kAll].peak;
    }
    allocated = mem::memory_stats(cpu).allocated_bytes[mem::kAll].current;
    reserved = mem::memory_stats(cpu).reserved_bytes[mem::kAll].current;
  }
  CHECK_FALSE(mem::has_event_observer());  // removed when the session stopped
  const std::string last = "(SELECT MAX(id) FROM memory_events WHERE device = -1)";
  CHECK(sql_int(path, "SELECT allocated FROM memory_events WHERE id = " + last) == allocated);
  CHECK(sql_int(path, "SELECT reserved FROM memory_events WHERE id = " + last) == reserved);
  CHECK(sql_int(path, "SELECT MAX(allocated) FROM memory_events WHERE device = -1") == peak);
  for (int c : {5, 6, 7}) {  // temporary, input, autograd_detail: known when allocated
    CAPTURE(c);
    CHECK(count(path, "action = 0 AND category = " + std::to_string(c)) > 0);
  }
  for (int c : {1, 2, 3}) {  // parameter, gradient, activation: retagged once autograd learns the role
    CAPTURE(c);
    CHECK(count(path, "action = 6 AND category = " + std::to_string(c)) > 0);
  }
  CHECK(count(path, "action = 2") > 0);  // segment_alloc
  CHECK(count(path, "action = 5") == 1);  // empty_cache
  CHECK(count(path, "action = 0 AND span_id IS NOT NULL") > 0);  // allocations inside the step span name it
  CHECK(count(path, "action = 0") == count(path, "action = 1"));   // every block made in the run was freed
  CHECK(sql_int(path, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'device_total_bytes.cpu'") > 0);
  CHECK(sql_int(path, "SELECT COUNT(*) FROM meta WHERE key = 'context_bytes'") == 1);

  gb::query::TraceDb db(path);
  std::ostringstream report;
  gb::tools::write_memory_section(db, report);
  MESSAGE(report.str());
  for (const char* c : {"parameter", "gradient", "activation", "input", "autograd_detail"})
    CHECK(report.str().find(c) != std::string::npos);
  bool found = false;
  for (const auto& c : gb::query::memory_peaks(db).categories)
    if (c.device == gb::trace::kCpu && c.category == gb::trace::MemCategory::parameter) {
      found = true;
      CHECK(c.peak == 256 * 128 * 4 + 10 * 256 * 4);  // w1 and w2 (both multiples of 512 B)
    }
  CHECK(found);
}

TEST_CASE("a meta planning run traces as device -2 with its capacity in meta; an OOM writes its report") {
  TempDir tmp;
  const std::string path = tmp.file("plan.db");
  const gb::Device meta(gb::kMeta);
  mem::empty_cache(meta);
  std::string message;
  {
    gb::trace::Session session(path);
    mem::set_capacity(meta, 64 << 20);  // a 64 MiB "GPU"
    auto a = gb::empty({8 << 20}, gb::TensorOptions().device(gb::kMeta));  // 32 MiB
    try {
      auto b = gb::empty({10 << 20}, gb::TensorOptions().device(gb::kMeta));  // 40 MiB: 72 > 64
      FAIL("expected an OutOfMemoryError");
    } catch (const gb::OutOfMemoryError& e) {
      message = e.what();
    }
  }
  mem::set_capacity(meta, 0);
  mem::empty_cache(meta);
  CHECK(count(path, "device = -2 AND action = 0") >= 1);
  CHECK(count(path, "device = -2 AND action = 4") == 1);  // the oom event
  CHECK(sql_int(path, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'capacity_bytes.meta'") == (64 << 20));
  CHECK(sql_int(path, "SELECT COUNT(*) FROM oom_reports") == 1);
  CHECK(sql_int(path, "SELECT requested FROM oom_reports") == (40 << 20));
  CHECK(sql_int(path, "SELECT allocated FROM oom_reports") == (32 << 20));
  CHECK(sql_int(path, "SELECT capacity FROM oom_reports") == (64 << 20));
  CHECK(sql_int(path, "SELECT LENGTH(report) FROM oom_reports") == int64_t(message.size()));  // the full text
  gb::query::TraceDb db(path);
  std::ostringstream report;
  gb::tools::write_memory_section(db, report);
  CHECK(report.str().find("meta") != std::string::npos);
}
