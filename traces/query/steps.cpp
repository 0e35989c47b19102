// traces/query/steps.cpp — step durations from the steps table (or step spans) and their order statistics.
#include "traces/query/steps.h"

#include <algorithm>
#include <cmath>

#include "traces/records.h"

namespace gb::query {

double quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = static_cast<std::int64_t>(v.size());
  for (double x : v) s.total += x;
  s.mean = s.total / static_cast<double>(v.size());
  s.median = quantile(v, 0.5);
  s.p90 = quantile(v, 0.9);
  s.min = v.front();
  s.max = v.back();
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / static_cast<double>(v.size()));
  return s;
}

StepTimes step_durations(const TraceDb& db) {
  StepTimes t;
  db.each("SELECT end_ns - start_ns FROM steps ORDER BY step",
          [&](const Row& r) { t.durations_ns.push_back(static_cast<double>(r.i64(0))); });
  if (!t.durations_ns.empty()) {
    t.source = "steps table";
    return t;
  }
  db.each("SELECT dur_ns FROM spans WHERE kind = ?1 ORDER BY id",
          {static_cast<std::int64_t>(gb::trace::SpanKind::step)},
          [&](const Row& r) { t.durations_ns.push_back(static_cast<double>(r.i64(0))); });
  if (!t.durations_ns.empty()) t.source = "step spans";
  return t;
}

}  // namespace gb::query
