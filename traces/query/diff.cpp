// traces/query/diff.cpp — joins two runs' step summaries, op tables and memory peaks by key.
#include "traces/query/diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "traces/query/format.h"
#include "traces/query/memory.h"
#include "traces/schema.h"

namespace gb::query {

TraceDiff diff_traces(const TraceDb& a, const TraceDb& b, gb::trace::SpanKind kind) {
  TraceDiff d;
  d.path_a = a.path();
  d.path_b = b.path();
  d.kind = kind;
  d.steps_a = summarize(step_durations(a).durations_ns);
  d.steps_b = summarize(step_durations(b).durations_ns);

  std::map<std::string, OpDelta> ops;
  for (const OpStats& o : op_table(a, kind).rows) ops[o.name].a = o;
  for (const OpStats& o : op_table(b, kind).rows) ops[o.name].b = o;
  for (auto& [name, delta] : ops) {
    delta.name = name;
    d.ops.push_back(delta);
  }
  std::stable_sort(d.ops.begin(), d.ops.end(), [](const OpDelta& x, const OpDelta& y) {
    return std::llabs(x.total_delta_ns()) > std::llabs(y.total_delta_ns());
  });

  std::map<int, MemoryDelta> mem;
  for (const DeviceMemory& m : memory_peaks(a).devices) {
    mem[m.device].allocated_a = m.peak_allocated;
    mem[m.device].reserved_a = m.peak_reserved;
  }
  for (const DeviceMemory& m : memory_peaks(b).devices) {
    mem[m.device].allocated_b = m.peak_allocated;
    mem[m.device].reserved_b = m.peak_reserved;
  }
  for (auto& [device, m] : mem) {
    m.device = device;
    d.memory.push_back(m);
  }
  return d;
}

namespace {

std::string ratio(double a, double b) { return a > 0 ? format_fixed(b / a, 2) + "x" : "-"; }
std::string time_or_dash(const std::optional<OpStats>& o, std::int64_t OpStats::*m) {
  return o ? format_time(static_cast<double>((*o).*m)) : "-";
}
std::string bytes_or_dash(const std::optional<std::int64_t>& v) { return v ? format_bytes(*v) : "-"; }
std::string bytes_delta(const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
  return format_signed_bytes(b.value_or(0) - a.value_or(0));
}

}  // namespace

void write_diff(const TraceDiff& d, std::size_t limit, std::ostream& out) {
  out << "A: " << d.path_a << "\nB: " << d.path_b << "\n\n";

  if (d.steps_a.count == 0 && d.steps_b.count == 0) {
    out << "step time: no steps in either trace\n\n";
  } else {
    out << "step time: " << d.steps_a.count << " steps in A, " << d.steps_b.count << " in B\n";
    auto row = [&](const char* what, double a, double b) -> std::vector<std::string> {
      return {what, format_time(a), format_time(b), format_signed_time(b - a), ratio(a, b)};
    };
    out << format_table({"", "A", "B", "delta", "B/A"}, {row("mean", d.steps_a.mean, d.steps_b.mean),
                                                         row("median", d.steps_a.median, d.steps_b.median)})
        << "\n";
  }

  const std::string kind(gb::trace::name(d.kind));
  if (d.ops.empty()) {
    out << "ops: no spans of kind " << kind << " in either trace\n\n";
  } else {
    out << "ops: spans of kind " << kind << ", by |delta of CPU total|\n";
    std::size_t shown = limit == 0 ? d.ops.size() : std::min(limit, d.ops.size());
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < shown; ++i) {
      const OpDelta& o = d.ops[i];
      std::string pct = !o.a ? "only in B"
                        : !o.b
                            ? "only in A"
                            : format_share(static_cast<double>(o.total_delta_ns()), static_cast<double>(o.a->total_ns));
      if (o.a && o.b && pct != "NaN" && o.total_delta_ns() >= 0) pct = "+" + pct;
      rows.push_back({o.name, o.a ? std::to_string(o.a->calls) : "-", o.b ? std::to_string(o.b->calls) : "-",
                      time_or_dash(o.a, &OpStats::total_ns), time_or_dash(o.b, &OpStats::total_ns),
                      time_or_dash(o.a, &OpStats::self_ns), time_or_dash(o.b, &OpStats::self_ns),
                      format_signed_time(static_cast<double>(o.total_delta_ns())), pct});
    }
    out << format_table(
        {"Name", "Calls A", "Calls B", "Total A", "Total B", "Self A", "Self B", "Total delta", "delta %"}, rows);
    if (shown < d.ops.size()) out << "  (" << d.ops.size() - shown << " more; --limit 0 shows all)\n";
    out << "\n";
  }

  if (d.memory.empty()) {
    out << "memory: no allocator events in either trace\n";
  } else {
    out << "memory: peaks per device\n";
    std::vector<std::vector<std::string>> rows;
    for (const MemoryDelta& m : d.memory)
      rows.push_back({device_name(m.device), bytes_or_dash(m.allocated_a), bytes_or_dash(m.allocated_b),
                      bytes_delta(m.allocated_a, m.allocated_b), bytes_or_dash(m.reserved_a),
                      bytes_or_dash(m.reserved_b), bytes_delta(m.reserved_a, m.reserved_b)});
    out << format_table({"device", "allocated A", "allocated B", "delta", "reserved A", "reserved B", "delta"}, rows);
  }
}

}  // namespace gb::query
