// tools/story.cpp — how a run ended (meta, oom_reports, memory_events oom rows, steps) and the text of the story:
// the ending, the out-of-memory failures (a leak across steps told as one, with the memory_growth alarm that
// foretold it), the first non-finite value, the chains of linked alarms and the other alarms by kind
// (traces/query/alarms.h).
#include "tools/story.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "traces/query/alarms.h"
#include "traces/query/format.h"
#include "traces/query/memory.h"
#include "traces/query/run_summary.h"
#include "traces/schema.h"

namespace gb::tools {

using namespace gb::query;

using gb::trace::AnomalyKind;
using gb::trace::Severity;

StopKind stop_kind(const std::optional<std::string>& stopped_by) {
  if (!stopped_by || *stopped_by == "exit" || *stopped_by == "session end") return StopKind::normal;
  if (stopped_by->starts_with("signal ")) return StopKind::signal;
  if (stopped_by->starts_with("uncaught exception") || *stopped_by == "std::terminate") return StopKind::failure;
  return StopKind::other;
}

bool is_disk_full(const std::optional<std::string>& stopped_by) { return stopped_by == "disk full"; }

namespace {

constexpr auto kOomAction = static_cast<std::int64_t>(gb::trace::MemAction::oom);

struct OomEvent {
  std::int64_t t_ns = 0;
  int device = 0;
  std::int64_t size = 0;
  gb::trace::OptId span_id;
  bool used = false;
};

// The step running at t: the steps row around it, else the step of the span that failed; when neither, the last
// step that ended before it.
void place_in_steps(const TraceDb& db, OutOfMemory& o, gb::trace::OptId span_id) {
  db.each("SELECT step FROM steps WHERE start_ns <= ?1 AND end_ns >= ?1 ORDER BY step LIMIT 1", {o.t_ns},
          [&](const Row& r) { o.step = r.i64(0); });
  if (!o.step && span_id)
    db.each("SELECT step FROM spans WHERE id = ?1", {*span_id}, [&](const Row& r) { o.step = r.opt_i64(0); });
  if (!o.step)
    db.each("SELECT max(step) FROM steps WHERE end_ns <= ?1", {o.t_ns},
            [&](const Row& r) { o.after_step = r.opt_i64(0); });
}

// A leak's OOM: the first memory_growth alarm raised before it, preferring one of the OOM's device (the alarm's
// message starts with the device's name).
void foretold_by(const TraceDb& db, OutOfMemory& o) {
  const std::string device = o.device ? device_name(*o.device) + " " : std::string();
  bool same_device = false;
  db.each("SELECT step, message FROM anomalies WHERE kind = ?1 AND t_ns <= ?2 ORDER BY t_ns, id",
          {static_cast<std::int64_t>(AnomalyKind::memory_growth), o.t_ns}, [&](const Row& r) {
            const bool same = !device.empty() && r.text(1).starts_with(device);
            if (o.growth_step && (same_device || !same)) return;
            o.growth_step = r.opt_i64(0).value_or(-1);
            o.growth_message = std::string(r.text(1));
            same_device = same;
          });
}

}  // namespace

RunEnd run_end(const TraceDb& db) {
  RunEnd e;
  const gb::trace::Reader& r = db.reader();
  e.closed_cleanly = r.meta("closed_cleanly") == "1";
  e.stopped_by = r.meta("stopped_by");
  e.dropped_events = db.meta_int("dropped_events").value_or(0);
  e.disk_full = r.meta("disk_full");
  e.long_run = r.meta("detail").has_value();
  if (e.long_run) e.shed_by_kind = shed_events(db);

  std::vector<OomEvent> events;  // few: one per failed allocation
  db.each("SELECT t_ns, device, size, span_id FROM memory_events WHERE action = ?1 ORDER BY t_ns, id", {kOomAction},
          [&](const Row& row) {
            events.push_back({row.i64(0), static_cast<int>(row.i64(1)), row.i64(2), row.opt_i64(3)});
          });
  // Each report takes the unused oom event nearest in time (the two are written by separate observers).
  auto nearest = [&](std::int64_t t) -> OomEvent* {
    OomEvent* best = nullptr;
    for (OomEvent& ev : events)
      if (!ev.used && (!best || std::llabs(ev.t_ns - t) < std::llabs(best->t_ns - t))) best = &ev;
    if (best) best->used = true;
    return best;
  };
  for (gb::trace::OomReportRecord& rep : r.all<gb::trace::OomReportRecord>()) {
    OutOfMemory o;
    o.t_ns = rep.t_ns;
    o.requested = rep.requested;
    gb::trace::OptId span;
    if (OomEvent* ev = nearest(rep.t_ns)) {
      o.device = ev->device;
      span = ev->span_id;
    }
    o.leak = rep.kept_bytes && *rep.kept_bytes > rep.allocated / 2;  // 2 * kept > allocated, no overflow
    o.report = std::move(rep);
    place_in_steps(db, o, span);
    if (o.leak) foretold_by(db, o);
    e.ooms.push_back(std::move(o));
  }
  for (const OomEvent& ev : events) {
    if (ev.used) continue;
    OutOfMemory o;
    o.t_ns = ev.t_ns;
    o.device = ev.device;
    o.requested = ev.size;
    place_in_steps(db, o, ev.span_id);
    e.ooms.push_back(std::move(o));
  }
  std::stable_sort(e.ooms.begin(), e.ooms.end(),
                   [](const OutOfMemory& a, const OutOfMemory& b) { return a.t_ns < b.t_ns; });
  return e;
}

namespace {

std::string first_line(const std::string& s) {
  std::size_t n = s.find_first_of("\r\n");
  return n == std::string::npos ? s : s.substr(0, n) + " ...";
}

std::string plural(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string step_text(const OutOfMemory& o) {
  if (o.step) return " (step " + std::to_string(*o.step) + ")";
  if (o.after_step) return " (after step " + std::to_string(*o.after_step) + " ended)";
  return "";
}

// "the trace stopped at step N: the disk was full (<error>)", from meta disk_full "step N: <error>".
std::string disk_full_text(const RunEnd& e) {
  std::string step, error = e.disk_full.value_or("");
  if (error.starts_with("step ")) {
    const std::size_t colon = error.find(": ");
    step = error.substr(5, colon == std::string::npos ? std::string::npos : colon - 5);
    error = colon == std::string::npos ? "" : error.substr(colon + 2);
  }
  return "the trace stopped " + (step.empty() ? std::string("early") : "at step " + step) + ": the disk was full" +
         (error.empty() ? "" : " (" + first_line(error) + ")");
}

std::string shed_text(const std::string& kind) {
  if (kind == "span") return "spans";
  if (kind == "instant") return "instants";
  if (kind == "counter") return "counters";
  if (kind == "memory_event") return "memory events";
  if (kind == "graph") return "graph rows";
  if (kind == "grad_stat") return "grad stats";
  if (kind == "op_details") return "op details";
  return kind;
}

void write_ending(const RunEnd& e, std::ostream& out) {
  out << "  ended: " << ending_text(e) << "\n";
  if (e.dropped_events > 0 && e.long_run) {
    out << "  the collector fell behind: " << plural(e.dropped_events, "detail event was", "detail events were")
        << " shed";
    for (std::size_t i = 0; i < e.shed_by_kind.size(); ++i)
      out << (i ? ", " : " (") << shed_text(e.shed_by_kind[i].first) << " " << e.shed_by_kind[i].second;
    out << (e.shed_by_kind.empty() ? "" : ")") << "; every step's summary arrived\n";
  } else if (e.dropped_events > 0)
    out << "  dropped events: " << e.dropped_events
        << " (rings were full: raise the ring size, or use the blocking mode); the trace misses them\n";
}

// "ran out of memory at step 91: 95.00 MiB of 98.00 MiB live were allocated by earlier steps and kept: a leak, not
// this step's peak" (o.leak: the report has kept_bytes).
std::string leak_text(const OutOfMemory& o) {
  const gb::trace::OomReportRecord& r = *o.report;
  const gb::trace::OptId step = r.step ? r.step : o.step;
  return "ran out of memory" + (step ? " at step " + std::to_string(*step) : std::string()) + ": " +
         format_bytes(*r.kept_bytes) + " of " + format_bytes(r.allocated) +
         " live were allocated by earlier steps and kept: a leak, not this step's peak";
}

void write_oom(const TraceDb& db, const RunEnd& e, std::ostream& out) {
  if (e.ooms.empty()) return;
  const OutOfMemory& o = e.ooms.front();
  out << "  ran out of memory at " << format_time(static_cast<double>(o.t_ns)) << step_text(o);
  if (o.device) out << " on " << device_name(*o.device);
  out << ": tried to allocate " << format_bytes(o.requested);
  if (o.report) {
    const gb::trace::OomReportRecord& r = *o.report;
    if (r.capacity > 0) out << "; " << format_bytes(r.free) << " free of " << format_bytes(r.capacity);
    out << "; " << format_bytes(r.allocated) << " allocated, " << format_bytes(r.reserved) << " reserved, largest free "
        << "block " << format_bytes(r.largest_free_block) << "\n";
    if (o.leak && o.growth_step)  // its findings, not its advice (the report below gives that)
      out << "  the memory_growth alarm at step " << *o.growth_step << " foretold it: "
          << first_line(o.growth_message.substr(0, o.growth_message.find(". "))) << "\n";
    std::istringstream lines(r.report);
    for (std::string line; std::getline(lines, line);) out << (line.empty() ? "" : "    ") << line << "\n";
  } else {
    out << " (no report stored: the trace has the allocator's oom event only)\n";
  }
  if (e.ooms.size() > 1)
    out << "  and "
        << plural(static_cast<std::int64_t>(e.ooms.size()) - 1, "more out-of-memory failure",
                  "more out-of-memory failures")
        << ", the last at " << format_time(static_cast<double>(e.ooms.back().t_ns)) << step_text(e.ooms.back()) << "\n";
  out << "  the viewer shows it: glassbox view " << db.path() << ", Memory panel, \"OOM report\" button\n";
}

std::string op_line(const char* label, const SpanInfo& op) {
  std::string s = std::string("    ") + label + " " + op.name + ":";
  if (op.input_shapes.empty() && op.dtypes.empty()) return s + " no input shapes recorded (no op_details row)\n";
  if (!op.input_shapes.empty()) s += " inputs " + op.input_shapes;
  if (!op.dtypes.empty()) s += (op.input_shapes.empty() ? " dtypes " : ", dtypes ") + op.dtypes;
  if (op.device) s += ", on " + device_name(*op.device);
  return s + "\n";
}

// Where the link `l` was found, as a chain line says it: "on fc1.weight", "in act2", "at op relu".
std::string place_text(const ChainLink& l) {
  if (l.place.empty()) return "";
  if (l.anomaly.param_id) return " on " + l.place;
  if (l.anomaly.module_id) return " in " + l.place;
  return " at " + l.place;
}

// "update_ratio (warning) on fc2.weight, step 0" (", rank R" in a merged trace).
std::string link_text(const ChainLink& l) {
  const gb::trace::AnomalyRecord& a = l.anomaly;
  const int sev = std::clamp(static_cast<int>(a.severity), 0, 2);
  return std::string(gb::trace::name(a.kind)) + " (" +
         std::string(gb::trace::name(static_cast<Severity>(sev))) + ")" + place_text(l) +
         (a.step ? ", step " + std::to_string(*a.step) : std::string()) +
         (a.rank ? ", rank " + std::to_string(*a.rank) : std::string());
}

void write_first_nonfinite(const FirstNonFinite& f, const std::vector<AlarmChain>& chains, std::ostream& out) {
  const gb::trace::AnomalyRecord& a = f.anomaly;
  // A merged trace says which rank's run went non-finite first (the others' follow through the all-reduce).
  const std::string step = (f.step ? ", step " + std::to_string(*f.step) : std::string()) +
                           (a.rank ? ", on rank " + std::to_string(*a.rank) : std::string());
  const std::string module = f.module.empty() ? "" : " in module " + f.module;
  out << "  first non-finite value: ";
  if (a.kind == AnomalyKind::nonfinite_forward) {
    out << "started in the forward pass at op " << (f.op ? f.op->name : "(not recorded)") << module << step << "\n";
    if (f.op) out << op_line("op", *f.op);
  } else if (a.kind == AnomalyKind::nonfinite_backward) {
    out << "started in the backward pass at node "
        << (f.node.empty() ? "(not recorded: the graph of this step was not stored)" : f.node);
    std::string where;
    if (f.forward_op) where = "forward op " + f.forward_op->name;
    if (!f.module.empty()) where += (where.empty() ? "module " : ", module ") + f.module;
    if (!where.empty()) out << " (" << where << ")";
    out << step << "\n";
    if (f.forward_op) out << op_line("forward op", *f.forward_op);
  } else {
    out << "first seen in the loss" << step << " (no op or backward node reported one before it)\n";
  }
  out << "    " << gb::trace::name(a.severity) << " at " << format_time(static_cast<double>(a.t_ns));
  if (a.kind == AnomalyKind::nonfinite_backward && a.severity == Severity::info)
    out << " (a later node masked it: the gradients that reached the parameters stayed finite)";
  out << ": " << first_line(a.message) << "\n";
  for (const AlarmChain& c : chains)  // a consequence of an earlier alarm: its root cause, told below
    for (const ChainLink& l : c.links)
      if (l.depth > 0 && l.anomaly.id == a.id)
        out << "    its root cause: " << link_text(c.links.front()) << " (linked alarms below)\n";
  if (f.later > 0)
    out << "    then " << plural(f.later, "more non-finite finding", "more non-finite findings") << " (below)\n";
}

constexpr std::size_t kChainsShown = 5, kLinksShown = 12;

// Each chain: the root cause, then every consequence under what caused it, deeper links further in, each with the
// evidence of its link ("because: ...").
void write_chains(const std::vector<AlarmChain>& chains, std::ostream& out) {
  if (chains.empty()) return;
  out << "  linked alarms (the root cause first, then what followed from it, each with the evidence):\n";
  for (std::size_t c = 0; c < chains.size() && c < kChainsShown; ++c) {
    const AlarmChain& chain = chains[c];
    for (std::size_t i = 0; i < chain.links.size() && i < kLinksShown; ++i) {
      const ChainLink& l = chain.links[i];
      if (l.depth == 0) {
        out << "    root cause: " << link_text(l) << ": " << first_line(l.anomaly.message) << "\n";
        continue;
      }
      const std::string indent(6 + 2 * static_cast<std::size_t>(std::min(l.depth - 1, 8)), ' ');
      out << indent << "-> " << link_text(l) << ": " << first_line(l.anomaly.message) << "\n"
          << indent << "   because: " << (l.anomaly.cause.empty() ? "(no evidence stored)" : first_line(l.anomaly.cause))
          << "\n";
    }
    if (chain.links.size() > kLinksShown)
      out << "      and " << plural(static_cast<std::int64_t>(chain.links.size() - kLinksShown), "more linked alarm",
                                    "more linked alarms")
          << " (the anomalies table lists every one)\n";
  }
  if (chains.size() > kChainsShown)
    out << "    and " << plural(static_cast<std::int64_t>(chains.size() - kChainsShown), "more chain", "more chains")
        << " of linked alarms (the viewer's Anomalies panel shows them all)\n";
}

std::string value_text(AnomalyKind k, double v) {
  switch (k) {
    case AnomalyKind::exploding_norm:
      return "largest norm " + format_number(v);
    case AnomalyKind::vanishing_norm:
      return "smallest norm " + format_number(v);
    case AnomalyKind::loss_spike:
      return "largest loss " + format_number(v);
    case AnomalyKind::memory_growth:
      return "fastest growth " + format_bytes(static_cast<std::int64_t>(v)) + " per step";
    case AnomalyKind::update_ratio:
      return "largest update/param ratio " + format_number(v);
    case AnomalyKind::dead_relu:
      return "most zeros " + format_share(v, 1.0);
    default:
      return "largest value " + format_number(v);
  }
}

std::string severity_text(const AlarmGroup& g) {
  static constexpr const char* kOne[] = {"info", "warning", "error"};
  static constexpr const char* kMany[] = {"info", "warnings", "errors"};
  int kinds = 0;
  for (std::int64_t n : g.by_severity) kinds += n > 0;
  if (kinds == 1) return plural(g.count, kOne[static_cast<int>(g.severity)], kMany[static_cast<int>(g.severity)]);
  std::string s = std::to_string(g.count) + " (";
  for (int i = 2, first = 1; i >= 0; --i) {
    const std::int64_t n = g.by_severity[static_cast<std::size_t>(i)];
    if (n == 0) continue;
    s += (first ? "" : ", ") + plural(n, kOne[i], kMany[i]);
    first = 0;
  }
  return s + ")";
}

void write_alarms(const std::vector<AlarmGroup>& groups, bool other, std::ostream& out) {
  if (groups.empty()) return;
  out << "  " << (other ? "other alarms" : "alarms") << " by kind (errors and warnings first):\n";
  for (const AlarmGroup& g : groups) {
    const std::string_view name = gb::trace::name(g.kind);
    out << "    " << name;
    if (name == "unknown") out << " (kind " << static_cast<int>(g.kind) << ", newer than this glassbox)";
    out << ": " << severity_text(g);
    if (g.first_step)
      out << (*g.first_step == *g.last_step
                  ? ", step " + std::to_string(*g.first_step)
                  : ", steps " + std::to_string(*g.first_step) + ".." + std::to_string(*g.last_step));
    if (g.worst) out << ", " << value_text(g.kind, *g.worst);
    for (std::size_t i = 0; i < g.where.size(); ++i) out << (i ? ", " : "; on ") << g.where[i];
    if (g.more_places > 0) out << " and " << g.more_places << " more";
    out << "\n      first: " << first_line(g.first_message) << "\n";
  }
}

}  // namespace

std::string ending_text(const RunEnd& e) {
  const StopKind k = stop_kind(e.stopped_by);
  if (is_disk_full(e.stopped_by))
    return disk_full_text(e) + "; the run went on untraced" +
           (e.closed_cleanly ? "" : "; the trace was not closed cleanly either");
  if (!e.closed_cleanly)
    return "the trace was not closed: the program was killed or crashed; the last ~100 ms may be missing";
  if (k == StopKind::normal) return "closed cleanly" + (e.stopped_by ? ", stopped by " + *e.stopped_by : "");
  return "stopped by " + first_line(*e.stopped_by) +
         (k == StopKind::signal    ? " (interrupted)"
          : k == StopKind::failure ? " (the program failed)"
                                   : "") +
         "; the trace was closed cleanly";
}

void write_story(const TraceDb& db, std::ostream& out) {
  const RunEnd e = run_end(db);
  const std::optional<FirstNonFinite> f = first_nonfinite(db);
  const std::vector<AlarmChain> chains = alarm_chains(db);
  const std::vector<AlarmGroup> groups =
      alarm_groups(db, f ? gb::trace::OptId(f->anomaly.id) : std::nullopt, chains);
  const StopKind stop = stop_kind(e.stopped_by);
  if (e.closed_cleanly && stop == StopKind::normal && e.dropped_events == 0 && e.ooms.empty() && !f && groups.empty() &&
      chains.empty()) {
    out << "healthy: closed cleanly, no anomalies, no out-of-memory\n\n";
    return;
  }
  std::vector<std::string> what;
  if (!e.ooms.empty()) what.push_back(e.ooms.front().leak ? leak_text(e.ooms.front()) : "ran out of memory");
  if (!e.closed_cleanly)
    what.push_back("killed or crashed (the trace was not closed)");
  else if (stop == StopKind::signal)
    what.push_back("interrupted by " + e.stopped_by->substr(7));
  else if (stop == StopKind::failure)
    what.push_back("failed with an uncaught exception");
  else if (is_disk_full(e.stopped_by))
    what.push_back(disk_full_text(e));
  else if (stop == StopKind::other)
    what.push_back("stopped by " + first_line(*e.stopped_by));
  if (f) what.push_back("non-finite values" + (f->step ? " from step " + std::to_string(*f->step) : std::string()));
  if (!chains.empty()) {  // "update_ratio at step 0 led to 2 more alarms"
    const gb::trace::AnomalyRecord& root = chains.front().links.front().anomaly;
    what.push_back(std::string(gb::trace::name(root.kind)) +
                   (root.step ? " at step " + std::to_string(*root.step) : std::string()) + " led to " +
                   plural(static_cast<std::int64_t>(chains.front().links.size()) - 1, "more alarm", "more alarms"));
    if (chains.size() > 1)
      what.push_back(plural(static_cast<std::int64_t>(chains.size()) - 1, "more chain", "more chains") +
                     " of linked alarms");
  }
  std::int64_t alarms = 0;
  for (const AlarmGroup& g : groups) alarms += g.count;
  const bool other = f || !chains.empty();
  if (alarms > 0)
    what.push_back(plural(alarms, other ? "other alarm" : "alarm", other ? "other alarms" : "alarms") + " of " +
                   plural(static_cast<std::int64_t>(groups.size()), "kind", "kinds"));
  if (e.dropped_events > 0)
    what.push_back(e.long_run ? plural(e.dropped_events, "detail event shed", "detail events shed")
                              : plural(e.dropped_events, "event dropped", "events dropped"));
  out << "story:";
  for (std::size_t i = 0; i < what.size(); ++i) out << (i ? "; " : " ") << what[i];
  out << "\n";
  write_ending(e, out);
  write_oom(db, e, out);
  if (f) write_first_nonfinite(*f, chains, out);
  write_chains(chains, out);
  write_alarms(groups, other, out);
  out << "\n";
}

}  // namespace gb::tools
