// tests/instrument/probe_disabled_test.cpp — instrument/probe.h compiled with GLASSBOX_NO_PROBES (what
// -DGLASSBOX_PROBES=OFF gives every file): the probes are empty and record nothing even while a session is on.
#define GLASSBOX_NO_PROBES 1
#include "instrument/probe.h"

#include <doctest/doctest.h>

#include <type_traits>

#include "instrument/session.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

using namespace gb::trace;

static_assert(std::is_empty_v<Span>, "a compiled-out span holds nothing");
static_assert(std::is_empty_v<ModuleScope>);

TEST_CASE("with GLASSBOX_NO_PROBES every probe compiles to nothing, even inside a session") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  {
    Session s(path);  // the session itself still works: it belongs to the instrument library, not to the probes
    REQUIRE(s.active());
    for (int i = 0; i < 10; ++i) {
      GB_TRACE_SPAN(SpanKind::op, "gone");
      GB_TRACE_SPAN_AS(named, SpanKind::op, "gone too");
      CHECK(named.id() == 0);
      GB_TRACE_SCOPE("user");
      GB_TRACE_INSTANT("instant");
      GB_TRACE_COUNTER("counter", i);
      StepScope step(i);
      step.set_loss(1.0);
      ModuleScope m(3);
      emit(MemoryEventRecord{.size = 512});
    }
  }
  Reader r(path);
  CHECK(r.all<SpanRecord>().empty());
  CHECK(r.all<InstantRecord>().empty());
  CHECK(r.all<CounterRecord>().empty());
  CHECK(r.all<StepRecord>().empty());
  CHECK(r.all<MemoryEventRecord>().empty());
  CHECK(r.meta("events_written") == "0");
}
