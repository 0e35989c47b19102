// traces/query/diff.h — `glassbox diff A B`: two runs side by side (B compared with A).
//
// Step time: mean and median of each run, delta (B - A) and ratio (B / A). Ops (spans of one kind, per name): calls,
// CPU total and Self CPU in A and B, the delta of CPU total and its percentage of A's; names found in one run only
// are marked "only in A" / "only in B". Memory: peak allocated and peak reserved per device, with deltas.
//
//   TraceDiff d = diff_traces(TraceDb("a.db"), TraceDb("b.db"));
//   write_diff(d, 20, std::cout);
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "traces/query/op_table.h"
#include "traces/query/steps.h"
#include "traces/query/trace_db.h"

namespace gb::query {

struct OpDelta {
  std::string name;
  std::optional<OpStats> a, b;  // absent: the op did not run in that trace
  std::int64_t total_delta_ns() const { return (b ? b->total_ns : 0) - (a ? a->total_ns : 0); }
  std::int64_t self_delta_ns() const { return (b ? b->self_ns : 0) - (a ? a->self_ns : 0); }
};

struct MemoryDelta {
  int device = -1;
  std::optional<std::int64_t> allocated_a, allocated_b, reserved_a, reserved_b;  // peaks; absent: no events
};

struct TraceDiff {
  std::string path_a, path_b;
  Summary steps_a, steps_b;
  gb::trace::SpanKind kind = gb::trace::SpanKind::op;
  std::vector<OpDelta> ops;         // by |CPU total delta| descending, then name
  std::vector<MemoryDelta> memory;  // by device
};

TraceDiff diff_traces(const TraceDb& a, const TraceDb& b, gb::trace::SpanKind kind = gb::trace::SpanKind::op);

// limit: rows of the op table, 0 = all.
void write_diff(const TraceDiff& d, std::size_t limit, std::ostream& out);

}  // namespace gb::query
