// tools/report.cpp — the text of `glassbox report`: the story (tools/story.cpp) first, then the sections whose
// numbers come from steps, op_table, memory and dataloader.
#include "tools/report.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "tools/story.h"
#include "traces/query/dataloader.h"
#include "traces/query/format.h"
#include "traces/query/memory.h"
#include "traces/query/ranks.h"
#include "traces/query/run_summary.h"
#include "traces/query/steps.h"
#include "traces/schema.h"

namespace gb::tools {

using namespace gb::query;

namespace {
std::string one_line(std::string s) {  // a message with newlines would break the table
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}
}  // namespace

namespace {

std::string at_step(const std::string& value, std::int64_t step) {
  return value + " (step " + std::to_string(step) + ")";
}

std::string per_second(double v, const char* unit) {
  return format_fixed(v, v < 1000 ? 1 : 0) + " " + unit + "/s";
}

// "N of M steps" with a share when both are known.
std::string of_steps(std::int64_t n, std::int64_t total) {
  return std::to_string(n) + " of " + std::to_string(total) + (total == 1 ? " step" : " steps");
}

void summary_row(const char* label, const std::string& text, std::ostream& out) {
  out << "  " << label << std::string(12 - std::string_view(label).size(), ' ') << text << "\n";
}

}  // namespace

void write_run_summary_section(const TraceDb& db, std::ostream& out) {
  if (!db.reader().meta("detail")) return;
  const RunSummary s = run_summary(db);
  out << "run summary: " << s.steps << (s.steps == 1 ? " step" : " steps");
  if (s.steps > 0) out << " (" << s.first_step << "-" << s.last_step << ")";
  out << ", every one summarised; detail policy " << (s.detail.policy.empty() ? "(empty)" : s.detail.policy) << "\n";
  if (s.steps == 0) {
    out << "  no steps rows: nothing to summarise\n\n";
    return;
  }
  const Summary& t = s.step_time;
  summary_row("step time", "mean " + format_time(t.mean) + ", median " + format_time(t.median) + ", p90 " +
                               format_time(t.p90) + ", min " + format_time(t.min) + ", max " + format_time(t.max) +
                               ", std " + format_time(t.std),
              out);
  if (s.phases) {
    const Phases& p = *s.phases;
    summary_row("phases", "data " + format_share(p.data_ns, p.total_ns) + ", forward " +
                              format_share(p.forward_ns, p.total_ns) + ", backward " +
                              format_share(p.backward_ns, p.total_ns) + ", optimizer " +
                              format_share(p.optimizer_ns, p.total_ns) + " of " + format_time(p.total_ns) + " (" +
                              (p.steps == s.steps ? "every step" : of_steps(p.steps, s.steps) + " timed") + ")",
                out);
  } else {
    summary_row("phases", "unknown: no step has its data/forward/backward/optimizer times", out);
  }
  std::string tput;
  if (s.tokens_per_s)
    tput = per_second(*s.tokens_per_s, "tokens") +
           (s.tokens_steps == s.steps ? "" : " (over the " + of_steps(s.tokens_steps, s.steps) + " that say them)");
  if (s.samples_per_s)
    tput += (tput.empty() ? "" : "; ") + per_second(*s.samples_per_s, "samples") +
            (s.samples_steps == s.steps ? "" : " (over the " + of_steps(s.samples_steps, s.steps) + " that say them)");
  summary_row("throughput", tput.empty() ? "unknown: no step says its samples or tokens" : tput, out);
  if (s.loss) {
    const LossSummary& l = *s.loss;
    summary_row("loss",
                "first " + at_step(format_number(l.first.value), l.first.step) + ", last " +
                    at_step(format_number(l.last.value), l.last.step) + ", min " +
                    at_step(format_number(l.min.value), l.min.step) + ", median of the last " +
                    (l.tail_steps == 1 ? std::string("step ") : std::to_string(l.tail_steps) + " steps ") +
                    format_number(l.tail_median),
                out);
  } else {
    summary_row("loss", "unknown: no step has a loss", out);
  }
  if (s.grad_norm)
    summary_row("grad norm",
                "median " + format_number(s.grad_norm->median) + ", max " +
                    at_step(format_number(s.grad_norm->max.value), s.grad_norm->max.step) +
                    (s.grad_norm->steps == s.steps ? "" : " (" + of_steps(s.grad_norm->steps, s.steps) + ")"),
                out);
  else
    summary_row("grad norm", "unknown: no step has a grad_norm", out);
  if (s.memory.empty()) {
    summary_row("memory", "unknown: no step_memory rows", out);
  } else {
    summary_row("memory", "peaks over every step (step_memory)", out);
    std::vector<std::vector<std::string>> rows, cats;
    for (const DeviceStepMemory& d : s.memory) {
      rows.push_back({device_name(d.device), format_bytes(d.allocated_peak), std::to_string(d.allocated_peak_step),
                      format_bytes(d.reserved_peak), std::to_string(d.reserved_peak_step)});
      for (int c = 0; c < gb::trace::kMemCategories; ++c)
        if (const std::int64_t b = d.category_peaks[static_cast<std::size_t>(c)]; b > 0)
          cats.push_back({device_name(d.device), std::string(gb::trace::kMemCategoryNames[static_cast<std::size_t>(c)]),
                          format_bytes(b)});
    }
    out << format_table({"device", "allocated peak", "at step", "reserved peak", "at step"}, rows, 4);
    if (!cats.empty()) out << format_table({"device", "category", "peak"}, cats, 4, "llr");
  }
  summary_row("detail", of_steps(s.steps_with_detail, s.steps) + " have detail, in " +
                            std::to_string(s.detail.windows.size()) +
                            (s.detail.windows.size() == 1 ? " window" : " windows"),
              out);
  for (const std::string& line : describe_windows(s.detail)) out << "    " << line << "\n";
  if (s.events_outside_detail || s.recorder_dumps) {
    out << "    ";
    if (s.events_outside_detail)
      out << *s.events_outside_detail << " events of steps without detail were read and not written";
    if (s.events_outside_detail && s.recorder_dumps) out << "; ";
    if (s.recorder_dumps)
      out << "the flight recorder was written " << *s.recorder_dumps << (*s.recorder_dumps == 1 ? " time" : " times");
    out << "\n";
  }
  if (s.dropped_events.value_or(0) > 0) {
    std::string kinds;
    for (const auto& [kind, n] : s.shed_by_kind) kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(n);
    summary_row("shed", std::to_string(*s.dropped_events) + " detail events (" +
                            (kinds.empty() ? std::string("no shed_events.<kind> keys") : "by kind: " + kinds) +
                            "); every step's summary arrived",
                out);
  } else {
    summary_row("shed", "nothing shed: every step's summary and every window's detail arrived", out);
  }
  out << "\n";
}

namespace {
// Before the sections that read detail rows: which steps they cover.
void write_detail_scope(const TraceDb& db, std::ostream& out) {
  const DetailWindows d = detail_windows(db);
  if (d.all()) return;
  const std::int64_t steps = db.scalar("SELECT count(*) FROM steps"), with = d.steps_with_detail();
  if (with >= steps)
    out << "detail: every step has its detail (" << d.windows.size() << (d.windows.size() == 1 ? " window" : " windows")
        << "): the sections below cover the whole run\n\n";
  else
    out << "detail: the sections below (ops, memory, data-loader) cover only the " << of_steps(with, steps)
        << " with detail; the run summary above covers every step\n\n";
}
}  // namespace

void write_run_section(const TraceDb& db, std::ostream& out) {
  const gb::trace::Reader& r = db.reader();
  out << "run: " << db.path() << " (schema version " << r.schema_version() << ")\n";
  std::vector<std::vector<std::string>> rows;
  for (const char* key : {"command", "host", "started_at", "glassbox_version", "device_name"})
    rows.push_back({key, r.meta(key).value_or("(not recorded)")});
  rows.push_back({"closed_cleanly", r.meta("closed_cleanly") == "1"
                                        ? "yes"
                                        : "no: the writer did not finish (killed or crashed); the last ~100 ms may be "
                                          "missing"});
  std::string stopped = one_line(r.meta("stopped_by").value_or("(not recorded)"));  // an exception's text may be long
  if (stopped.size() > 160) stopped = stopped.substr(0, 157) + "...";
  rows.push_back({"stopped_by", stopped});
  std::optional<std::int64_t> dropped = db.meta_int("dropped_events");
  rows.push_back({"dropped_events", !dropped       ? "0"
                                    : *dropped > 0 ? std::to_string(*dropped) + " (rings were full: raise the ring "
                                                                                "size, or use the blocking mode)"
                                                   : std::to_string(*dropped)});
  for (const auto& row : rows) {
    out << "  " << row[0] << std::string(18 - row[0].size(), ' ') << row[1] << "\n";
  }
  out << "\n";
}

void write_steps_section(const TraceDb& db, std::ostream& out) {
  StepTimes times = step_durations(db);
  if (times.durations_ns.empty()) {
    out << "steps: no steps in this trace (no steps rows, no step spans)\n\n";
    return;
  }
  Summary s = summarize(times.durations_ns);
  out << "steps: " << s.count << " (from the " << times.source << ")\n";
  out << format_table({"count", "mean", "median", "p90", "min", "max", "std"},
                      {{std::to_string(s.count), format_time(s.mean), format_time(s.median), format_time(s.p90),
                        format_time(s.min), format_time(s.max), format_time(s.std)}},
                      2, "r");
  out << "\n";
}

constexpr double kClockSlackNs = 1000;  // rounding and drift over a barrier, beyond the merge's bound

void write_ranks_section(const TraceDb& db, std::ostream& out) {
  const RankComparison c = compare_ranks(db);
  if (c.ranks.empty()) {  // one rank's own trace says how to see it beside the others; a single process, nothing
    if (std::optional<std::int64_t> rank = db.meta_int("rank"))
      out << "ranks: this is rank " << *rank << " of " << db.meta_int("world_size").value_or(0)
          << "; to compare the ranks, merge their traces: glassbox merge run.rank*.db -o run.db\n\n";
    return;
  }
  out << "ranks: " << c.ranks.size() << ", merged on one clock";
  for (const RankRow& r : c.ranks)
    if (r.aligned_by != "reference") out << "; rank " << r.rank << " aligned by " << r.aligned_by;
  if (c.barrier_gap_ns) {
    out << "; the program's " << c.barriers << (c.barriers == 1 ? " barrier" : " barriers");
    if (*c.barrier_gap_ns <= 0)
      out << " overlap on every rank (ends within " << format_time(*c.barrier_spread_ns) << ")";
    else if (c.clock_error_ns && *c.barrier_gap_ns <= *c.clock_error_ns + kClockSlackNs)
      out << " overlap on every rank within the clocks' \xc2\xb1" << format_time(*c.clock_error_ns) << " (a gap of "
          << format_time(*c.barrier_gap_ns) << ")";
    else
      out << " do not overlap on every rank: a gap of " << format_time(*c.barrier_gap_ns)
          << " (the clocks disagree by at least that)";
  }
  out << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const RankRow& r : c.ranks) {
    auto share = [](double part, double whole) { return whole > 0 ? format_share(part, whole) : std::string("-"); };
    rows.push_back({std::to_string(r.rank), std::to_string(r.steps.count), format_time(r.steps.median),
                    format_time(r.steps.mean), std::to_string(r.collectives), format_time(r.collective_ns),
                    format_time(r.waited_ns), format_time(r.blocked_ns), share(r.overlap_ns, r.allreduce_ns),
                    std::to_string(r.last_arrivals)});
  }
  out << format_table({"rank", "steps", "median step", "mean step", "collectives", "in collectives",
                       "waiting for others", "blocked in wait", "all-reduce during backward", "arrived last"},
                      rows, 2, "rrrrrrrrrr");
  if (c.straggler) {
    const RankRow& s =
        *std::find_if(c.ranks.begin(), c.ranks.end(), [&](const RankRow& r) { return r.rank == *c.straggler; });
    out << "  straggler: rank " << s.rank << ": it arrived last at " << s.last_arrivals << " of " << c.matched
        << " collectives; the others waited a median " << format_time(c.straggler_median_ns) << " for it each time ("
        << format_share(c.straggler_share, 1.0) << " of a step), " << format_time(s.caused_ns) << " in all\n";
  } else if (c.matched > 0) {
    out << "  no straggler: over " << c.matched
        << " collectives the ranks arrived last in turn, or kept the others "
           "waiting briefly\n";
  } else {
    out << "  no collective ran inside a step on every rank: nothing to compare arrivals by\n";
  }
  out << "\n";
}

void write_ops_section(const TraceDb& db, const ReportOptions& options, std::ostream& out) {
  const std::string kind(gb::trace::name(options.kind));
  OpTable t = op_table(db, options.kind);
  if (t.rows.empty()) {
    out << "ops: no spans of kind " << kind << " in this trace\n\n";
    return;
  }
  sort_ops(t.rows, options.sort);
  out << "ops: spans of kind " << kind << ", sorted by " << op_sort_names()[static_cast<std::size_t>(options.sort)]
      << "\n";
  out << render_op_table(t, options.limit) << "\n";
}

void write_memory_section(const TraceDb& db, std::ostream& out) {
  MemoryPeaks m = memory_peaks(db);
  if (m.events == 0) {
    out << "memory: no allocator events in this trace\n\n";
    return;
  }
  out << "memory: " << m.events << " allocator events; peaks per device\n";
  std::vector<std::vector<std::string>> rows;
  for (const DeviceMemory& d : m.devices)
    rows.push_back({device_name(d.device), d.context ? format_bytes(*d.context) : "-", format_bytes(d.peak_reserved),
                    format_bytes(d.peak_allocated), format_bytes(d.cached_at_peak)});
  out << format_table({"device", "context", "peak reserved", "peak allocated", "cached at allocated peak"}, rows);
  rows.clear();
  for (const CategoryPeak& c : m.categories)
    rows.push_back({device_name(c.device), std::string(gb::trace::name(c.category)), format_bytes(c.peak)});
  if (rows.empty()) {
    out << "  no alloc events, so no per-category peaks\n\n";
    return;
  }
  out << "  peak allocated per category\n"
      << format_table({"device", "category", "peak allocated"}, rows, 4, "llr") << "\n";
}

void write_dataloader_section(const TraceDb& db, std::ostream& out) {
  DataLoaderSummary d = dataloader_summary(db);
  if (d.spans == 0) {
    out << "data-loader: no dataloader spans in this trace\n\n";
    return;
  }
  out << "data-loader: " << d.spans << " stage spans; ";
  if (d.step_total_ns > 0)
    out << "waiting for data took " << format_share(static_cast<double>(d.wait_ns), d.step_total_ns)
        << " of step time (" << format_time(static_cast<double>(d.wait_ns)) << " of " << format_time(d.step_total_ns)
        << ")\n";
  else
    out << "waiting for data took " << format_time(static_cast<double>(d.wait_ns + d.wait_outside_ns))
        << " (no step time to compare)\n";
  if (d.step_total_ns > 0) out << "  " << data_bound_verdict(d) << "\n";
  if (d.step_total_ns > 0 && d.wait_outside_ns > 0)
    out << "  and " << format_time(static_cast<double>(d.wait_outside_ns))
        << " waiting outside any step (the first batch before step one, an evaluation loader): not in the share\n";
  std::vector<std::vector<std::string>> rows = {{"wait", format_time(static_cast<double>(d.wait_ns))},
                                                {"sample", format_time(static_cast<double>(d.sample_ns))},
                                                {"fetch", format_time(static_cast<double>(d.fetch_ns))},
                                                {"collate", format_time(static_cast<double>(d.collate_ns))},
                                                {"pin", format_time(static_cast<double>(d.pin_ns))},
                                                {"transfer", format_time(static_cast<double>(d.transfer_ns))}};
  if (d.wait_outside_ns > 0) rows.insert(rows.begin() + 1, {"wait outside steps", format_time(static_cast<double>(d.wait_outside_ns))});
  if (d.other_ns > 0) rows.push_back({"other", format_time(static_cast<double>(d.other_ns))});
  out << format_table({"stage", "total"}, rows) << "\n";
}

void write_anomalies_section(const TraceDb& db, std::size_t limit, std::ostream& out) {
  std::vector<gb::trace::AnomalyRecord> all = db.reader().anomalies();
  if (all.empty()) {
    out << "anomalies: none\n\n";
    return;
  }
  std::size_t shown = limit == 0 ? all.size() : std::min(limit, all.size());
  out << "anomalies: " << all.size() << "\n";
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < shown; ++i) {
    const gb::trace::AnomalyRecord& a = all[i];
    rows.push_back({format_time(static_cast<double>(a.t_ns)), a.step ? std::to_string(*a.step) : "-",
                    std::string(gb::trace::name(a.kind)), std::string(gb::trace::name(a.severity)),
                    one_line(a.message)});
  }
  out << format_table({"time", "step", "kind", "severity", "message"}, rows, 2, "rrlll");
  if (shown < all.size()) out << "  (" << all.size() - shown << " more; --limit 0 shows all)\n";
  out << "\n";
}

void write_report(const TraceDb& db, const ReportOptions& options, std::ostream& out) {
  write_story(db, out);
  write_run_summary_section(db, out);
  write_run_section(db, out);
  write_steps_section(db, out);
  write_ranks_section(db, out);
  write_detail_scope(db, out);
  write_ops_section(db, options, out);
  write_memory_section(db, out);
  write_dataloader_section(db, out);
  write_anomalies_section(db, options.limit, out);
}

}  // namespace gb::tools
