// tools/check.h — `glassbox check FILE`: the integrity of a trace.
//
// Opening the file (TraceDb) already refuses what is not a readable trace of a known schema version. check_trace()
// then looks for problems (the file contradicts SCHEMA.md; exit code 1):
//   spans with dur_ns < 0; span ids whose n (id & 0xffffffff) is 0 or whose thread (id >> 32) is not in threads;
//   parents on another thread; name ids not in strings (spans, instants, counters, graph_nodes); spans of one
//   thread whose start order contradicts their id order; frees with no live alloc at that (device, addr), replaying
//   alloc, free, resume and live per device in time order (memory_replay.h);
//   op_details, kernels (span and launcher), instants (thread) and graph_nodes naming missing spans or threads;
//   graph_edges naming missing graph_nodes; grad_stats naming missing params; params naming missing modules;
//   anomalies whose kind is not 0..11 (gb::trace::kAnomalyKinds; schema version 2 added 7..11, a version 1 file
//   holds 0..6) or whose severity is not 0..2; step_memory rows of a step with no steps row.
//   A long run's trace (meta detail, schema version 5): a `detail` meta that is neither `full` nor
//   `first=F,every=N,window=W,recorder=M,recorder_mb=B` (run_summary.h parse_detail_policy); detail_windows rows with
//   first_step > last_step, overlapping an earlier window, or of an unknown reason; detail outside the detail
//   windows (traces/query/detail.h's rule): spans, instants and op_details (by their span) of a step no window
//   holds, and memory_events whose t_ns is outside [start_ns, end_ns] of every window (a window's resume and live
//   rows sit at its start_ns). Rows with step NULL are not checked (they follow the last step's detail).
// and notes (worth knowing, exit code 0):
//   spans whose parent is not in the file and instants inside such spans (the program stopped inside them: killed,
//   interrupted, or an exception escaped); no meta closed_cleanly; meta dropped_events > 0 (a long run's: detail
//   the collector shed, with meta shed_events.<kind>); a trace that stopped on a full disk (stopped_by disk full).
// Each finding counts its rows and keeps up to 5 example ids (span ids, memory event ids, rowids for tables
// without an id).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "traces/query/trace_db.h"

namespace gb::tools {

using query::TraceDb;

struct Finding {
  std::string what;                    // "spans end before they start (dur_ns < 0)"
  std::int64_t count = 0;              // rows affected
  std::vector<std::int64_t> examples;  // at most 5 ids
};

struct CheckResult {
  std::vector<Finding> problems;
  std::vector<Finding> notes;
  std::int64_t spans = 0, memory_events = 0, threads = 0, kernels = 0, instants = 0, graph_nodes = 0, steps = 0;
  bool ok() const { return problems.empty(); }
};

CheckResult check_trace(const TraceDb& db);

// "problem: ..." and "note: ..." lines, one per finding, then "ok: N spans, ... no problems" or
// "N problems found in FILE".
void write_check(const CheckResult& result, const std::string& path, std::ostream& out);

}  // namespace gb::tools
