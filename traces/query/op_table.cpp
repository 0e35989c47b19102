// traces/query/op_table.cpp — the aggregated op table: CPU columns from the Reader, CUDA columns from kernels.
#include "traces/query/op_table.h"

#include <algorithm>
#include <array>
#include <map>

#include "traces/query/format.h"
#include "traces/schema.h"

namespace gb::query {

using gb::trace::SpanKind;

namespace {

constexpr std::array<std::string_view, 6> kSortNames = {"self_cpu", "cpu_total", "calls", "avg", "name", "self_cuda"};
// The schema's own names (traces/records.h), so `--kind` accepts exactly what SCHEMA.md lists.
constexpr const auto& kKindNames = gb::trace::kSpanKindNames;

// Kernel time per launching span name: the launching span itself (self), or it and its ancestors (total). Walking
// up from each kernel's launcher gives every enclosing span the kernel's time, the way CPU total includes children.
constexpr const char* kCudaSelfSql = R"sql(
  SELECT s.name_id, SUM(k.dur_ns) FROM kernels kr JOIN spans k ON k.id = kr.span_id
  JOIN spans s ON s.id = kr.launch_span_id WHERE s.kind = ?1 GROUP BY s.name_id)sql";
constexpr const char* kCudaTotalSql = R"sql(
  WITH RECURSIVE up(id, dur) AS (
    SELECT kr.launch_span_id, k.dur_ns FROM kernels kr JOIN spans k ON k.id = kr.span_id
    WHERE kr.launch_span_id IS NOT NULL
    UNION ALL
    SELECT p.parent_id, up.dur FROM up JOIN spans p ON p.id = up.id WHERE p.parent_id IS NOT NULL)
  SELECT s.name_id, SUM(up.dur) FROM up JOIN spans s ON s.id = up.id WHERE s.kind = ?1 GROUP BY s.name_id)sql";

}  // namespace

std::span<const std::string_view> op_sort_names() { return kSortNames; }
std::span<const std::string_view> span_kind_names() { return kKindNames; }

std::optional<OpSort> parse_op_sort(std::string_view name) {
  for (std::size_t i = 0; i < kSortNames.size(); ++i)
    if (kSortNames[i] == name) return static_cast<OpSort>(i);
  return std::nullopt;
}

std::optional<SpanKind> parse_span_kind(std::string_view name) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name) return static_cast<SpanKind>(i);
  return std::nullopt;
}

OpTable op_table(const TraceDb& db, SpanKind kind) {
  OpTable t;
  t.kind = kind;
  std::map<gb::trace::Id, std::size_t> row_of;  // name_id -> index in t.rows
  for (const gb::trace::OpRow& r : db.reader().op_table(kind)) {
    row_of[r.name_id] = t.rows.size();
    t.rows.push_back(OpStats{.name = r.name, .calls = r.calls, .self_ns = r.self_ns, .total_ns = r.total_ns});
    t.self_total_ns += r.self_ns;
  }
  t.cpu_time_ns = db.scalar("SELECT COALESCE(SUM(dur_ns), 0) FROM spans WHERE parent_delta IS NULL AND kind < ?1",
                            {static_cast<std::int64_t>(SpanKind::cuda_kernel)});
  const auto k = static_cast<std::int64_t>(kind);
  t.has_cuda = db.scalar("SELECT EXISTS (SELECT 1 FROM spans WHERE kind = ?1)",
                         {static_cast<std::int64_t>(SpanKind::cuda_kernel)}) != 0;
  if (!t.has_cuda) return t;
  t.cuda_total_ns = db.scalar("SELECT COALESCE(SUM(dur_ns), 0) FROM spans WHERE kind = ?1",
                              {static_cast<std::int64_t>(SpanKind::cuda_kernel)});
  db.each(kCudaSelfSql, {k}, [&](const Row& r) {
    if (auto it = row_of.find(r.i64(0)); it != row_of.end()) t.rows[it->second].self_cuda_ns = r.i64(1);
  });
  db.each(kCudaTotalSql, {k}, [&](const Row& r) {
    if (auto it = row_of.find(r.i64(0)); it != row_of.end()) t.rows[it->second].cuda_total_ns = r.i64(1);
  });
  return t;
}

void sort_ops(std::vector<OpStats>& rows, OpSort by) {
  auto key = [by](const OpStats& o) -> double {
    switch (by) {
      case OpSort::self_cpu:
        return static_cast<double>(o.self_ns);
      case OpSort::cpu_total:
        return static_cast<double>(o.total_ns);
      case OpSort::calls:
        return static_cast<double>(o.calls);
      case OpSort::avg:
        return o.avg_ns();
      case OpSort::self_cuda:
        return static_cast<double>(o.self_cuda_ns);
      case OpSort::name:
        return 0;
    }
    return 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const OpStats& a, const OpStats& b) {
    if (by != OpSort::name && key(a) != key(b)) return key(a) > key(b);
    return a.name < b.name;
  });
}

std::string render_op_table(const OpTable& t, std::size_t limit) {
  constexpr std::size_t kColumn = 12, kSpacing = 2, kMaxName = 55;
  std::size_t shown = limit == 0 ? t.rows.size() : std::min(limit, t.rows.size());
  std::size_t name_w = 0;
  for (std::size_t i = 0; i < shown; ++i) name_w = std::max(name_w, t.rows[i].name.size() + 4);
  name_w = std::clamp<std::size_t>(name_w, std::string_view("Name").size() + 4, kMaxName);

  std::vector<std::string> header = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (t.has_cuda)
    for (const char* h : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"}) header.emplace_back(h);
  header.emplace_back("# of Calls");

  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      std::size_t w = i == 0 ? name_w : kColumn;
      if (cells[i].size() < w) l += std::string(w - cells[i].size(), ' ');
      l += cells[i] + std::string(kSpacing, ' ');
    }
    return l + "\n";
  };
  std::string rule;
  for (std::size_t i = 0; i < header.size(); ++i) rule += std::string(i == 0 ? name_w : kColumn, '-') + "  ";
  rule += "\n";

  const double self_total = static_cast<double>(t.self_total_ns), cuda_total = static_cast<double>(t.cuda_total_ns);
  const double share_base = std::max(self_total, static_cast<double>(t.cpu_time_ns));
  std::string out = rule + line(header) + rule;
  for (std::size_t i = 0; i < shown; ++i) {
    const OpStats& o = t.rows[i];
    std::string name = o.name;
    if (name.size() >= kMaxName - 3) name = name.substr(0, kMaxName - 3) + "...";
    std::vector<std::string> cells = {name,
                                      format_share(static_cast<double>(o.self_ns), share_base),
                                      format_time(static_cast<double>(o.self_ns)),
                                      format_share(static_cast<double>(o.total_ns), share_base),
                                      format_time(static_cast<double>(o.total_ns)),
                                      format_time(o.avg_ns())};
    if (t.has_cuda) {
      cells.push_back(format_time(static_cast<double>(o.self_cuda_ns)));
      cells.push_back(format_share(static_cast<double>(o.self_cuda_ns), cuda_total));
      cells.push_back(format_time(static_cast<double>(o.cuda_total_ns)));
      cells.push_back(format_time(o.cuda_avg_ns()));
    }
    cells.push_back(std::to_string(o.calls));
    out += line(cells);
  }
  out += rule;
  if (shown < t.rows.size())
    out.append("(").append(std::to_string(t.rows.size() - shown)).append(" more rows; --limit 0 shows all)\n");
  out += "Self CPU time total: " + format_time(self_total) + "\n";
  if (share_base > self_total)
    out += "CPU shares are of the traced CPU time: " + format_time(share_base) + " (root spans of every thread)\n";
  if (t.has_cuda) out += "Self CUDA time total: " + format_time(cuda_total) + "\n";
  return out;
}

}  // namespace gb::query
