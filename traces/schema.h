// traces/schema.h — the SQLite schema of a glassbox trace, version kSchemaVersion (traces/SCHEMA.md documents it).
//
// The Writer creates the tables with create_tables_sql() and, when the trace closes, the reader's indexes with
// create_indexes_sql() (not on the hot path). The Reader checks that every table in required_tables() exists.
// `PRAGMA user_version` holds the schema version. Enum names are the lower_snake names of traces/records.h.
#pragma once

#include <span>
#include <string_view>

#include "traces/records.h"

namespace gb::trace {

// Bump when a table or column changes meaning or disappears, or an enum gains values an older reader would not
// know; the Reader refuses files with a newer version. 1: the first; 2: anomaly kinds 7..11 (nonfinite_loss,
// update_ratio, dead_relu, amp_scale_collapse, missing_zero_grad). A version 1 file reads as it is (kinds 0..6).
// 3: params.dtype 7..9. 4: span kind collective, thread role communication, threads.rank and anomalies.rank, the
// tables collectives, ranks and rank_steps (data-parallel jobs and `glassbox merge`). 5: long runs — the steps
// table's summary columns (time split, batch, gradient norm), the tables step_memory and detail_windows, and the
// memory_events actions resume, live and live_segment (detail that resumes after a gap).
constexpr int kSchemaVersion = 6;

const char* create_tables_sql();   // CREATE TABLE ... for every table, one statement per table
const char* create_indexes_sql();  // CREATE INDEX IF NOT EXISTS ... the Reader's queries use
std::span<const std::string_view> required_tables();  // every table of the schema, in SCHEMA.md order
// For a file of an older `version`: TEMP views and empty TEMP tables on a reader's connection that give it this
// version's tables and columns (threads and anomalies with a NULL rank; no collectives, ranks or rank_steps; steps
// without the summary columns, no step_memory or detail_windows), so every
// query reads every version. Empty for the current version. Run once per connection, before any query.
const char* compat_sql(int version);

std::string_view name(SpanKind k);
std::string_view name(ThreadRole r);
std::string_view name(MemAction a);
std::string_view name(MemCategory c);
std::string_view name(DType d);
std::string_view name(AnomalyKind k);
std::string_view name(Severity s);
std::string_view name(DetailReason r);

}  // namespace gb::trace
