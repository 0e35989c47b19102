// traces/query/detail.h — which steps of a trace have their detail (schema version 5, traces/SCHEMA.md
// detail_windows): the one rule the command line and the viewer share.
//
// Contract:
//   - A trace with meta `detail` (a long run's: version 5) has detail exactly in the steps of its detail_windows
//     rows; every other step has its summary only. A trace without it (version 4 and older, or written by another
//     tool) has the detail of every step: all() is true and windows() is empty.
//   - Windows come sorted by first_step; has_detail() is a binary search; nearest() names the closest steps with
//     detail before and after a step (none when there is no such step).
//
//   gb::query::DetailWindows d = gb::query::detail_windows(db);
//   if (!d.has_detail(step)) { auto n = d.nearest(step); ... n.before, n.after ... }
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/query/trace_db.h"

namespace gb::query {

struct DetailWindows {
  bool every_step = true;                            // no meta `detail`: the trace has the detail of every step
  std::string policy;                                // meta `detail`, e.g. "first=500,every=1000,window=5,..."
  std::vector<gb::trace::DetailWindowRecord> windows;  // sorted by first_step

  bool all() const { return every_step; }
  bool has_detail(std::int64_t step) const;
  // The window holding step, or nullptr.
  const gb::trace::DetailWindowRecord* window_of(std::int64_t step) const;
  struct Nearest {
    std::optional<std::int64_t> before, after;  // the last step with detail before `step`, the first after it
  };
  Nearest nearest(std::int64_t step) const;
  std::int64_t steps_with_detail() const;  // the steps the windows hold (0 when every_step)
};

DetailWindows detail_windows(const TraceDb& db);

}  // namespace gb::query
