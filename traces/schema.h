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
constexpr int kSchemaVersion = 3;

const char* create_tables_sql();   // CREATE TABLE ... for every table, one statement per table
const char* create_indexes_sql();  // CREATE INDEX IF NOT EXISTS ... the Reader's queries use
std::span<const std::string_view> required_tables();  // every table of the schema, in SCHEMA.md order

std::string_view name(SpanKind k);
std::string_view name(ThreadRole r);
std::string_view name(MemAction a);
std::string_view name(MemCategory c);
std::string_view name(DType d);
std::string_view name(AnomalyKind k);
std::string_view name(Severity s);

}  // namespace gb::trace
