// traces/schema.cpp — the CREATE statements and enum names. Keep in step with traces/records.h,
// traces/codec.h (column order) and traces/SCHEMA.md.
#include "traces/schema.h"

#include <array>
#include <string>

namespace gb::trace {

const char* create_tables_sql() {
  return R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE strings (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE threads (id INTEGER PRIMARY KEY, os_tid INTEGER NOT NULL, name TEXT NOT NULL, role INTEGER NOT NULL,
  rank INTEGER);
CREATE TABLE spans (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, name_id INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL, step INTEGER, parent_delta INTEGER, seq INTEGER,
  module_id INTEGER,
  thread_id INTEGER GENERATED ALWAYS AS (id >> 32) VIRTUAL,
  end_ns INTEGER GENERATED ALWAYS AS (start_ns + dur_ns) VIRTUAL,
  parent_id INTEGER GENERATED ALWAYS AS (id - parent_delta) VIRTUAL);
CREATE TABLE instants (id INTEGER PRIMARY KEY, t_ns INTEGER NOT NULL, name_id INTEGER NOT NULL,
  thread_id INTEGER NOT NULL, span_id INTEGER, step INTEGER);
CREATE TABLE op_details (span_id INTEGER PRIMARY KEY, input_shapes INTEGER, dtypes INTEGER,
  device INTEGER NOT NULL, flops INTEGER, bytes INTEGER);
CREATE TABLE modules (id INTEGER PRIMARY KEY, path TEXT NOT NULL, type TEXT NOT NULL, parent_id INTEGER);
CREATE TABLE params (id INTEGER PRIMARY KEY, module_id INTEGER NOT NULL, name TEXT NOT NULL, shape TEXT NOT NULL,
  numel INTEGER NOT NULL, dtype INTEGER NOT NULL);
CREATE TABLE steps (step INTEGER PRIMARY KEY, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, loss REAL,
  lr REAL, grad_scale REAL, skipped INTEGER NOT NULL, data_ns INTEGER, forward_ns INTEGER, backward_ns INTEGER,
  optimizer_ns INTEGER, samples INTEGER, tokens INTEGER, grad_norm REAL);
CREATE TABLE graph_nodes (id INTEGER PRIMARY KEY, step INTEGER NOT NULL, seq INTEGER NOT NULL,
  name_id INTEGER NOT NULL, forward_span_id INTEGER, module_id INTEGER, saved_bytes INTEGER NOT NULL);
CREATE TABLE graph_edges (step INTEGER NOT NULL, src_node_id INTEGER NOT NULL, dst_node_id INTEGER NOT NULL,
  input_nr INTEGER NOT NULL);
CREATE TABLE memory_events (id INTEGER PRIMARY KEY, t_ns INTEGER NOT NULL, action INTEGER NOT NULL,
  device INTEGER NOT NULL, addr INTEGER NOT NULL, size INTEGER NOT NULL, requested INTEGER NOT NULL,
  segment_id INTEGER, stream INTEGER NOT NULL, category INTEGER NOT NULL, span_id INTEGER, module_id INTEGER,
  allocated INTEGER NOT NULL, reserved INTEGER NOT NULL);
CREATE TABLE oom_reports (id INTEGER PRIMARY KEY, t_ns INTEGER NOT NULL, requested INTEGER NOT NULL,
  capacity INTEGER NOT NULL, free INTEGER NOT NULL, allocated INTEGER NOT NULL, reserved INTEGER NOT NULL,
  largest_free_block INTEGER NOT NULL, report TEXT NOT NULL, step INTEGER, kept_bytes INTEGER);
CREATE TABLE grad_stats (step INTEGER NOT NULL, param_id INTEGER NOT NULL, norm REAL, max_abs REAL,
  nan_count INTEGER NOT NULL, inf_count INTEGER NOT NULL, zero_frac REAL, param_norm REAL, update_norm REAL);
CREATE TABLE anomalies (id INTEGER PRIMARY KEY, t_ns INTEGER NOT NULL, step INTEGER, kind INTEGER NOT NULL,
  severity INTEGER NOT NULL, span_id INTEGER, node_id INTEGER, module_id INTEGER, param_id INTEGER, value REAL,
  message TEXT NOT NULL, rank INTEGER, cause_id INTEGER, cause TEXT);
CREATE TABLE counters (t_ns INTEGER NOT NULL, name_id INTEGER NOT NULL, value REAL);
CREATE TABLE kernels (span_id INTEGER PRIMARY KEY, device INTEGER NOT NULL, stream INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL, launch_span_id INTEGER, grid TEXT NOT NULL, block TEXT NOT NULL, registers INTEGER NOT NULL,
  shared_mem INTEGER NOT NULL);
CREATE TABLE collectives (span_id INTEGER PRIMARY KEY, bytes INTEGER NOT NULL, dtype INTEGER NOT NULL,
  reduce_op INTEGER, bucket INTEGER, peers INTEGER NOT NULL, queued_ns INTEGER NOT NULL);
CREATE TABLE ranks (rank INTEGER PRIMARY KEY, source TEXT NOT NULL, host TEXT NOT NULL, offset_ns INTEGER NOT NULL,
  scale REAL NOT NULL, aligned_by TEXT NOT NULL);
CREATE TABLE rank_steps (rank INTEGER NOT NULL, step INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL, loss REAL, skipped INTEGER NOT NULL, PRIMARY KEY (rank, step));
CREATE TABLE step_memory (step INTEGER NOT NULL, device INTEGER NOT NULL, allocated_peak INTEGER NOT NULL,
  reserved_peak INTEGER NOT NULL, allocated_end INTEGER NOT NULL, reserved_end INTEGER NOT NULL,
  unknown_peak INTEGER NOT NULL, parameter_peak INTEGER NOT NULL, gradient_peak INTEGER NOT NULL,
  activation_peak INTEGER NOT NULL, optimizer_state_peak INTEGER NOT NULL, temporary_peak INTEGER NOT NULL,
  input_peak INTEGER NOT NULL, autograd_detail_peak INTEGER NOT NULL);
CREATE TABLE detail_windows (id INTEGER PRIMARY KEY, first_step INTEGER NOT NULL, last_step INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, reason INTEGER NOT NULL);
)sql";
}

const char* compat_sql(int version) {
  if (version >= kSchemaVersion) return "";
  // Views keep the table's rowid under that name (the Reader orders rows by it); each piece is what one version
  // added, and an older file gets every piece since its version. Before version 6: anomalies without cause_id and
  // cause, oom_reports without step and kept_bytes.
  static const std::string oom_v6 = R"sql(
CREATE TEMP VIEW oom_reports AS SELECT rowid AS rowid, id, t_ns, requested, capacity, free, allocated, reserved,
  largest_free_block, report, NULL AS step, NULL AS kept_bytes FROM main.oom_reports;
)sql";
  auto anomalies = [](const char* rank) {
    return std::string(R"sql(
CREATE TEMP VIEW anomalies AS SELECT rowid AS rowid, id, t_ns, step, kind, severity, span_id, node_id, module_id,
  param_id, value, message, )sql") +
           rank + " AS rank, NULL AS cause_id, NULL AS cause FROM main.anomalies;\n";
  };
  // Before version 5: steps without the summary columns, no step_memory, no detail_windows (every step of such a
  // file has its detail).
  static const std::string summary_v5 = R"sql(
CREATE TEMP VIEW steps AS SELECT rowid AS rowid, step, start_ns, end_ns, loss, lr, grad_scale, skipped,
  NULL AS data_ns, NULL AS forward_ns, NULL AS backward_ns, NULL AS optimizer_ns, NULL AS samples, NULL AS tokens,
  NULL AS grad_norm FROM main.steps;
CREATE TEMP TABLE step_memory (step INTEGER NOT NULL, device INTEGER NOT NULL, allocated_peak INTEGER NOT NULL,
  reserved_peak INTEGER NOT NULL, allocated_end INTEGER NOT NULL, reserved_end INTEGER NOT NULL,
  unknown_peak INTEGER NOT NULL, parameter_peak INTEGER NOT NULL, gradient_peak INTEGER NOT NULL,
  activation_peak INTEGER NOT NULL, optimizer_state_peak INTEGER NOT NULL, temporary_peak INTEGER NOT NULL,
  input_peak INTEGER NOT NULL, autograd_detail_peak INTEGER NOT NULL);
CREATE TEMP TABLE detail_windows (id INTEGER PRIMARY KEY, first_step INTEGER NOT NULL, last_step INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, reason INTEGER NOT NULL);
)sql";
  // Before version 4: threads and anomalies without rank, no collectives, ranks or rank_steps.
  static const std::string ranks_v4 = R"sql(
CREATE TEMP VIEW threads AS SELECT rowid AS rowid, id, os_tid, name, role, NULL AS rank FROM main.threads;
CREATE TEMP TABLE collectives (span_id INTEGER PRIMARY KEY, bytes INTEGER NOT NULL, dtype INTEGER NOT NULL,
  reduce_op INTEGER, bucket INTEGER, peers INTEGER NOT NULL, queued_ns INTEGER NOT NULL);
CREATE TEMP TABLE ranks (rank INTEGER PRIMARY KEY, source TEXT NOT NULL, host TEXT NOT NULL,
  offset_ns INTEGER NOT NULL, scale REAL NOT NULL, aligned_by TEXT NOT NULL);
CREATE TEMP TABLE rank_steps (rank INTEGER NOT NULL, step INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL, loss REAL, skipped INTEGER NOT NULL, PRIMARY KEY (rank, step));
)sql";
  static const std::string v6 = anomalies("rank") + oom_v6;
  static const std::string v5 = summary_v5 + v6;
  static const std::string before_v4 = ranks_v4 + anomalies("NULL") + summary_v5 + oom_v6;
  return version < 4 ? before_v4.c_str() : version < 5 ? v5.c_str() : v6.c_str();
}

const char* create_indexes_sql() {
  return R"sql(
CREATE INDEX IF NOT EXISTS instants_thread_t ON instants (thread_id, t_ns);
CREATE INDEX IF NOT EXISTS memory_events_device_t ON memory_events (device, t_ns);
CREATE INDEX IF NOT EXISTS grad_stats_step_param ON grad_stats (step, param_id);
CREATE INDEX IF NOT EXISTS anomalies_t ON anomalies (t_ns);
CREATE INDEX IF NOT EXISTS counters_name_t ON counters (name_id, t_ns);
CREATE INDEX IF NOT EXISTS graph_nodes_step ON graph_nodes (step);
CREATE INDEX IF NOT EXISTS graph_edges_step ON graph_edges (step);
)sql";
}

std::span<const std::string_view> required_tables() {
  static constexpr std::array<std::string_view, 22> tables = {
      "meta",        "strings",    "threads",     "spans",       "instants",      "op_details",
      "modules",     "params",     "steps",       "graph_nodes", "graph_edges",   "memory_events",
      "oom_reports", "grad_stats", "anomalies",   "counters",    "kernels",       "collectives",
      "ranks",       "rank_steps", "step_memory", "detail_windows"};
  return tables;
}

namespace {
template <std::size_t N>
std::string_view pick(const std::array<std::string_view, N>& names, int v) {
  return v >= 0 && static_cast<std::size_t>(v) < N ? names[static_cast<std::size_t>(v)] : std::string_view("unknown");
}
}  // namespace

std::string_view name(SpanKind k) { return pick(kSpanKindNames, static_cast<int>(k)); }
std::string_view name(ThreadRole r) { return pick(kThreadRoleNames, static_cast<int>(r)); }
std::string_view name(MemAction a) { return pick(kMemActionNames, static_cast<int>(a)); }
std::string_view name(MemCategory c) { return pick(kMemCategoryNames, static_cast<int>(c)); }
std::string_view name(DType d) { return pick(kDTypeNames, static_cast<int>(d)); }
std::string_view name(AnomalyKind k) { return pick(kAnomalyKindNames, static_cast<int>(k)); }
std::string_view name(Severity s) { return pick(kSeverityNames, static_cast<int>(s)); }
std::string_view name(DetailReason r) { return pick(kDetailReasonNames, static_cast<int>(r)); }

}  // namespace gb::trace
