// tools/report.h — `glassbox report FILE`: what a run did, as text.
//
// Sections, in order, each ending with a blank line; a section without data says so in one line:
//   story      first, what went wrong (tools/story.h): how the run ended, out of memory, the first non-finite
//              value, the alarms by kind; a healthy run gets one line
//   run summary  a long run's trace only (meta detail, schema version 5): every step's summary
//              (traces/query/run_summary.h): step-time statistics, where the time went (data, forward, backward,
//              optimizer), throughput, loss, grad norm, memory peaks per device and category (step_memory), the
//              detail windows listed compactly, and what was shed by kind ("nothing shed: ..." when nothing was);
//              what a trace does not hold says "unknown", never 0
//   run        meta: command, host, started_at, glassbox_version, device_name, closed_cleanly, stopped_by,
//              dropped_events
//   steps      count, mean, median, p90, min, max, std of the step durations (traces/query/steps.h)
//   ranks      a merged trace (`glassbox merge`): per rank its steps, collectives, waiting for the others, time
//              blocked in wait, all-reduce overlap with backward; the straggler (traces/query/ranks.h). One rank's
//              own trace: how to merge; a single process: nothing
//   (a long run's trace: one line, "detail: the sections below ... cover only the N steps with detail, of M")
//   ops        PyTorch's key_averages table of the spans of one kind (traces/query/op_table.h), sorted, limited
//   memory     peaks per device (context, reserved, allocated) and per category (traces/query/memory.h)
//   data-loader  the wait share of step time and the stage totals (traces/query/dataloader.h)
//   anomalies  time, step, kind, severity, message (at most `limit` rows, 0 = all)
//
//   TraceDb db("run.db");
//   write_report(db, ReportOptions{.sort = OpSort::cpu_total, .limit = 10}, std::cout);
#pragma once

#include <cstddef>
#include <ostream>

#include "traces/query/op_table.h"
#include "traces/query/trace_db.h"

namespace gb::tools {

using query::OpSort;
using query::TraceDb;

struct ReportOptions {
  OpSort sort = OpSort::self_cpu;
  std::size_t limit = 20;  // rows of the op and anomaly tables; 0 = all
  gb::trace::SpanKind kind = gb::trace::SpanKind::op;
};

void write_report(const TraceDb& db, const ReportOptions& options, std::ostream& out);

// The sections on their own (write_report calls them in order, after write_story of tools/story.h).
void write_run_summary_section(const TraceDb& db, std::ostream& out);  // nothing without meta detail
void write_run_section(const TraceDb& db, std::ostream& out);
void write_steps_section(const TraceDb& db, std::ostream& out);
void write_ranks_section(const TraceDb& db, std::ostream& out);
void write_ops_section(const TraceDb& db, const ReportOptions& options, std::ostream& out);
void write_memory_section(const TraceDb& db, std::ostream& out);
void write_dataloader_section(const TraceDb& db, std::ostream& out);
void write_anomalies_section(const TraceDb& db, std::size_t limit, std::ostream& out);

}  // namespace gb::tools
