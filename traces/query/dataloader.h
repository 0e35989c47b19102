// traces/query/dataloader.h — how long training waited for data: the DataLoader stage spans (kind dataloader).
//
// Stages are spans of kind 5 named sample, fetch, collate, pin, transfer and wait (SCHEMA.md). The wait share is the
// sum of the `wait` spans inside steps (spans.step not NULL) over the total step time (steps.h: the steps table, else
// step spans); 0 when there is no step time. Waits outside any step (the first batch before the first step, an
// evaluation loader after the last) are not step time: they are counted apart, in `wait_outside_ns`. Spans with
// other names are counted in `other_ns`.
#pragma once

#include <cstdint>
#include <string>

#include "traces/query/trace_db.h"

namespace gb::query {

struct DataLoaderSummary {
  std::int64_t spans = 0;
  std::int64_t wait_outside_ns = 0;  // `wait` spans outside any step
  std::int64_t wait_ns = 0, sample_ns = 0, fetch_ns = 0, collate_ns = 0, pin_ns = 0, transfer_ns = 0, other_ns = 0;
  double step_total_ns = 0;
  double wait_share() const { return step_total_ns > 0 ? static_cast<double>(wait_ns) / step_total_ns : 0.0; }
};

DataLoaderSummary dataloader_summary(const TraceDb& db);

// Above this wait share the loop is data-bound: the accelerator (or the CPU's compute) idles waiting for batches.
inline constexpr double k_data_bound_share = 0.10;
// One sentence for the report: "data-bound: the training loop waited 43% of its step time for batches; ..." or
// "not data-bound: ...".
std::string data_bound_verdict(const DataLoaderSummary& d);

}  // namespace gb::query
