// traces/query/op_table.h — PyTorch's key_averages() table over the spans of one kind, with CUDA columns from kernels.
//
// Per span name: # of Calls, CPU total (sum of durations), Self CPU (durations minus those of direct children, any
// kind), CPU time avg (total / calls). When the trace has cuda_kernel spans, also Self CUDA (kernels whose
// kernels.launch_span_id is one of the name's spans), CUDA total (kernels launched by those spans or any span
// nested in them) and CUDA time avg (CUDA total / calls). Shares are taken of the sum of Self CPU over all rows
// (PyTorch's "Self CPU time total"), or of the traced CPU time when that is larger (OpTable::cpu_time_ns), and of
// the sum of all kernel durations ("Self CUDA time total").
//
//   OpTable t = op_table(db, SpanKind::op);
//   sort_ops(t.rows, OpSort::self_cpu);
//   std::cout << render_op_table(t, 20);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "traces/query/trace_db.h"
#include "traces/records.h"

namespace gb::query {

struct OpStats {
  std::string name;
  std::int64_t calls = 0;
  std::int64_t self_ns = 0;
  std::int64_t total_ns = 0;
  std::int64_t self_cuda_ns = 0;
  std::int64_t cuda_total_ns = 0;
  double avg_ns() const { return calls ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0.0; }
  double cuda_avg_ns() const { return calls ? static_cast<double>(cuda_total_ns) / static_cast<double>(calls) : 0.0; }
};

struct OpTable {
  gb::trace::SpanKind kind = gb::trace::SpanKind::op;
  std::vector<OpStats> rows;       // by CPU total descending, then name
  bool has_cuda = false;           // the trace has cuda_kernel spans
  std::int64_t self_total_ns = 0;  // sum of rows' self_ns
  // The traced CPU time: the durations of every root span (no parent) of a CPU kind, all threads. Shares are of
  // max(self_total_ns, cpu_time_ns): when the rows' spans sit inside spans of other kinds (ops inside steps,
  // backward nodes whose ops are children), this keeps every share a share of the run, at most 100%.
  std::int64_t cpu_time_ns = 0;
  std::int64_t cuda_total_ns = 0;  // sum of every cuda_kernel span's duration
};

OpTable op_table(const TraceDb& db, gb::trace::SpanKind kind);

enum class OpSort { self_cpu, cpu_total, calls, avg, name, self_cuda };
std::span<const std::string_view> op_sort_names();  // "self_cpu", "cpu_total", ... in OpSort order
std::optional<OpSort> parse_op_sort(std::string_view name);
std::span<const std::string_view> span_kind_names();  // "op", "backward_node", ... in SpanKind order
std::optional<gb::trace::SpanKind> parse_span_kind(std::string_view name);

// Descending by the key (ascending for name); ties by name, so the order is deterministic.
void sort_ops(std::vector<OpStats>& rows, OpSort by);

// PyTorch's table layout: a right-aligned Name column as wide as the longest name + 4 (at most 55, longer names
// cut with "..."), 12-character columns two spaces apart, dashed rules, then "Self CPU time total: ..." (and
// "Self CUDA time total: ..." with CUDA columns). limit = 0 prints every row.
std::string render_op_table(const OpTable& table, std::size_t limit);

}  // namespace gb::query
