// tests/instrument/past_span_test.cpp — instrument/past_span.h: a span recorded after it happened lands in the
// trace at the times it was given (converted like any span's), as a root span of the calling thread, with its seq
// and step; nothing is recorded while no session records.
#include "instrument/past_span.h"

#include <doctest/doctest.h>

#include <thread>

#include "instrument/session.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

using namespace gb::trace;

TEST_CASE("a past span has the times, seq and step it was given, and no parent") {
  const SourceLocation* loc = location("all_reduce", SpanKind::collective);
  CHECK(record_past_span(loc, ticks(), ticks(), 0, -1) == 0);  // no session

  TempDir tmp;
  const std::string path = tmp.file("t.db");
  Id past = 0, reversed = 0, later = 0;
  std::int64_t measured_ns = 0;
  {
    Session s(path);
    REQUIRE(s.active());
    std::thread([&] {
      const std::int64_t t0 = ticks();
      const auto c0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      const std::int64_t t1 = ticks();
      measured_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0).count();
      {
        GB_TRACE_SPAN_AS(open, SpanKind::op, "open while it is recorded");
        past = record_past_span(loc, t0, t1, 7, 3);  // a root, although a span is open here
        later = open.id();
      }
      reversed = record_past_span(loc, t1, t0, 8, -1);  // an end before the start: an empty span at the start
    }).join();
  }
  REQUIRE(past != 0);
  CHECK(past == later + 1);  // numbered in the thread's sequence like any span (the open one began first)
  CHECK(span_thread(past) == span_thread(later));
  Reader r(path);
  std::optional<SpanRecord> p, q, o;
  for (const SpanRecord& s : r.all<SpanRecord>()) {
    if (s.id == past) p = s;
    if (s.id == reversed) q = s;
    if (s.id == later) o = s;
  }
  REQUIRE(p);
  REQUIRE(q);
  REQUIRE(o);
  CHECK(r.string(p->name_id) == "all_reduce");
  CHECK(p->kind == SpanKind::collective);
  CHECK(p->seq == 7);
  CHECK(p->step == 3);
  CHECK_FALSE(p->parent_id.has_value());
  CHECK_FALSE(p->module_id.has_value());
  // the duration is the one measured, on the trace's clock (its rate is measured against steady_clock)
  CHECK(p->end_ns - p->start_ns >= 3'000'000);
  CHECK(double(p->end_ns - p->start_ns) == doctest::Approx(double(measured_ns)).epsilon(0.05));
  CHECK(p->end_ns <= o->start_ns + 1000);  // it ended before the span that was open when it was recorded began
  CHECK(q->seq == 8);
  CHECK_FALSE(q->step.has_value());
  CHECK(q->start_ns == q->end_ns);
  CHECK(q->start_ns == p->end_ns);
}
