// instrument/detail.h — which steps of a traced run keep their full detail (traces/SCHEMA.md, detail_windows).
//
// Every step of a trace has its summary (steps, step_memory, anomalies). Its detail — spans, memory events,
// op_details, instants, counters — is kept where it matters, torch.profiler's schedule with defaults that need no
// code change:
//   - the first `first` steps in full (short runs, every sample and test: all of it, as before);
//   - then a window of `window` steps every `every` steps (steps k*every .. k*every + window - 1);
//   - a flight recorder: the last `recorder` steps' detail (at most `recorder_mb` MiB) is kept in memory and written
//     when an anomaly fires (the first of each kind of warning severity; the first 8 errors: a run that warns again
//     and again keeps its size), at an out-of-memory error, an uncaught exception, SIGINT/SIGTERM and at the end of
//     the run; after an anomaly or an OOM, `after` more steps in full.
// GLASSBOX_DETAIL sets it for GLASSBOX_TRACE (and any Session whose options leave `detail` unset): `full` (every
// step), `summary` (no windows: the summary and the recorder only), or keys to change from the defaults, e.g.
// GLASSBOX_DETAIL=first=100,every=500,window=3,recorder=32,recorder_mb=128,after=2. Parse errors throw
// gb::trace::Error naming the key and the accepted forms.
//
//   gb::trace::SessionOptions o;
//   o.detail = gb::trace::DetailPolicy::full();  // a test that asserts the detail of step 700
//   gb::trace::Session s("run.db", o);
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace gb::trace {

struct DetailPolicy {
  std::int64_t first = 500;        // steps 0 .. first-1 in full
  std::int64_t every = 1000;       // then a window every `every` steps (0: none)
  std::int64_t window = 5;         // of this many steps
  std::int64_t recorder = 16;      // the flight recorder keeps the last this many steps (0: off)
  std::int64_t recorder_mb = 64;   // in at most this many MiB
  std::int64_t after = 2;          // steps in full after the recorder was written for an anomaly

  static DetailPolicy full() {
    DetailPolicy p;
    p.first = std::numeric_limits<std::int64_t>::max();
    return p;
  }
  static DetailPolicy summary() {
    DetailPolicy p;
    p.first = p.every = 0;
    return p;
  }
  bool is_full() const { return first == std::numeric_limits<std::int64_t>::max(); }
  // Whether the policy keeps step `step` in full (the recorder's steps aside).
  bool due(std::int64_t step) const {
    if (step < first) return true;
    return every > 0 && window > 0 && step % every < window;
  }
  // The first and last step of the policy window holding `step` (due(step) must be true).
  std::int64_t window_first(std::int64_t step) const { return step < first ? 0 : step - step % every; }
  std::int64_t window_last(std::int64_t step) const {
    return step < first ? first - 1 : step - step % every + window - 1;
  }
  // "full", or "first=F,every=N,window=W,recorder=M,recorder_mb=B,after=A" (meta `detail`).
  std::string text() const;
  // GLASSBOX_DETAIL's forms on top of `base`; throws gb::trace::Error naming what is wrong.
  static DetailPolicy parse(std::string_view text, const DetailPolicy& base);
  static DetailPolicy parse(std::string_view text);
};

// The policy of the session that records now (the defaults when none does). The engine's monitor asks it which
// steps get their grad_stats rows and graphs.
DetailPolicy active_detail();

}  // namespace gb::trace
