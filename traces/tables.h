// traces/tables.h — internal: every table of the trace file, declared once. Each column is its name, SQL type,
// constraint and the record field it binds; from these come the CREATE statements (schema.cpp), the codec's
// bind/read column order (codec.h), the Reader's open-time check, the column lists of `glassbox merge`
// (schema.h tables()) and, through tests/traces/tables_test.cpp, the check that traces/SCHEMA.md says the same.
//
// Contract:
//   - Table<Row>: one specialization per table, keyed by the row the Writer stores (StoredSpan for spans; a tag for
//     meta and strings, which no record describes). name, columns (in the file's order), constraints (the table
//     constraints inside the parentheses), options (after them: WITHOUT ROWID).
//   - A column binds the stored row's member the INSERT writes (write_row NoField: the column is generated, never
//     written) and the record's member a SELECT reads (read_row NoField: not read). A column's name is its
//     record field's name (the GB_COL macros take one identifier for both).
//   - new_line: the CREATE text breaks the line before the column. SQLite keeps a CREATE statement's text in the
//     file (`sqlite3 run.db .schema` prints it): the breaks keep that text what every earlier version wrote.
//   - Adding a column: one line here (nullable, at the end; older files then read through schema.cpp's views),
//     its field in records.h, its row in SCHEMA.md (the test compares them). Adding a table: its record, its
//     Table<> here, its entry in AllTables, and in records.h AllRecords.
#pragma once

#include <string_view>
#include <tuple>

#include "traces/records.h"

namespace gb::trace::detail {

// How a span is stored: thread_id, end_ns and parent_id are generated from id, start_ns + dur_ns and
// id - parent_delta, which keeps a span row near 30 bytes. The Writer stores a SpanRecord through this.
struct StoredSpan {
  Id id = 0;
  SpanKind kind = SpanKind::op;
  Id name_id = 0;
  std::int64_t start_ns = 0, dur_ns = 0;
  OptId step, parent_delta, seq, module_id;
};

inline StoredSpan stored(const SpanRecord& r) {
  return {r.id, r.kind, r.name_id, r.start_ns, r.end_ns - r.start_ns, r.step,
          r.parent_id ? OptId(r.id - *r.parent_id) : std::nullopt, r.seq, r.module_id};
}

// A member a column does not bind.
struct NoField {
  int none = 0;
};
// The rows of the two tables no record describes (the Writer writes them with their own statements).
struct MetaRow {};
struct StringRow {};

template <class W, class TW, class R, class TR>
struct Column {
  using write_row = W;  // NoField: generated, never written
  using read_row = R;   // NoField: not read
  std::string_view name, type, constraint;
  TW W::*write = nullptr;
  TR R::*read = nullptr;
  bool new_line = false;
  // The same column, on a new line of the CREATE text.
  constexpr Column line() const {
    Column c = *this;
    c.new_line = true;
    return c;
  }
};

// A column the row both writes and reads.
template <class Row, class T>
constexpr Column<Row, T, Row, T> col(std::string_view n, std::string_view type, std::string_view constraint,
                                     T Row::*m) {
  return {n, type, constraint, m, m};
}
// A column written from one row type and read into another (spans: StoredSpan, SpanRecord); either may be NoField.
template <class W, class TW, class R, class TR>
constexpr Column<W, TW, R, TR> col2(std::string_view n, std::string_view type, std::string_view constraint,
                                    TW W::*w, TR R::*r) {
  return {n, type, constraint, w, r};
}
// A column of a table no record describes.
constexpr Column<NoField, int, NoField, int> unbound(std::string_view n, std::string_view type,
                                                     std::string_view constraint) {
  return {n, type, constraint, nullptr, nullptr};
}

#define GB_COL(n, type, constraint) ::gb::trace::detail::col(#n, type, constraint, &Row::n)
#define GB_SPAN_COL(n, type, constraint) \
  ::gb::trace::detail::col2(#n, type, constraint, &StoredSpan::n, &SpanRecord::n)
#define GB_STORED_SPAN_COL(n, type, constraint) \
  ::gb::trace::detail::col2(#n, type, constraint, &StoredSpan::n, static_cast<int NoField::*>(nullptr))
#define GB_GENERATED_SPAN_COL(n, type, expr)                                                            \
  ::gb::trace::detail::col2(#n, type, "GENERATED ALWAYS AS (" expr ") VIRTUAL",                         \
                            static_cast<int NoField::*>(nullptr), &SpanRecord::n)

template <class Row>
struct Table;

#define GB_TABLE(Row_, name_, constraints_, options_, ...)      \
  template <>                                                   \
  struct Table<Row_> {                                          \
    using Row = Row_;                                           \
    static constexpr std::string_view name = name_;             \
    static constexpr std::string_view constraints = constraints_; \
    static constexpr std::string_view options = options_;       \
    static constexpr auto columns = std::make_tuple(__VA_ARGS__); \
  }

constexpr std::string_view kPk = "PRIMARY KEY", kNN = "NOT NULL", kNull = "";
constexpr std::string_view kInt = "INTEGER", kText = "TEXT", kReal = "REAL";

GB_TABLE(MetaRow, "meta", "", "WITHOUT ROWID", unbound("key", kText, kPk), unbound("value", kText, kNull));
GB_TABLE(StringRow, "strings", "", "", unbound("id", kInt, kPk), unbound("text", kText, kNN));
GB_TABLE(ThreadRecord, "threads", "", "", GB_COL(id, kInt, kPk), GB_COL(os_tid, kInt, kNN), GB_COL(name, kText, kNN),
         GB_COL(role, kInt, kNN), GB_COL(rank, kInt, kNull).line());
GB_TABLE(StoredSpan, "spans", "", "", GB_SPAN_COL(id, kInt, kPk), GB_SPAN_COL(kind, kInt, kNN),
         GB_SPAN_COL(name_id, kInt, kNN), GB_SPAN_COL(start_ns, kInt, kNN).line(),
         GB_STORED_SPAN_COL(dur_ns, kInt, kNN), GB_SPAN_COL(step, kInt, kNull),
         GB_STORED_SPAN_COL(parent_delta, kInt, kNull), GB_SPAN_COL(seq, kInt, kNull),
         GB_SPAN_COL(module_id, kInt, kNull).line(),  //
         GB_GENERATED_SPAN_COL(thread_id, kInt, "id >> 32").line(),
         GB_GENERATED_SPAN_COL(end_ns, kInt, "start_ns + dur_ns").line(),
         GB_GENERATED_SPAN_COL(parent_id, kInt, "id - parent_delta").line());
GB_TABLE(InstantRecord, "instants", "", "", GB_COL(id, kInt, kPk), GB_COL(t_ns, kInt, kNN),
         GB_COL(name_id, kInt, kNN), GB_COL(thread_id, kInt, kNN).line(), GB_COL(span_id, kInt, kNull),
         GB_COL(step, kInt, kNull));
GB_TABLE(OpDetailsRecord, "op_details", "", "", GB_COL(span_id, kInt, kPk), GB_COL(input_shapes, kInt, kNull),
         GB_COL(dtypes, kInt, kNull), GB_COL(device, kInt, kNN).line(), GB_COL(flops, kInt, kNull),
         GB_COL(bytes, kInt, kNull));
GB_TABLE(ModuleRecord, "modules", "", "", GB_COL(id, kInt, kPk), GB_COL(path, kText, kNN), GB_COL(type, kText, kNN),
         GB_COL(parent_id, kInt, kNull));
GB_TABLE(ParamRecord, "params", "", "", GB_COL(id, kInt, kPk), GB_COL(module_id, kInt, kNN),
         GB_COL(name, kText, kNN), GB_COL(shape, kText, kNN), GB_COL(numel, kInt, kNN).line(),
         GB_COL(dtype, kInt, kNN));
GB_TABLE(StepRecord, "steps", "", "", GB_COL(step, kInt, kPk), GB_COL(start_ns, kInt, kNN),
         GB_COL(end_ns, kInt, kNN), GB_COL(loss, kReal, kNull), GB_COL(lr, kReal, kNull).line(),
         GB_COL(grad_scale, kReal, kNull), GB_COL(skipped, kInt, kNN), GB_COL(data_ns, kInt, kNull),
         GB_COL(forward_ns, kInt, kNull), GB_COL(backward_ns, kInt, kNull), GB_COL(optimizer_ns, kInt, kNull).line(),
         GB_COL(samples, kInt, kNull), GB_COL(tokens, kInt, kNull), GB_COL(grad_norm, kReal, kNull));
GB_TABLE(GraphNodeRecord, "graph_nodes", "", "", GB_COL(id, kInt, kPk), GB_COL(step, kInt, kNN),
         GB_COL(seq, kInt, kNN), GB_COL(name_id, kInt, kNN).line(), GB_COL(forward_span_id, kInt, kNull),
         GB_COL(module_id, kInt, kNull), GB_COL(saved_bytes, kInt, kNN));
GB_TABLE(GraphEdgeRecord, "graph_edges", "", "", GB_COL(step, kInt, kNN), GB_COL(src_node_id, kInt, kNN),
         GB_COL(dst_node_id, kInt, kNN), GB_COL(input_nr, kInt, kNN).line());
GB_TABLE(MemoryEventRecord, "memory_events", "", "", GB_COL(id, kInt, kPk), GB_COL(t_ns, kInt, kNN),
         GB_COL(action, kInt, kNN), GB_COL(device, kInt, kNN).line(), GB_COL(addr, kInt, kNN),
         GB_COL(size, kInt, kNN), GB_COL(requested, kInt, kNN), GB_COL(segment_id, kInt, kNull).line(),
         GB_COL(stream, kInt, kNN), GB_COL(category, kInt, kNN), GB_COL(span_id, kInt, kNull),
         GB_COL(module_id, kInt, kNull), GB_COL(allocated, kInt, kNN).line(), GB_COL(reserved, kInt, kNN));
GB_TABLE(OomReportRecord, "oom_reports", "", "", GB_COL(id, kInt, kPk), GB_COL(t_ns, kInt, kNN),
         GB_COL(requested, kInt, kNN), GB_COL(capacity, kInt, kNN).line(), GB_COL(free, kInt, kNN),
         GB_COL(allocated, kInt, kNN), GB_COL(reserved, kInt, kNN), GB_COL(largest_free_block, kInt, kNN).line(),
         GB_COL(report, kText, kNN), GB_COL(step, kInt, kNull), GB_COL(kept_bytes, kInt, kNull));
GB_TABLE(GradStatRecord, "grad_stats", "", "", GB_COL(step, kInt, kNN), GB_COL(param_id, kInt, kNN),
         GB_COL(norm, kReal, kNull), GB_COL(max_abs, kReal, kNull), GB_COL(nan_count, kInt, kNN).line(),
         GB_COL(inf_count, kInt, kNN), GB_COL(zero_frac, kReal, kNull), GB_COL(param_norm, kReal, kNull),
         GB_COL(update_norm, kReal, kNull));
GB_TABLE(AnomalyRecord, "anomalies", "", "", GB_COL(id, kInt, kPk), GB_COL(t_ns, kInt, kNN),
         GB_COL(step, kInt, kNull), GB_COL(kind, kInt, kNN), GB_COL(severity, kInt, kNN).line(),
         GB_COL(span_id, kInt, kNull), GB_COL(node_id, kInt, kNull), GB_COL(module_id, kInt, kNull),
         GB_COL(param_id, kInt, kNull), GB_COL(value, kReal, kNull), GB_COL(message, kText, kNN).line(),
         GB_COL(rank, kInt, kNull), GB_COL(cause_id, kInt, kNull), GB_COL(cause, kText, kNull));
GB_TABLE(CounterRecord, "counters", "", "", GB_COL(t_ns, kInt, kNN), GB_COL(name_id, kInt, kNN),
         GB_COL(value, kReal, kNull));
GB_TABLE(KernelRecord, "kernels", "", "", GB_COL(span_id, kInt, kPk), GB_COL(device, kInt, kNN),
         GB_COL(stream, kInt, kNN), GB_COL(correlation_id, kInt, kNN).line(), GB_COL(launch_span_id, kInt, kNull),
         GB_COL(grid, kText, kNN), GB_COL(block, kText, kNN), GB_COL(registers, kInt, kNN),
         GB_COL(shared_mem, kInt, kNN).line());
GB_TABLE(CollectiveRecord, "collectives", "", "", GB_COL(span_id, kInt, kPk), GB_COL(bytes, kInt, kNN),
         GB_COL(dtype, kInt, kNN), GB_COL(reduce_op, kInt, kNull).line(), GB_COL(bucket, kInt, kNull),
         GB_COL(peers, kInt, kNN), GB_COL(queued_ns, kInt, kNN));
GB_TABLE(RankRecord, "ranks", "", "", GB_COL(rank, kInt, kPk), GB_COL(source, kText, kNN),
         GB_COL(host, kText, kNN), GB_COL(offset_ns, kInt, kNN), GB_COL(scale, kReal, kNN).line(),
         GB_COL(aligned_by, kText, kNN));
GB_TABLE(RankStepRecord, "rank_steps", "PRIMARY KEY (rank, step)", "", GB_COL(rank, kInt, kNN),
         GB_COL(step, kInt, kNN), GB_COL(start_ns, kInt, kNN), GB_COL(end_ns, kInt, kNN).line(),
         GB_COL(loss, kReal, kNull), GB_COL(skipped, kInt, kNN));
GB_TABLE(StepMemoryRecord, "step_memory", "", "", GB_COL(step, kInt, kNN), GB_COL(device, kInt, kNN),
         GB_COL(allocated_peak, kInt, kNN), GB_COL(reserved_peak, kInt, kNN).line(),
         GB_COL(allocated_end, kInt, kNN), GB_COL(reserved_end, kInt, kNN), GB_COL(unknown_peak, kInt, kNN).line(),
         GB_COL(parameter_peak, kInt, kNN), GB_COL(gradient_peak, kInt, kNN),
         GB_COL(activation_peak, kInt, kNN).line(), GB_COL(optimizer_state_peak, kInt, kNN),
         GB_COL(temporary_peak, kInt, kNN), GB_COL(input_peak, kInt, kNN).line(),
         GB_COL(autograd_detail_peak, kInt, kNN));
GB_TABLE(DetailWindowRecord, "detail_windows", "", "", GB_COL(id, kInt, kPk), GB_COL(first_step, kInt, kNN),
         GB_COL(last_step, kInt, kNN), GB_COL(start_ns, kInt, kNN).line(), GB_COL(end_ns, kInt, kNN),
         GB_COL(reason, kInt, kNN));

#undef GB_TABLE
#undef GB_COL
#undef GB_SPAN_COL
#undef GB_STORED_SPAN_COL
#undef GB_GENERATED_SPAN_COL

// Every table, in the order the file creates them (the order of its CREATE text; never reorder).
template <class... Rows>
struct TableList {};
using AllTables = TableList<MetaRow, StringRow, ThreadRecord, StoredSpan, InstantRecord, OpDetailsRecord,
                            ModuleRecord, ParamRecord, StepRecord, GraphNodeRecord, GraphEdgeRecord,
                            MemoryEventRecord, OomReportRecord, GradStatRecord, AnomalyRecord, CounterRecord,
                            KernelRecord, CollectiveRecord, RankRecord, RankStepRecord, StepMemoryRecord,
                            DetailWindowRecord>;

// Calls f(Table<Row>{}) for each table, in order.
template <class... Rows, class F>
void for_each_table(TableList<Rows...>, F&& f) {
  (f(Table<Rows>{}), ...);
}

// The table a record is read from: its own, except a SpanRecord's (the spans table, stored as StoredSpan).
template <class R>
struct ReadTable {
  using type = Table<R>;
};
template <>
struct ReadTable<SpanRecord> {
  using type = Table<StoredSpan>;
};

}  // namespace gb::trace::detail
