// traces/codec.h — internal: the column list of each table as (name, member pointer) pairs, so one generic
// bind/read moves any record between C++ and SQLite. Column order here is the order of traces/schema.cpp.
#pragma once

#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "traces/records.h"
#include "traces/sqlite.h"

namespace gb::trace::detail {

template <class R, class T>
struct Field {
  const char* name;
  T R::*member;
};
template <class R, class T>
constexpr Field<R, T> F(const char* n, T R::*m) { return {n, m}; }

template <class R>
struct Codec;

#define GB_CODEC(Record, table_name, ...)                      \
  template <>                                                  \
  struct Codec<Record> {                                       \
    using R = Record;                                          \
    static constexpr const char* table = table_name;           \
    static constexpr auto fields = std::make_tuple(__VA_ARGS__); \
  }

GB_CODEC(ThreadRecord, "threads", F("id", &R::id), F("os_tid", &R::os_tid), F("name", &R::name), F("role", &R::role),
         F("rank", &R::rank));
GB_CODEC(SpanRecord, "spans", F("id", &R::id), F("kind", &R::kind), F("name_id", &R::name_id),
         F("thread_id", &R::thread_id), F("start_ns", &R::start_ns), F("end_ns", &R::end_ns), F("step", &R::step),
         F("parent_id", &R::parent_id), F("seq", &R::seq), F("module_id", &R::module_id));
GB_CODEC(InstantRecord, "instants", F("id", &R::id), F("t_ns", &R::t_ns), F("name_id", &R::name_id),
         F("thread_id", &R::thread_id), F("span_id", &R::span_id), F("step", &R::step));
GB_CODEC(OpDetailsRecord, "op_details", F("span_id", &R::span_id), F("input_shapes", &R::input_shapes),
         F("dtypes", &R::dtypes), F("device", &R::device), F("flops", &R::flops), F("bytes", &R::bytes));
GB_CODEC(ModuleRecord, "modules", F("id", &R::id), F("path", &R::path), F("type", &R::type),
         F("parent_id", &R::parent_id));
GB_CODEC(ParamRecord, "params", F("id", &R::id), F("module_id", &R::module_id), F("name", &R::name),
         F("shape", &R::shape), F("numel", &R::numel), F("dtype", &R::dtype));
GB_CODEC(StepRecord, "steps", F("step", &R::step), F("start_ns", &R::start_ns), F("end_ns", &R::end_ns),
         F("loss", &R::loss), F("lr", &R::lr), F("grad_scale", &R::grad_scale), F("skipped", &R::skipped),
         F("data_ns", &R::data_ns), F("forward_ns", &R::forward_ns), F("backward_ns", &R::backward_ns),
         F("optimizer_ns", &R::optimizer_ns), F("samples", &R::samples), F("tokens", &R::tokens),
         F("grad_norm", &R::grad_norm));
GB_CODEC(StepMemoryRecord, "step_memory", F("step", &R::step), F("device", &R::device),
         F("allocated_peak", &R::allocated_peak), F("reserved_peak", &R::reserved_peak),
         F("allocated_end", &R::allocated_end), F("reserved_end", &R::reserved_end),
         F("unknown_peak", &R::unknown_peak), F("parameter_peak", &R::parameter_peak),
         F("gradient_peak", &R::gradient_peak), F("activation_peak", &R::activation_peak),
         F("optimizer_state_peak", &R::optimizer_state_peak), F("temporary_peak", &R::temporary_peak),
         F("input_peak", &R::input_peak), F("autograd_detail_peak", &R::autograd_detail_peak));
GB_CODEC(DetailWindowRecord, "detail_windows", F("id", &R::id), F("first_step", &R::first_step),
         F("last_step", &R::last_step), F("start_ns", &R::start_ns), F("end_ns", &R::end_ns),
         F("reason", &R::reason));
GB_CODEC(GraphNodeRecord, "graph_nodes", F("id", &R::id), F("step", &R::step), F("seq", &R::seq),
         F("name_id", &R::name_id), F("forward_span_id", &R::forward_span_id), F("module_id", &R::module_id),
         F("saved_bytes", &R::saved_bytes));
GB_CODEC(GraphEdgeRecord, "graph_edges", F("step", &R::step), F("src_node_id", &R::src_node_id),
         F("dst_node_id", &R::dst_node_id), F("input_nr", &R::input_nr));
GB_CODEC(MemoryEventRecord, "memory_events", F("id", &R::id), F("t_ns", &R::t_ns), F("action", &R::action),
         F("device", &R::device), F("addr", &R::addr), F("size", &R::size), F("requested", &R::requested),
         F("segment_id", &R::segment_id), F("stream", &R::stream), F("category", &R::category),
         F("span_id", &R::span_id), F("module_id", &R::module_id), F("allocated", &R::allocated),
         F("reserved", &R::reserved));
GB_CODEC(OomReportRecord, "oom_reports", F("id", &R::id), F("t_ns", &R::t_ns), F("requested", &R::requested),
         F("capacity", &R::capacity), F("free", &R::free), F("allocated", &R::allocated),
         F("reserved", &R::reserved), F("largest_free_block", &R::largest_free_block), F("report", &R::report),
         F("step", &R::step), F("kept_bytes", &R::kept_bytes));
GB_CODEC(GradStatRecord, "grad_stats", F("step", &R::step), F("param_id", &R::param_id), F("norm", &R::norm),
         F("max_abs", &R::max_abs), F("nan_count", &R::nan_count), F("inf_count", &R::inf_count),
         F("zero_frac", &R::zero_frac), F("param_norm", &R::param_norm), F("update_norm", &R::update_norm));
GB_CODEC(AnomalyRecord, "anomalies", F("id", &R::id), F("t_ns", &R::t_ns), F("step", &R::step), F("kind", &R::kind),
         F("severity", &R::severity), F("span_id", &R::span_id), F("node_id", &R::node_id),
         F("module_id", &R::module_id), F("param_id", &R::param_id), F("value", &R::value),
         F("message", &R::message), F("rank", &R::rank), F("cause_id", &R::cause_id), F("cause", &R::cause));
GB_CODEC(CounterRecord, "counters", F("t_ns", &R::t_ns), F("name_id", &R::name_id), F("value", &R::value));
GB_CODEC(KernelRecord, "kernels", F("span_id", &R::span_id), F("device", &R::device), F("stream", &R::stream),
         F("correlation_id", &R::correlation_id), F("launch_span_id", &R::launch_span_id), F("grid", &R::grid), F("block", &R::block),
         F("registers", &R::registers), F("shared_mem", &R::shared_mem));
GB_CODEC(CollectiveRecord, "collectives", F("span_id", &R::span_id), F("bytes", &R::bytes), F("dtype", &R::dtype),
         F("reduce_op", &R::reduce_op), F("bucket", &R::bucket), F("peers", &R::peers),
         F("queued_ns", &R::queued_ns));
GB_CODEC(RankRecord, "ranks", F("rank", &R::rank), F("source", &R::source), F("host", &R::host),
         F("offset_ns", &R::offset_ns), F("scale", &R::scale), F("aligned_by", &R::aligned_by));
GB_CODEC(RankStepRecord, "rank_steps", F("rank", &R::rank), F("step", &R::step), F("start_ns", &R::start_ns),
         F("end_ns", &R::end_ns), F("loss", &R::loss), F("skipped", &R::skipped));

// How a span is stored (schema.cpp): thread_id, end_ns and parent_id are generated from id, start_ns + dur_ns and
// id - parent_delta, which keeps a span row near 30 bytes. The Writer stores a SpanRecord through this.
struct StoredSpan {
  Id id = 0;
  SpanKind kind = SpanKind::op;
  Id name_id = 0;
  std::int64_t start_ns = 0, dur_ns = 0;
  OptId step, parent_delta, seq, module_id;
};
GB_CODEC(StoredSpan, "spans", F("id", &R::id), F("kind", &R::kind), F("name_id", &R::name_id),
         F("start_ns", &R::start_ns), F("dur_ns", &R::dur_ns), F("step", &R::step),
         F("parent_delta", &R::parent_delta), F("seq", &R::seq), F("module_id", &R::module_id));
#undef GB_CODEC

inline StoredSpan stored(const SpanRecord& r) {
  return {r.id, r.kind, r.name_id, r.start_ns, r.end_ns - r.start_ns, r.step,
          r.parent_id ? OptId(r.id - *r.parent_id) : std::nullopt, r.seq, r.module_id};
}

// Threads are re-written when a thread is renamed; every other table only grows.
template <class R> constexpr const char* insert_verb = "INSERT INTO ";
template <> inline constexpr const char* insert_verb<ThreadRecord> = "INSERT OR REPLACE INTO ";

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
void bind_value(Stmt& s, int i, const T& v) {
  if constexpr (is_optional<T>::value) {
    if (v) bind_value(s, i, *v); else s.bind_null(i, __FILE__, __LINE__);
  } else if constexpr (std::is_same_v<T, std::string>) {
    s.bind(i, std::string_view(v), __FILE__, __LINE__);
  } else if constexpr (std::is_floating_point_v<T>) {
    s.bind(i, static_cast<double>(v), __FILE__, __LINE__);
  } else {  // integers, bool, enums
    s.bind(i, static_cast<std::int64_t>(v), __FILE__, __LINE__);
  }
}

template <class T>
void read_value(sqlite3_stmt* s, int col, T& out) {
  if constexpr (is_optional<T>::value) {
    if (sqlite3_column_type(s, col) == SQLITE_NULL) { out.reset(); return; }
    typename T::value_type v{};
    read_value(s, col, v);
    out = v;
  } else if constexpr (std::is_same_v<T, std::string>) {
    const unsigned char* t = sqlite3_column_text(s, col);
    out.assign(t ? reinterpret_cast<const char*>(t) : "", static_cast<std::size_t>(sqlite3_column_bytes(s, col)));
  } else if constexpr (std::is_floating_point_v<T>) {
    // SQLite stores a NaN as NULL: a NULL in a plain (non-optional) REAL column reads back as NaN.
    out = sqlite3_column_type(s, col) == SQLITE_NULL ? std::numeric_limits<T>::quiet_NaN()
                                                     : static_cast<T>(sqlite3_column_double(s, col));
  } else {
    out = static_cast<T>(sqlite3_column_int64(s, col));
  }
}

template <class R>
std::string column_list() {
  std::string cols;
  std::apply([&](const auto&... f) { ((cols += (cols.empty() ? "" : ", "), cols += f.name), ...); },
             Codec<R>::fields);
  return cols;
}

template <class R>
std::string insert_sql() {
  std::string q;
  std::apply([&](const auto&... f) { ((q += (q.empty() ? "?" : ", ?"), (void)f), ...); }, Codec<R>::fields);
  return std::string(insert_verb<R>) + Codec<R>::table + " (" + column_list<R>() + ") VALUES (" + q + ")";
}

// INSERT of `rows` rows in one statement: one sqlite3_step for many rows.
template <class R>
std::string insert_rows_sql(int rows) {
  std::string one;
  std::apply([&](const auto&... f) { ((one += (one.empty() ? "(?" : ", ?"), (void)f), ...); }, Codec<R>::fields);
  one += ")";
  std::string q = std::string(insert_verb<R>) + Codec<R>::table + " (" + column_list<R>() + ") VALUES ";
  for (int i = 0; i < rows; ++i) q += (i ? ", " : "") + one;
  return q;
}

template <class R>
std::string select_sql() {
  return "SELECT " + column_list<R>() + " FROM " + Codec<R>::table;
}

// Binds r's columns to parameters first, first + 1, ... (first > 1 for the later rows of a multi-row INSERT).
template <class R>
void bind_row(Stmt& s, const R& r, int first = 1) {
  int i = first;
  std::apply([&](const auto&... f) { (bind_value(s, i++, r.*(f.member)), ...); }, Codec<R>::fields);
}

template <class R>
R read_row(sqlite3_stmt* s) {
  R r{};
  int col = 0;
  std::apply([&](const auto&... f) { (read_value(s, col++, r.*(f.member)), ...); }, Codec<R>::fields);
  return r;
}

}  // namespace gb::trace::detail
