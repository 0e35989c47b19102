// tests/instrument/probe_test.cpp — instrument/probe.h: what each probe puts in the trace, row by row.
#include "instrument/probe.h"

#include <doctest/doctest.h>

#include <thread>

#include "instrument/session.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

using namespace gb::trace;

namespace {
const SpanRecord* find(const std::vector<SpanRecord>& spans, const Reader& r, const std::string& name) {
  for (const auto& s : spans)
    if (r.string(s.name_id) == name) return &s;
  return nullptr;
}
}  // namespace

TEST_CASE("spans nest: ids are span_id(thread, n) in begin order, parents and names are right") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Id outer_id = 0, inner_id = 0, tid = -1;
  {
    Session s(path);
    REQUIRE(s.active());
    tid = thread_id();
    CHECK(current_span_id() == 0);
    {
      GB_TRACE_SPAN_AS(outer_span, SpanKind::step, "outer");
      outer_id = outer_span.id();
      CHECK(current_span_id() == outer_id);
      {
        GB_TRACE_SPAN_AS(inner_span, SpanKind::op, "inner");
        inner_id = inner_span.id();
        CHECK(current_span_id() == inner_id);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      { GB_TRACE_SCOPE("sibling"); }
      CHECK(current_span_id() == outer_id);
    }
    CHECK(current_span_id() == 0);
  }
  CHECK(span_thread(outer_id) == tid);
  CHECK(inner_id == outer_id + 1);
  Reader r(path);
  auto spans = r.all<SpanRecord>();
  REQUIRE(spans.size() == 3);
  const SpanRecord* outer = find(spans, r, "outer");
  const SpanRecord* inner = find(spans, r, "inner");
  const SpanRecord* sibling = find(spans, r, "sibling");
  REQUIRE(outer);
  REQUIRE(inner);
  REQUIRE(sibling);
  CHECK(outer->id == outer_id);
  CHECK(outer->kind == SpanKind::step);
  CHECK(outer->thread_id == tid);
  CHECK_FALSE(outer->parent_id.has_value());
  CHECK(inner->id == inner_id);
  CHECK(inner->kind == SpanKind::op);
  CHECK(inner->parent_id == outer_id);
  CHECK(sibling->kind == SpanKind::user);
  CHECK(sibling->parent_id == outer_id);
  CHECK(sibling->id == inner_id + 1);
  CHECK(inner->end_ns - inner->start_ns >= 2'000'000);
  CHECK(outer->start_ns <= inner->start_ns);
  CHECK(inner->end_ns <= sibling->start_ns);
  CHECK(sibling->end_ns <= outer->end_ns);
  auto threads = r.all<ThreadRecord>();
  REQUIRE(threads.size() >= 1);
  CHECK(threads[0].id == tid);
  CHECK(threads[0].name == "main");
  CHECK(threads[0].role == ThreadRole::main);
}

TEST_CASE("with tracing off a span records nothing and has no id") {
  CHECK_FALSE(enabled());
  GB_TRACE_SPAN_AS(off, SpanKind::op, "off");
  CHECK(off.id() == 0);
  CHECK(current_span_id() == 0);
}

TEST_CASE("step, module and seq fill their columns; instants and counters carry their context") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Id step_span = 0;
  {
    Session s(path);
    set_step(7);
    {
      GB_TRACE_SPAN_AS(span, SpanKind::step, "step");
      step_span = span.id();
      ModuleScope m(3);
      static const SourceLocation* mm = location("matmul", SpanKind::op);
      Span op(mm, 41);
      GB_TRACE_INSTANT("checkpoint");
      GB_TRACE_COUNTER("loss", 0.25);
    }
    set_step(-1);
    { GB_TRACE_SCOPE("after"); }
  }
  Reader r(path);
  auto spans = r.all<SpanRecord>();
  const SpanRecord* op = find(spans, r, "matmul");
  const SpanRecord* step = find(spans, r, "step");
  const SpanRecord* after = find(spans, r, "after");
  REQUIRE(op);
  REQUIRE(step);
  REQUIRE(after);
  CHECK(op->step == 7);
  CHECK(op->module_id == 3);
  CHECK(op->seq == 41);
  CHECK(op->parent_id == step_span);
  CHECK(step->step == 7);
  CHECK_FALSE(step->module_id.has_value());
  CHECK_FALSE(after->step.has_value());
  auto instants = r.all<InstantRecord>();
  REQUIRE(instants.size() == 1);
  CHECK(r.string(instants[0].name_id) == "checkpoint");
  CHECK(instants[0].span_id == op->id);
  CHECK(instants[0].step == 7);
  CHECK(instants[0].t_ns >= op->start_ns);
  CHECK(instants[0].t_ns <= op->end_ns);
  auto counters = r.all<CounterRecord>();
  REQUIRE(counters.size() == 1);
  CHECK(r.string(counters[0].name_id) == "loss");
  CHECK(counters[0].value == 0.25);
}

TEST_CASE("location() returns one SourceLocation per (name, kind) and intern() one id per text") {
  const SourceLocation* a = location("AddBackward0", SpanKind::backward_node);
  CHECK(a == location("AddBackward0", SpanKind::backward_node));
  CHECK(a != location("AddBackward0", SpanKind::op));
  CHECK(std::string(a->name) == "AddBackward0");
  CHECK(a->kind == SpanKind::backward_node);
  Id x = intern("some text");
  CHECK(x == intern("some text"));
  CHECK(x != intern("other text"));
}

TEST_CASE("typed records round trip through the ring and the cold queue, with the emitting context filled in") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Id module = 0, op_span = 0, name = intern("MulBackward0"), shapes = intern("[[2, 3]]");
  emit(ModuleRecord{1, "", "MLP", std::nullopt});  // before the session: kept for it
  {
    Session s(path);
    emit(ModuleRecord{2, "fc1", "Linear", 1});
    emit(ParamRecord{1, 2, "weight", "[3, 2]", 6, DType::float32});
    set_step(2);
    {
      ModuleScope m(2);
      module = 2;
      GB_TRACE_SPAN_AS(span, SpanKind::op, "mul");
      op_span = span.id();
      emit(MemoryEventRecord{.action = MemAction::alloc, .addr = 4096, .size = 512, .requested = 24,
                             .category = MemCategory::activation, .allocated = 512, .reserved = 2 << 20});
      emit(GraphNodeRecord{.id = 10, .step = 2, .seq = 5, .name_id = name, .saved_bytes = 48});
      emit(OpDetailsRecord{.input_shapes = shapes, .device = kCpu, .flops = 6});
      emit(AnomalyRecord{.kind = AnomalyKind::nonfinite_forward, .severity = Severity::error, .value = 1.0,
                         .message = "nan in mul"});
    }
    emit(GraphEdgeRecord{2, 10, 9, 0});
    emit(GradStatRecord{2, 1, 0.5, 0.25, 0, 0, 0.0, 1.0, 0.01});
    emit(KernelRecord{.span_id = 99, .device = 0, .correlation_id = 5, .grid = "1,1,1", .block = "32,1,1"});
    emit(OomReportRecord{.requested = 1 << 20, .report = "out of memory"});
    set_step(-1);
  }
  Reader r(path);
  auto modules = r.all<ModuleRecord>();
  REQUIRE(modules.size() == 2);
  CHECK(modules[0].type == "MLP");
  CHECK(modules[1].path == "fc1");
  CHECK(r.all<ParamRecord>().at(0).name == "weight");
  auto mem = r.all<MemoryEventRecord>();
  REQUIRE(mem.size() == 1);
  CHECK(mem[0].id == 1);
  CHECK(mem[0].size == 512);
  CHECK(mem[0].requested == 24);
  CHECK(mem[0].category == MemCategory::activation);
  CHECK(mem[0].span_id == op_span);
  CHECK(mem[0].module_id == module);
  CHECK(mem[0].t_ns > 0);
  CHECK(mem[0].reserved == 2 << 20);
  auto nodes = r.all<GraphNodeRecord>();
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0].id == 10);
  CHECK(nodes[0].forward_span_id == op_span);
  CHECK(nodes[0].module_id == module);
  CHECK(r.string(nodes[0].name_id) == "MulBackward0");
  CHECK(r.all<GraphEdgeRecord>() == std::vector<GraphEdgeRecord>{{2, 10, 9, 0}});
  CHECK(r.all<GradStatRecord>().at(0).update_norm == 0.01);
  auto ops = r.all<OpDetailsRecord>();
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].span_id == op_span);
  CHECK(r.string(*ops[0].input_shapes) == "[[2, 3]]");
  auto anomalies = r.all<AnomalyRecord>();
  REQUIRE(anomalies.size() == 1);
  CHECK(anomalies[0].step == 2);
  CHECK(anomalies[0].span_id == op_span);
  CHECK(anomalies[0].module_id == module);
  CHECK(anomalies[0].message == "nan in mul");
  CHECK(r.all<KernelRecord>().at(0).correlation_id == 5);
  CHECK(r.all<OomReportRecord>().at(0).report == "out of memory");
}

TEST_CASE("a thread's name and role go to the threads table; each thread gets its own id range") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Id worker_tid = -1;
  {
    Session s(path);
    std::thread t([&] {
      set_thread_name("worker 0", ThreadRole::dataloader_worker);
      worker_tid = thread_id();
      GB_TRACE_SPAN(SpanKind::dataloader, "fetch");
    });
    t.join();
    GB_TRACE_SCOPE("main work");
  }
  Reader r(path);
  bool found = false;
  for (const auto& t : r.all<ThreadRecord>())
    if (t.id == worker_tid) {
      found = true;
      CHECK(t.name == "worker 0");
      CHECK(t.role == ThreadRole::dataloader_worker);
    }
  CHECK(found);
  auto items = r.spans(worker_tid);
  REQUIRE(items.size() == 1);
  CHECK(items[0].span.kind == SpanKind::dataloader);
  CHECK(span_thread(items[0].span.id) == worker_tid);
}

TEST_CASE("StepScope writes a step span and a steps row with its times, loss and lr") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  {
    Session s(path);
    for (int i = 0; i < 3; ++i) {
      StepScope step(i);
      CHECK(current_step() == i);
      { GB_TRACE_SPAN(SpanKind::op, "work"); }
      step.set_loss(1.0 / (i + 1));
      step.set_lr(0.1);
    }
    CHECK(current_step() == -1);
  }
  Reader r(path);
  auto steps = r.all<StepRecord>();
  REQUIRE(steps.size() == 3);
  std::vector<SpanRecord> step_spans;
  for (const auto& s : r.all<SpanRecord>())
    if (s.kind == SpanKind::step) step_spans.push_back(s);
  REQUIRE(step_spans.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(steps[i].step == i);
    CHECK(steps[i].loss == doctest::Approx(1.0 / (i + 1)));
    CHECK(steps[i].lr == 0.1);
    CHECK_FALSE(steps[i].skipped);
    CHECK(step_spans[i].step == i);
    CHECK(steps[i].start_ns == step_spans[i].start_ns);
    CHECK(steps[i].end_ns == step_spans[i].end_ns);
    CHECK(steps[i].end_ns > steps[i].start_ns);
  }
}

TEST_CASE("set_meta writes a meta row while recording (the last value wins) and nothing when off") {
  TempDir tmp;
  std::string path = tmp.file("meta.db");
  set_meta("glassbox_test.off", "1");  // no session: dropped
  {
    Session s(path);
    set_meta("glassbox_test.key", "first");
    set_meta("glassbox_test.key", "42");
  }
  Reader r(path);
  CHECK(r.meta("glassbox_test.key") == std::optional<std::string>("42"));
  CHECK_FALSE(r.meta("glassbox_test.off"));
}

namespace {
int g_starts = 0, g_stops = 0;
bool g_recording_in_start = false;
}  // namespace

TEST_CASE("session hooks run at each start (at once when registered during one) and before each stop") {
  TempDir tmp;
  {
    Session s(tmp.file("a.db"));
    add_session_hook([] { ++g_starts; g_recording_in_start = enabled(); set_meta("hooked", "yes"); },
                     [] { ++g_stops; });
    CHECK(g_starts == 1);  // registered while recording: started at once
    CHECK(g_recording_in_start);
  }
  CHECK(g_stops == 1);
  {
    Session s(tmp.file("b.db"));
    CHECK(g_starts == 2);
  }
  CHECK(g_stops == 2);
  Reader r(tmp.file("b.db"));
  CHECK(r.meta("hooked") == std::optional<std::string>("yes"));  // a hook may write meta rows
}
