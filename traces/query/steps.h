// traces/query/steps.h — step-time statistics: the durations of a run's training steps and their summary.
//
// step_durations() reads the `steps` table (end_ns - start_ns, by step); a trace whose steps table is empty but has
// spans of kind step (6) uses those (by id). summarize() gives count, mean, median, p90, min, max and the population
// standard deviation; median and p90 interpolate linearly between the two nearest ranks (numpy's default), so the
// median of an even count is the mean of the middle two.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/query/trace_db.h"

namespace gb::query {

struct Summary {
  std::int64_t count = 0;
  double mean = 0, median = 0, p90 = 0, min = 0, max = 0, std = 0;  // all 0 when count == 0
  double total = 0;
};

Summary summarize(std::vector<double> values);
double quantile(const std::vector<double>& sorted, double q);  // q in [0, 1]; sorted ascending, not empty

struct StepTimes {
  std::vector<double> durations_ns;
  std::string source;  // "steps table", "step spans", or "" when the trace has neither
};
StepTimes step_durations(const TraceDb& db);

}  // namespace gb::query
