// traces/query/run_summary.h — the summary of a whole run over ALL its steps (schema version 5's run summary:
// `steps`, `step_memory`, `detail_windows` and the detail meta keys), whatever detail the trace kept.
//
// Contract:
//   - run_summary(db) reads every step in one streamed pass over `steps` and one over `step_memory` (the step durations
//     and the gradient norms are the only per-step values held, for their order statistics): a 10^6-step trace
//     summarises in a fraction of a second (tests/traces/query/run_summary_test.cpp measures it).
//   - What a trace does not hold is unknown, never zero: an old (version 4) trace has NULL phase, batch and
//     grad_norm columns and no step_memory, so `phases`, the throughputs, `grad_norm` and `memory` stay empty.
//   - Phases: sums of data/forward/backward/optimizer over the steps that have all four, and those steps' total
//     duration (the shares' denominator). Throughput: sum of samples (tokens) / sum of the durations of the steps
//     that have samples (tokens). Loss: first, last, min (with its step), and the median of the last 10% of the
//     steps that have a loss (at least one). grad_norm: median and max (with its step) over the steps that have one.
//   - Memory (step_memory): per device the largest allocated_peak and reserved_peak with the first step that reached
//     each, and each category's largest peak.
//   - Detail: the windows (traces/query/detail.h: the one rule), counted by reason; the meta keys
//     `events_outside_detail`, `recorder_dumps`, `dropped_events`, `shed_events.<kind>`; and how the trace ended
//     (`closed_cleanly`, `stopped_by`, `disk_full`).
//   - A damaged file (NULLs where the schema has none, negative steps, huge numbers) gives odd numbers, never a
//     crash; SQLite failures throw gb::trace::Error.
//
//   gb::query::RunSummary s = gb::query::run_summary(db);
//   if (s.samples_per_s) printf("%.1f samples/s\n", *s.samples_per_s);
//   for (const std::string& line : gb::query::describe_windows(s.detail)) puts(line.c_str());
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/query/detail.h"
#include "traces/query/memory_replay.h"
#include "traces/query/steps.h"
#include "traces/query/trace_db.h"
#include "traces/records.h"

namespace gb::query {

// A value with the step it belongs to (the first step that reached it, for a maximum or minimum).
struct AtStep {
  double value = 0;
  std::int64_t step = 0;
};

struct Phases {            // nanoseconds as doubles: sums of a damaged file's huge values must not overflow
  std::int64_t steps = 0;  // steps that have all four columns
  double total_ns = 0;     // their durations, summed
  double data_ns = 0, forward_ns = 0, backward_ns = 0, optimizer_ns = 0;
};

struct LossSummary {
  std::int64_t steps = 0;  // steps with a loss
  AtStep first, last, min;
  double tail_median = 0;       // median of the last tail_steps losses
  std::int64_t tail_steps = 0;  // 10% of `steps`, at least 1
};

struct GradNormSummary {
  std::int64_t steps = 0;  // steps with a grad_norm
  double median = 0;
  AtStep max;
};

struct DeviceStepMemory {
  int device = gb::trace::kCpu;
  std::int64_t allocated_peak = 0, allocated_peak_step = 0;
  std::int64_t reserved_peak = 0, reserved_peak_step = 0;
  CategoryBytes category_peaks{};  // the largest peak of each category over the run (MemCategory order)
  std::int64_t steps = 0;          // step_memory rows of this device
};

// The detail policy of meta `detail`: "full", or "first=F,every=N,window=W,recorder=M,recorder_mb=B".
struct DetailPolicy {
  bool full = false;
  std::int64_t first = 0, every = 0, window = 0, recorder = 0, recorder_mb = 0, after = 0;
};
// The policy, or nothing when the text is neither form (each of the five keys once, in any order, and `after`
// at most once, each a non-negative decimal integer).
std::optional<DetailPolicy> parse_detail_policy(std::string_view text);

struct RunSummary {
  std::int64_t steps = 0;
  Summary step_time;  // of end_ns - start_ns (steps.h summarize)
  std::int64_t first_step = 0, last_step = 0;
  std::optional<Phases> phases;                       // none: no step has the four columns
  double samples = 0, tokens = 0;                     // summed over the steps that have them
  std::int64_t samples_steps = 0, tokens_steps = 0;   // steps that have them
  std::optional<double> samples_per_s, tokens_per_s;  // none: unknown
  std::optional<LossSummary> loss;
  std::optional<GradNormSummary> grad_norm;
  std::vector<DeviceStepMemory> memory;  // by device; empty: no step_memory rows (unknown)

  DetailWindows detail;  // detail.h's rule
  std::array<std::int64_t, gb::trace::kDetailReasonNames.size()> windows_by_reason{};
  std::int64_t steps_with_detail = 0;  // = steps when every step has its detail
  std::optional<std::int64_t> events_outside_detail, recorder_dumps, dropped_events;
  std::vector<std::pair<std::string, std::int64_t>> shed_by_kind;  // meta shed_events.<kind>, by kind name

  bool closed_cleanly = false;
  std::optional<std::string> stopped_by, disk_full;
};

RunSummary run_summary(const TraceDb& db);

// Meta shed_events.<kind> (the detail the probes shed, by kind: span, memory_event, ...), by kind name; values that
// are not integers are left out. run_summary() fills RunSummary::shed_by_kind with it.
std::vector<std::pair<std::string, std::int64_t>> shed_events(const TraceDb& db);

// The windows listed compactly, one string per reason present, in reason order:
//   "first: steps 0-499", "periodic: 59 windows of 5 steps every 1000", "anomaly: steps 41872-41890",
//   "end: steps 59984-59999" (several windows of a recorder reason: "anomaly: 3 windows, steps 10-19, 50-59 and
//   90-99"; more than 4: the first 3 and "and N more"). `every` comes from the policy, else from the windows' starts.
std::vector<std::string> describe_windows(const DetailWindows& d);

}  // namespace gb::query
