// tools/export_chrome.h — `glassbox export FILE --chrome OUT.json[.gz]`: Chrome Trace Event JSON for Perfetto
// (ui.perfetto.dev) and chrome://tracing.
//
// The file is {"traceEvents": [...], "displayTimeUnit": "ns", "metadata": {every meta row}}. Events, in order:
//   M  process_name (pid 1, "glassbox: <command>"); thread_name and thread_sort_index for each threads row
//      A merged data-parallel trace (`glassbox merge`): one process per rank, pid = rank + 1, named
//      "glassbox rank R (host): <command>"; each thread, span, instant and anomaly goes to its rank's pid
//   X  one per span: ts and dur in µs with 3 decimals (exact ns), pid 1, tid = thread_id, name, cat = kind name
//      (op, module, ...), args {id, parent (when any), step, seq, module (the module path), when not NULL}
//   C  one per counters row: name = counter name, args {value} (null when not finite)
//   i  one per instants row, thread-scoped ("s":"t"), args {span, step when not NULL}
//   i  one per anomaly, global ("s":"g"), name = anomaly kind, args {message, severity, step, value}
// Rows are streamed from SQLite with one prepared statement per table and written as they come: memory stays
// constant whatever the trace size. The output goes through OutputFile: a .gz path is gzip-compressed, and the
// file appears only when complete.
#pragma once

#include <cstdint>
#include <string>

#include "traces/query/trace_db.h"

namespace gb::tools {

using query::TraceDb;

struct ExportCounts {
  std::int64_t threads = 0, spans = 0, counters = 0, instants = 0, anomalies = 0;
  std::size_t bytes = 0;  // uncompressed JSON bytes
};

// gzip: compress; by default when out_path ends with ".gz".
ExportCounts export_chrome(const TraceDb& db, const std::string& out_path);
ExportCounts export_chrome(const TraceDb& db, const std::string& out_path, bool gzip);

}  // namespace gb::tools
