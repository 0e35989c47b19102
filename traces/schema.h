// traces/schema.h — the SQLite schema of a glassbox trace, version kSchemaVersion (traces/SCHEMA.md documents it).
//
// Every table's columns are declared once, in traces/tables.h; tables() lists them, and the CREATE statements,
// required_tables() and the Reader's open-time check (every declared column of every table exists) come from it.
// The Writer creates the tables with create_tables_sql() and, when the trace closes, the reader's indexes with
// create_indexes_sql() (not on the hot path).
// `PRAGMA user_version` holds the schema version. Enum names are the lower_snake names of traces/records.h.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

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

// One column of a table, as traces/tables.h declares it: `name type constraint` in the CREATE statement.
struct ColumnInfo {
  std::string_view name;
  std::string_view type;        // INTEGER, TEXT or REAL
  std::string_view constraint;  // "PRIMARY KEY", "NOT NULL", "" (nullable) or "GENERATED ALWAYS AS (...) VIRTUAL"
  bool generated() const { return constraint.starts_with("GENERATED"); }  // computed when read, never written
};
struct TableInfo {
  std::string_view name;
  std::vector<ColumnInfo> columns;  // in the file's order
  // "a, b, c": the columns an INSERT writes (the generated ones left out), in order.
  std::string stored_columns() const;
  // The column called `column`, or nullptr.
  const ColumnInfo* find(std::string_view column) const;
};
std::span<const TableInfo> tables();  // every table of the schema, in the order the file creates them
// The table called `name`; a std::logic_error naming it when there is none (a caller's bug: a table tables.h lacks).
const TableInfo& table(std::string_view name);

const char* create_tables_sql();   // CREATE TABLE ... for every table, one statement per table
const char* create_indexes_sql();  // CREATE INDEX IF NOT EXISTS ... the Reader's queries use
std::span<const std::string_view> required_tables();  // every table's name, in tables() order
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
