// tools/check.cpp — one SQL query per rule (the offending ids), plus one replay of the allocator events.
#include "tools/check.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "traces/query/detail.h"
#include "traces/query/memory_replay.h"
#include "traces/query/run_summary.h"
#include "tools/story.h"
#include "traces/records.h"

namespace gb::tools {

using namespace gb::query;

namespace {

constexpr std::size_t kExamples = 5;

// Runs sql (one column: the offending id) and records a finding when it returns rows.
void rule(const TraceDb& db, std::vector<Finding>& into, std::string what, const char* sql) {
  Finding f{std::move(what), 0, {}};
  db.each(sql, [&](const Row& r) {
    if (f.examples.size() < kExamples) f.examples.push_back(r.i64(0));
    ++f.count;
  });
  if (f.count > 0) into.push_back(std::move(f));
}

// Replays alloc/free per device in time order (memory_replay.h), with resume/live (a long run's detail resuming
// after a gap says what was live then): a free must find a live block.
void check_frees(const TraceDb& db, std::vector<Finding>& problems) {
  using gb::trace::MemAction;
  Finding f{"memory_events frees with no live alloc at that (device, addr)", 0, {}};
  std::map<std::int64_t, MemoryReplay<>> replays;
  db.each(
      "SELECT id, action, device, addr FROM memory_events WHERE action IN (?1, ?2, ?3, ?4) ORDER BY device, t_ns, id",
      {static_cast<std::int64_t>(MemAction::alloc), static_cast<std::int64_t>(MemAction::free),
       static_cast<std::int64_t>(MemAction::resume), static_cast<std::int64_t>(MemAction::live)},
      [&](const Row& r) {
        if (!replays[r.i64(2)].apply(mem_action(r.i64(1)), r.i64(3), 0, gb::trace::MemCategory::unknown)) {
          if (f.examples.size() < kExamples) f.examples.push_back(r.i64(0));
          ++f.count;
        }
      });
  if (f.count > 0) problems.push_back(std::move(f));
}

// Counts a row (keeping its id as an example); into() adds the finding when it counted any.
struct Tally {
  Finding f;
  void operator()(std::int64_t id) {
    if (f.examples.size() < kExamples) f.examples.push_back(id);
    ++f.count;
  }
  void into(std::vector<Finding>& v) {
    if (f.count > 0) v.push_back(std::move(f));
  }
};

// A long run's trace (meta detail): its windows are sound, and its detail rows lie inside them (detail.h's rule).
void check_detail(const TraceDb& db, std::vector<Finding>& p) {
  const std::optional<std::string> policy = db.reader().meta("detail");
  if (!policy) return;
  if (!parse_detail_policy(*policy)) {
    std::string shown = policy->substr(0, 80);  // one line, whatever a damaged file holds
    for (char& ch : shown)
      if (ch == '\n' || ch == '\r') ch = ' ';
    p.push_back({"meta detail '" + shown +
                     "' is neither 'full' nor 'first=F,every=N,window=W,recorder=M,recorder_mb=B[,after=A]'",
                 0,
                 {}});
  }
  rule(db, p, "detail_windows rows whose first_step is after their last_step",
       "SELECT id FROM detail_windows WHERE first_step > last_step ORDER BY id");
  rule(db, p, "detail_windows rows that overlap an earlier window (windows never overlap)", R"sql(
    SELECT id FROM (SELECT id, first_step, max(last_step) OVER (ORDER BY first_step, id ROWS BETWEEN UNBOUNDED
                    PRECEDING AND 1 PRECEDING) AS before FROM detail_windows WHERE first_step <= last_step)
    WHERE first_step <= before ORDER BY id)sql");
  rule(db, p,
       "detail_windows rows of an unknown reason (reasons are 0.." +
           std::to_string(gb::trace::kDetailReasonNames.size() - 1) + ")",
       ("SELECT id FROM detail_windows WHERE reason < 0 OR reason >= " +
        std::to_string(gb::trace::kDetailReasonNames.size()) + " ORDER BY id")
           .c_str());

  const DetailWindows d = detail_windows(db);
  auto outside = [&](const char* what, const char* sql) {
    Tally t{{std::string(what) + " (detail outside the detail windows)", 0, {}}};
    db.each(sql, [&](const Row& r) {
      if (!d.has_detail(r.i64(1))) t(r.i64(0));
    });
    t.into(p);
  };
  outside("spans of a step outside every detail window",  // a step's own span (kind 6) is the summary: every step
          "SELECT id, step FROM spans WHERE step IS NOT NULL AND kind != 6 ORDER BY id");
  outside("instants of a step outside every detail window",
          "SELECT id, step FROM instants WHERE step IS NOT NULL ORDER BY id");
  outside("op_details rows whose span's step is outside every detail window",
          "SELECT o.span_id, s.step FROM op_details o JOIN spans s ON s.id = o.span_id WHERE s.step IS NOT NULL "
          "ORDER BY o.span_id");

  // memory_events have no step: their time must lie in [start_ns, end_ns] of a window (the resume and live rows that
  // open a window sit at its start_ns). Windows by start, each with the latest end up to it.
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;  // start_ns, the largest end_ns of the windows up to it
  for (const gb::trace::DetailWindowRecord& w : d.windows) spans.emplace_back(w.start_ns, w.end_ns);
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i) spans[i].second = std::max(spans[i].second, spans[i - 1].second);
  Tally mem{{"memory_events outside the time of every detail window (detail outside the detail windows)", 0, {}}};
  db.each("SELECT id, t_ns FROM memory_events ORDER BY id", [&](const Row& r) {
    const std::int64_t t = r.i64(1);
    auto it = std::upper_bound(spans.begin(), spans.end(), t, [](std::int64_t x, const auto& w) { return x < w.first; });
    if (it == spans.begin() || std::prev(it)->second < t) mem(r.i64(0));
  });
  mem.into(p);
}

}  // namespace

CheckResult check_trace(const TraceDb& db) {
  CheckResult c;
  c.spans = db.scalar("SELECT COUNT(*) FROM spans");
  c.memory_events = db.scalar("SELECT COUNT(*) FROM memory_events");
  c.threads = db.scalar("SELECT COUNT(*) FROM threads");
  c.kernels = db.scalar("SELECT COUNT(*) FROM kernels");
  c.instants = db.scalar("SELECT COUNT(*) FROM instants");
  c.graph_nodes = db.scalar("SELECT COUNT(*) FROM graph_nodes");
  c.steps = db.scalar("SELECT COUNT(*) FROM steps");
  auto& p = c.problems;

  rule(db, p, "spans end before they start (dur_ns < 0)", "SELECT id FROM spans WHERE dur_ns < 0 ORDER BY id");
  rule(db, p, "span ids with n = 0 (ids are thread_id << 32 | n, n counts from 1)",
       "SELECT id FROM spans WHERE (id & 4294967295) = 0 ORDER BY id");
  rule(db, p, "spans on a thread that is not in threads (thread_id = id >> 32)",
       "SELECT id FROM spans WHERE thread_id NOT IN (SELECT id FROM threads) ORDER BY id");
  rule(db, p, "spans whose parent is on another thread",
       "SELECT id FROM spans WHERE parent_id IS NOT NULL AND (parent_id >> 32) != thread_id ORDER BY id");
  rule(db, p, "spans whose name_id is not in strings",
       "SELECT id FROM spans WHERE name_id NOT IN (SELECT id FROM strings) ORDER BY id");
  rule(db, p, "spans that start before the previous span of their thread (id order must be start order)", R"sql(
    SELECT id FROM (SELECT id, thread_id, start_ns, LAG(thread_id) OVER w AS prev_thread,
                           LAG(start_ns) OVER w AS prev_start FROM spans WINDOW w AS (ORDER BY id))
    WHERE prev_thread = thread_id AND start_ns < prev_start ORDER BY id)sql");
  check_frees(db, p);
  rule(db, p, "op_details rows whose span is missing",
       "SELECT span_id FROM op_details WHERE span_id NOT IN (SELECT id FROM spans) ORDER BY span_id");
  rule(db, p, "kernels rows whose span is missing",
       "SELECT span_id FROM kernels WHERE span_id NOT IN (SELECT id FROM spans) ORDER BY span_id");
  rule(db, p, "kernels whose launching span (launch_span_id) is missing",
       "SELECT span_id FROM kernels WHERE launch_span_id IS NOT NULL AND launch_span_id NOT IN (SELECT id FROM spans) "
       "ORDER BY span_id");
  rule(db, p, "collectives rows whose span is missing",
       "SELECT span_id FROM collectives WHERE span_id NOT IN (SELECT id FROM spans) ORDER BY span_id");
  rule(db, p, "collectives rows whose span is not of kind collective",
       ("SELECT c.span_id FROM collectives c JOIN spans s ON s.id = c.span_id WHERE s.kind != " +
        std::to_string(static_cast<int>(gb::trace::SpanKind::collective)) + " ORDER BY c.span_id")
           .c_str());
  rule(db, p, "rank_steps of a rank that is not in ranks (their steps)",
       "SELECT step FROM rank_steps WHERE rank NOT IN (SELECT rank FROM ranks) ORDER BY rank, step");
  rule(db, p, "threads of a rank that is not in ranks",
       "SELECT id FROM threads WHERE rank IS NOT NULL AND rank NOT IN (SELECT rank FROM ranks) ORDER BY id");
  rule(db, p, "instants on a thread that is not in threads",
       "SELECT id FROM instants WHERE thread_id NOT IN (SELECT id FROM threads) ORDER BY id");
  rule(db, p, "instants whose span is on another thread",
       "SELECT id FROM instants WHERE span_id IS NOT NULL AND (span_id >> 32) != thread_id ORDER BY id");
  rule(db, p, "instants whose name_id is not in strings",
       "SELECT id FROM instants WHERE name_id NOT IN (SELECT id FROM strings) ORDER BY id");
  rule(db, p, "counters whose name_id is not in strings (rowids)",
       "SELECT rowid FROM counters WHERE name_id NOT IN (SELECT id FROM strings) ORDER BY rowid");
  rule(db, p, "graph_nodes whose forward span is missing",
       "SELECT id FROM graph_nodes WHERE forward_span_id IS NOT NULL AND forward_span_id NOT IN (SELECT id FROM spans) "
       "ORDER BY id");
  rule(db, p, "graph_nodes whose name_id is not in strings",
       "SELECT id FROM graph_nodes WHERE name_id NOT IN (SELECT id FROM strings) ORDER BY id");
  rule(db, p, "graph_edges naming a missing graph_node (rowids)",
       "SELECT rowid FROM graph_edges WHERE src_node_id NOT IN (SELECT id FROM graph_nodes) "
       "OR dst_node_id NOT IN (SELECT id FROM graph_nodes) ORDER BY rowid");
  rule(db, p, "grad_stats naming a missing param (rowids)",
       "SELECT rowid FROM grad_stats WHERE param_id NOT IN (SELECT id FROM params) ORDER BY rowid");
  rule(db, p, "params naming a missing module",
       "SELECT id FROM params WHERE module_id NOT IN (SELECT id FROM modules) ORDER BY id");
  // Schema version 2 added kinds 7..11; a version 1 file holds 0..6 only, which the same range accepts.
  rule(db, p, "anomalies of an unknown kind (kinds are 0.." + std::to_string(gb::trace::kAnomalyKinds - 1) + ")",
       ("SELECT id FROM anomalies WHERE kind < 0 OR kind >= " + std::to_string(gb::trace::kAnomalyKinds) +
        " ORDER BY id")
           .c_str());
  rule(db, p, "anomalies of an unknown severity (0 info, 1 warning, 2 error)",
       "SELECT id FROM anomalies WHERE severity NOT IN (0, 1, 2) ORDER BY id");
  // Schema version 6: a cause is an anomaly found before this one (a chain has no cycle: ids grow along it).
  rule(db, p, "anomalies whose cause_id names no earlier anomaly",
       "SELECT a.id FROM anomalies a WHERE a.cause_id IS NOT NULL AND (a.cause_id >= a.id OR a.cause_id NOT IN "
       "(SELECT id FROM anomalies)) ORDER BY a.id");
  rule(db, p, "step_memory rows of a step that has no steps row (rowids)",
       "SELECT rowid FROM step_memory WHERE step NOT IN (SELECT step FROM steps) ORDER BY rowid");
  check_detail(db, p);

  auto& n = c.notes;
  rule(db, n,
       "spans never ended: the program stopped inside them (killed, interrupted, or an exception escaped); these "
       "missing parent ids are named by spans in the file",
       "SELECT DISTINCT parent_id FROM spans WHERE parent_id IS NOT NULL AND parent_id NOT IN (SELECT id FROM spans) "
       "ORDER BY parent_id");
  rule(db, n, "instants inside spans that never ended (their span is not in the file)",
       "SELECT id FROM instants WHERE span_id IS NOT NULL AND (span_id >> 32) = thread_id "
       "AND span_id NOT IN (SELECT id FROM spans) ORDER BY id");
  if (db.reader().meta("closed_cleanly") != "1")
    n.push_back(
        {"the trace was not closed cleanly (no meta closed_cleanly): the writer was killed or crashed, and "
         "its last ~100 ms may be missing",
         0,
         {}});
  if (is_disk_full(db.reader().meta("stopped_by"))) {
    const std::optional<std::string> where = db.reader().meta("disk_full");
    n.push_back({"the trace stopped on a full disk (meta stopped_by = disk full" +
                     (where ? "; disk_full: " + *where : std::string()) +
                     "): the run went on untraced, its later steps are not in the file",
                 0,
                 {}});
  }
  const bool long_run = db.reader().meta("detail").has_value();
  if (std::optional<std::int64_t> dropped = db.meta_int("dropped_events"); dropped && *dropped > 0 && long_run) {
    std::string kinds;
    for (const auto& [kind, count] : shed_events(db))
      kinds += (kinds.empty() ? "; by kind: " : ", ") + kind + " " + std::to_string(count);
    n.push_back({"detail events were shed because the collector fell behind (meta dropped_events" + kinds +
                     "); every step's summary arrived",
                 *dropped,
                 {}});
  } else if (dropped && *dropped > 0)
    n.push_back(
        {"events were dropped because a ring was full (meta dropped_events); raise the ring size or use "
         "the blocking mode",
         *dropped,
         {}});
  return c;
}

void write_check(const CheckResult& c, const std::string& path, std::ostream& out) {
  auto line = [&](const char* tag, const Finding& f) {
    out << tag << ": ";
    if (f.count > 0) out << f.count << " ";
    out << f.what;
    if (!f.examples.empty()) {
      out << " (e.g. ";
      for (std::size_t i = 0; i < f.examples.size(); ++i) out << (i ? ", " : "") << f.examples[i];
      out << ")";
    }
    out << "\n";
  };
  for (const Finding& f : c.problems) line("problem", f);
  for (const Finding& f : c.notes) line("note", f);
  if (!c.ok()) {
    out << c.problems.size() << (c.problems.size() == 1 ? " problem" : " problems") << " found in " << path << "\n";
    return;
  }
  out << "ok: " << c.spans << " spans, " << c.memory_events << " memory events, " << c.threads << " threads, "
      << c.kernels << " kernels, " << c.instants << " instants, " << c.graph_nodes << " graph nodes, " << c.steps
      << " steps; no problems";
  if (!c.notes.empty()) out << " (" << c.notes.size() << (c.notes.size() == 1 ? " note" : " notes") << ")";
  out << "\n";
}

}  // namespace gb::tools
