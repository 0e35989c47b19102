// tools/story.h — the story of a run, the first thing `glassbox report` prints: how it ended (closed cleanly or
// not, meta stopped_by, dropped events, out of memory with the report stored in the trace), where the first
// non-finite value appeared, the chains of linked alarms (a root cause and what followed from it, each link with its
// evidence), then the other alarms grouped by kind (traces/query/alarms.h).
//
// A healthy run (closed cleanly, stopped normally or by an unknown closer, no dropped events, no out-of-memory, no
// anomalies) gets one line: "healthy: closed cleanly, no anomalies, no out-of-memory". Otherwise:
//   story: <what went wrong, in a few words>
//     ended: ...                                  always; a trace that stopped on a full disk (meta stopped_by
//                                                 "disk full", disk_full "step N: <error>"): "the trace stopped at
//                                                 step N: the disk was full (<error>); the run went on untraced"
//     dropped events: N (...)                     when meta dropped_events > 0 (a trace without meta detail)
//     the collector fell behind: N detail events  a long run's trace (meta detail) with dropped_events > 0: what
//       were shed (spans A, ...); ...             meta shed_events.<kind> says, and that every summary arrived
//     ran out of memory at T (step N): ...        per oom_reports row (or memory_events oom row without one),
//       <the stored report, indented>             the first one in full; a leak across steps (kept_bytes more
//                                                 than half of allocated) is said in the first line ("ran out of
//                                                 memory at step N: X of Y live were allocated by earlier steps
//                                                 and kept: a leak, not this step's peak"), and the
//                                                 memory_growth alarm before it is named as what foretold it
//     first non-finite value: started in ...      with its op, shapes, dtypes, module, node, time and message; "its
//                                                 root cause: ..." when a chain links it to an earlier alarm
//     linked alarms (the root cause first, ...):  per chain (anomalies.cause_id, schema version 6), at most 5
//       root cause: <kind> (<severity>) on <param>, step N: <message>
//         -> <kind> (<severity>) in <module>, step N: <message>
//            because: <the evidence of the link>
//                                                 chains of 12 links: the root, then each consequence under its
//                                                 cause, 2 more spaces in per link deeper, with its evidence
//     alarms by kind / other alarms by kind: ...  one block per kind, of the anomalies in no chain
// Every part ends with a blank line after the last.
//
//   gb::query::TraceDb db("run.db");
//   gb::tools::write_story(db, std::cout);
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "traces/query/trace_db.h"
#include "traces/records.h"

namespace gb::tools {

using query::TraceDb;

// How meta stopped_by reads: "exit" and "session end" (and no value) are a normal end; "signal SIGINT" an interrupt;
// "uncaught exception: ..." and "std::terminate" a failure (instrument/session.cpp and collector.cpp write them);
// anything else is other, "disk full" among them (the trace closed early on a full disk; the program went on:
// is_disk_full).
enum class StopKind { normal, signal, failure, other };
bool is_disk_full(const std::optional<std::string>& stopped_by);
StopKind stop_kind(const std::optional<std::string>& stopped_by);

struct OutOfMemory {
  std::int64_t t_ns = 0;
  std::optional<int> device;                         // from the memory_events oom row nearest in time
  std::int64_t requested = 0;                        // bytes it tried to allocate
  std::optional<gb::trace::OomReportRecord> report;  // absent when only a memory_events oom row exists
  std::optional<std::int64_t> step;                  // the step running then (steps table, else the event's span)
  std::optional<std::int64_t> after_step;            // no such step: the last step that ended before it
  // A leak across steps: the report's kept_bytes are more than half its allocated bytes (traces/SCHEMA.md,
  // oom_reports; false for a version 1..5 file, whose columns are NULL).
  bool leak = false;
  // For a leak, the first memory_growth alarm raised before it (it foretold the OOM): its step and message.
  std::optional<std::int64_t> growth_step;
  std::string growth_message;
};

struct RunEnd {
  bool closed_cleanly = false;
  std::optional<std::string> stopped_by;
  std::optional<std::string> disk_full;  // meta disk_full: "step N: <the OS error>"
  std::int64_t dropped_events = 0;
  bool long_run = false;                                           // meta detail: the probes shed detail, not rows
  std::vector<std::pair<std::string, std::int64_t>> shed_by_kind;  // meta shed_events.<kind>
  std::vector<OutOfMemory> ooms;  // by time
};
RunEnd run_end(const TraceDb& db);

// How the trace ended, as the story's "ended: " line says it (closed_cleanly, stopped_by, disk_full): "closed
// cleanly, stopped by exit", "the trace stopped at step 41: the disk was full (...); the run went on untraced", ...
std::string ending_text(const RunEnd& e);

void write_story(const TraceDb& db, std::ostream& out);

}  // namespace gb::tools
