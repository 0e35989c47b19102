// tests/tools/long_run.h — a long run's trace (schema version 5: the run summary of every step, detail in windows),
// written step by step with gb::trace::Writer, for the run summary, report, check and watch tests.
//
// Step s runs [s * step_ns, (s + 1) * step_ns) with step_ns = 10 ms by default: data 1 ms, forward 3 ms, backward
// 4 ms, optimizer 2 ms; samples 32 (tokens 512 when with_tokens); loss 4 / (1 + s); grad_norm 1 + (s % 4) (step 13:
// 50, a spike). step_memory per step: cuda:0 allocated_peak 1000 + 10 s (reserved 8192, parameter 1000, activation
// 10 s, gradient 500 at step 7) and the cpu allocated_peak 256 (input 256).
// Meta: command, detail (the policy), pid (this process), events_outside_detail, recorder_dumps, dropped_events 0.
// A step inside a window also writes, on thread 1 (main): its step span and a `matmul` op span with op_details;
// memory events on cuda:0: at a window's start a resume row and a live row for the parameter (0x1000, 1000 B; the
// first window allocates it instead), then per step an activation alloc (0x2000, 500 B) 1 ms in and its free 8 ms
// in. A window's row is written when its last step is. Anomalies: a loss_spike warning at each step of `anomalies`.
#pragma once

#include <unistd.h>
#include <cstdint>
#include <string>
#include <vector>

#include "traces/records.h"
#include "traces/writer.h"

namespace long_run {

using namespace gb::trace;

constexpr std::int64_t kMs = 1'000'000;

struct Window {
  std::int64_t first = 0, last = 0;
  DetailReason reason = DetailReason::first;
};

struct Options {
  std::int64_t steps = 60;
  std::int64_t step_ns = 10 * kMs;
  std::string policy = "first=5,every=20,window=2,recorder=3,recorder_mb=8";
  std::vector<Window> windows = {{0, 4, DetailReason::first},
                                 {20, 21, DetailReason::periodic},
                                 {40, 41, DetailReason::periodic},
                                 {57, 59, DetailReason::end}};
  std::vector<std::int64_t> anomalies = {13};
  bool with_tokens = false;
};

inline double loss_at(std::int64_t s) { return 4.0 / (1.0 + static_cast<double>(s)); }
inline double grad_norm_at(std::int64_t s) { return s == 13 ? 50.0 : 1.0 + static_cast<double>(s % 4); }

// A run being written: add steps in order, then finish.
class Run {
 public:
  Run(const std::string& path, Options o) : w_(path), o_(std::move(o)) {
    w_.set_meta("command", "./train_long --steps " + std::to_string(o_.steps));
    if (!o_.policy.empty()) w_.set_meta("detail", o_.policy);
    w_.set_meta("pid", std::to_string(::getpid()));
    w_.set_meta("dropped_events", "0");
    w_.add(ThreadRecord{1, 100, "main", ThreadRole::main, std::nullopt});
    w_.add(ModuleRecord{1, "", "MLP", std::nullopt});
  }

  Writer& writer() { return w_; }
  const Options& options() const { return o_; }

  void step(std::int64_t s) {
    const std::int64_t t0 = s * o_.step_ns;
    StepRecord r;
    r.step = s;
    r.start_ns = t0;
    r.end_ns = t0 + o_.step_ns;
    r.loss = loss_at(s);
    r.lr = 0.1;
    r.data_ns = o_.step_ns / 10;
    r.forward_ns = 3 * o_.step_ns / 10;
    r.backward_ns = 4 * o_.step_ns / 10;
    r.optimizer_ns = 2 * o_.step_ns / 10;
    r.samples = 32;
    if (o_.with_tokens) r.tokens = 512;
    r.grad_norm = grad_norm_at(s);
    w_.add(r);
    StepMemoryRecord m;
    m.step = s;
    m.device = 0;
    m.allocated_peak = 1000 + 10 * s;
    m.reserved_peak = 8192;
    m.allocated_end = 1000;
    m.reserved_end = 8192;
    m.parameter_peak = 1000;
    m.activation_peak = 10 * s;
    m.gradient_peak = s == 7 ? 500 : 0;
    w_.add(m);
    StepMemoryRecord c;
    c.step = s;
    c.device = kCpu;
    c.allocated_peak = c.reserved_peak = c.allocated_end = c.reserved_end = c.input_peak = 256;
    w_.add(c);
    for (const Window& win : o_.windows)
      if (s >= win.first && s <= win.last) detail(s, win);
    for (std::int64_t a : o_.anomalies)
      if (a == s) anomaly(s, "loss " + std::to_string(loss_at(s)) + " is 3.2x its running median");
  }

  void anomaly(std::int64_t s, const std::string& message) {
    w_.add(AnomalyRecord{++anomalies_, s * o_.step_ns + o_.step_ns / 2, s, AnomalyKind::loss_spike, Severity::warning,
                         std::nullopt, std::nullopt, std::nullopt, std::nullopt, 9.5, message, std::nullopt});
  }

  void finish(const char* stopped_by = "exit") {
    w_.set_meta("events_outside_detail", "123456");
    w_.set_meta("recorder_dumps", "1");
    if (stopped_by) w_.set_meta("stopped_by", stopped_by);
    w_.close();
  }

 private:
  void detail(std::int64_t s, const Window& win) {
    const std::int64_t t0 = s * o_.step_ns;
    if (s == win.first) {
      if (win.first == 0) {
        mem(t0, MemAction::alloc, 0x1000, 1000, MemCategory::parameter, 1000);
      } else {
        mem(t0, MemAction::resume, 0, 0, MemCategory::unknown, 1000);
        mem(t0, MemAction::live, 0x1000, 1000, MemCategory::parameter, 1000);
      }
    }
    const Id step_span = span(SpanKind::step, "step", t0, o_.step_ns, s);
    const Id mm = span(SpanKind::op, "matmul", t0 + 2 * kMs, 3000, s);
    (void)step_span;
    w_.add(OpDetailsRecord{mm, w_.intern("[[4, 4], [4, 4]]"), w_.intern("float32,float32"), 0, 128, 192});
    mem(t0 + o_.step_ns / 10, MemAction::alloc, 0x2000, 500, MemCategory::activation, 1500);
    mem(t0 + 8 * o_.step_ns / 10, MemAction::free, 0x2000, 500, MemCategory::activation, 1000);
    if (s == win.last) {
      DetailWindowRecord d;
      d.id = ++windows_;
      d.first_step = win.first;
      d.last_step = win.last;
      d.start_ns = win.first * o_.step_ns;
      d.end_ns = (win.last + 1) * o_.step_ns;
      d.reason = win.reason;
      w_.add(d);
    }
  }

  Id span(SpanKind kind, const char* name, std::int64_t start, std::int64_t dur, std::int64_t step) {
    // spans are written when they end: the op (inner) before the step span would be the engine's order; ids still
    // follow start order, which is what the schema asks
    SpanRecord r;
    r.id = span_id(1, ++spans_);
    r.kind = kind;
    r.name_id = w_.intern(name);
    r.thread_id = 1;
    r.start_ns = start;
    r.end_ns = start + dur;
    r.step = step;
    w_.add(r);
    return r.id;
  }

  void mem(std::int64_t t, MemAction a, std::int64_t addr, std::int64_t size, MemCategory c, std::int64_t allocated) {
    MemoryEventRecord e;
    e.id = ++memory_events_;
    e.t_ns = t;
    e.action = a;
    e.device = 0;
    e.addr = addr;
    e.size = size;
    e.requested = size;
    e.category = c;
    e.allocated = allocated;
    e.reserved = 8192;
    w_.add(e);
  }

  Writer w_;
  Options o_;
  Id spans_ = 0, memory_events_ = 0, windows_ = 0, anomalies_ = 0;
};

// The whole run, closed.
inline void write(const std::string& path, const Options& o = {}) {
  Run r(path, o);
  for (std::int64_t s = 0; s < o.steps; ++s) r.step(s);
  r.finish();
}

// 42 steps whose trace stopped on a full disk at step 41, with 15 detail events shed (10 spans, 5 memory events).
inline void write_stopped_on_full_disk(const std::string& path) {
  Run r(path, {.steps = 42, .anomalies = {}});
  for (std::int64_t s = 0; s < 42; ++s) r.step(s);
  r.writer().set_meta("dropped_events", "15");
  r.writer().set_meta("shed_events.span", "10");
  r.writer().set_meta("shed_events.memory_event", "5");
  r.writer().set_meta("disk_full", "step 41: No space left on device");
  r.finish("disk full");
}

}  // namespace long_run
