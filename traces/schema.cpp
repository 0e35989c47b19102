// traces/schema.cpp — the schema's tables and CREATE statements, made from traces/tables.h's declarations; the views
// that read older files (these describe old files: written by hand, never changed); the indexes; enum names.
#include "traces/schema.h"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

#include "traces/tables.h"

namespace gb::trace {

namespace {

struct Schema {
  std::vector<TableInfo> tables;
  std::vector<std::string_view> names;
  std::string create;  // CREATE TABLE ... for every table, as every version wrote it (tables.h: new_line)
};

const Schema& schema() {
  static const Schema s = [] {
    Schema out;
    detail::for_each_table(detail::AllTables{}, [&]<class T>(T) {
      TableInfo t{T::name, {}};
      std::string sql = "CREATE TABLE " + std::string(T::name) + " (";
      std::apply(
          [&](const auto&... c) {
            auto one = [&](const auto& column) {
              if (!t.columns.empty()) sql += column.new_line ? ",\n  " : ", ";
              ((sql += column.name) += " ") += column.type;
              if (!column.constraint.empty()) (sql += " ") += column.constraint;
              t.columns.push_back(ColumnInfo{column.name, column.type, column.constraint});
            };
            (one(c), ...);
          },
          T::columns);
      if (!T::constraints.empty()) (sql += ", ") += T::constraints;
      sql += ")";
      if (!T::options.empty()) (sql += " ") += T::options;
      (out.create += "\n") += sql + ";";
      out.names.push_back(T::name);
      out.tables.push_back(std::move(t));
    });
    out.create += "\n";
    return out;
  }();
  return s;
}

}  // namespace

std::string TableInfo::stored_columns() const {
  std::string cols;
  for (const ColumnInfo& c : columns)
    if (!c.generated()) (cols += (cols.empty() ? "" : ", ")) += c.name;
  return cols;
}

const ColumnInfo* TableInfo::find(std::string_view column) const {
  for (const ColumnInfo& c : columns)
    if (c.name == column) return &c;
  return nullptr;
}

std::span<const TableInfo> tables() { return schema().tables; }

const TableInfo& table(std::string_view name) {
  for (const TableInfo& t : schema().tables)
    if (t.name == name) return t;
  throw std::logic_error("glassbox: the trace schema has no table '" + std::string(name) +
                         "'; declare it in traces/tables.h");
}

const char* create_tables_sql() { return schema().create.c_str(); }

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

std::span<const std::string_view> required_tables() { return schema().names; }

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
