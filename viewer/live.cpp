// viewer/live.cpp — TraceModel's live following (contract in trace_model.h): the follower's polls on the loader
// thread (new rows by key range, short statements, nothing held between polls) and poll(), which takes them in on
// the UI thread without SQL.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "traces/query/follow.h"
#include "viewer/trace_model.h"

namespace gb::viewer {

using namespace gb::trace;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::int64_t kNoKey = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kStepBatch = 4096;  // rows per statement: each read transaction stays short
constexpr std::int64_t kMemoryBatch = 8192;
constexpr auto kStoppedGrace = std::chrono::seconds(3);  // stopped_by seen, closed_cleanly not yet

std::string end_text(const gb::query::WriterMeta& m) {
  if (m.stopped_by) return "ended: " + *m.stopped_by + (m.closed() ? "" : " (the file was not closed)");
  return "ended: closed cleanly";
}

}  // namespace

std::string LiveStatus::text(Clock::time_point now) const {
  if (ended) return end;
  if (!following) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, "live: %lld step%s, last new step %.1f s ago", static_cast<long long>(steps),
                steps == 1 ? "" : "s", std::chrono::duration<double>(now - last_step).count());
  return buf;
}

void TraceModel::follow() {
  // Below the training's threads (nice +10, this thread only, as the collector): a viewer following a run on the
  // same machine takes spare time; its polls are short, so only a busy machine delays them.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  // The cursors, from what the open and the loader read (nothing changes them until this thread hands a batch).
  std::int64_t last_step = kNoKey, detail_step = kNoKey, anomaly_id = kNoKey, window_id = kNoKey;
  std::int64_t memory_rowid = follow_memory_rowid_;
  if (const RunData& r = run_.data(); !r.empty()) last_step = r.steps.back();
  // steps() of a trace without a policy holds every step, read at open (before the run summary): its own cursor
  if (!detail_.all())
    detail_step = last_step;
  else if (!steps_.empty())
    detail_step = steps_.back().step;
  for (const AnomalyRow& a : anomalies_) anomaly_id = std::max(anomaly_id, a.record.id);
  for (const DetailWindowRecord& w : detail_.windows) window_id = std::max(window_id, w.id);
  const bool every_step = detail_.all();
  const std::string host = gb::query::this_host();
  std::optional<Clock::time_point> stopped_seen;
  bool gone_once = false;
  std::unique_ptr<gb::query::TraceDb> db;  // one connection, idle between polls (no statement, no transaction)
  for (;;) {
    {
      std::unique_lock<std::mutex> l(live_mutex_);
      live_cv_.wait_for(l, options_.poll, [&] { return stop_.load(); });
    }
    if (stop_) return;
    LiveBatch b;
    b.polls = 1;
    try {
      if (!db) db = std::make_unique<gb::query::TraceDb>(path());
      // Meta first: rows read after it are at least as new, so a closed trace is read to its end.
      const gb::query::WriterMeta m = gb::query::read_writer_meta(*db);
      db->each(
          "SELECT id, t_ns, step, kind, severity, span_id, node_id, module_id, param_id, value, message, rank, "
          "cause_id, cause FROM anomalies WHERE id > ?1 ORDER BY id",
          {anomaly_id}, [&](const gb::query::Row& r) {
            AnomalyRecord a;
            a.id = anomaly_id = r.i64(0);
            a.t_ns = r.i64(1), a.step = r.opt_i64(2), a.kind = static_cast<AnomalyKind>(r.i64(3));
            a.severity = static_cast<Severity>(r.i64(4)), a.span_id = r.opt_i64(5), a.node_id = r.opt_i64(6);
            a.module_id = r.opt_i64(7), a.param_id = r.opt_i64(8), a.value = r.opt_f64(9);
            a.message = std::string(r.text(10)), a.rank = r.opt_i64(11);
            a.cause_id = r.opt_i64(12), a.cause = std::string(r.text(13));
            b.anomalies.push_back(AnomalyRow{a, {}, {}, {}});
          });
      for (AnomalyRow& a : b.anomalies) a = anomaly_row(a.record, *db);
      for (std::int64_t n = kStepBatch; n == kStepBatch;) {
        n = 0;
        db->each(std::string("SELECT ") + kRunStepColumns + " FROM steps WHERE step > ?1 ORDER BY step LIMIT ?2",
                 {std::min(last_step, detail_step), kStepBatch}, [&](const gb::query::Row& row) {
                   ++n;
                   const RunStep s = run_step(row);
                   if (every_step && s.step > detail_step) {  // no detail policy: every step has its detail
                     StepRecord d;
                     d.step = detail_step = s.step, d.start_ns = s.start_ns, d.end_ns = s.end_ns,
                     d.loss = row.opt_f64(3);
                     d.lr = row.opt_f64(4);
                     b.steps_with_detail.push_back(d);
                   }
                   if (s.step > last_step) last_step = s.step, b.steps.push_back(s);
                 });
        if (!every_step) detail_step = last_step;
        if (stop_) return;
      }
      for (std::int64_t n = kMemoryBatch; n == kMemoryBatch;) {
        n = 0;
        db->each(
            "SELECT rowid, step, device, allocated_peak, reserved_peak FROM step_memory WHERE rowid > ?1 "
            "ORDER BY rowid LIMIT ?2",
            {memory_rowid, kMemoryBatch}, [&](const gb::query::Row& r) {
              ++n;
              memory_rowid = r.i64(0);
              RunMemoryRow m;
              m.step = r.i64(1);
              m.device = static_cast<int>(
                  std::clamp<std::int64_t>(r.i64(2), std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
              m.allocated_peak = static_cast<double>(r.i64(3)), m.reserved_peak = static_cast<double>(r.i64(4));
              b.memory.push_back(m);
            });
      }
      if (!every_step) {
        // New windows, after the steps: a window whose last step is not read yet waits for the next poll (its steps'
        // rows may come in a later commit than its own).
        std::vector<DetailWindowRecord> fresh;
        db->each(
            "SELECT id, first_step, last_step, start_ns, end_ns, reason FROM detail_windows WHERE id > ?1 "
            "ORDER BY id",
            {window_id}, [&](const gb::query::Row& r) {
              DetailWindowRecord w;
              w.id = r.i64(0), w.first_step = r.i64(1), w.last_step = r.i64(2), w.start_ns = r.i64(3);
              w.end_ns = r.i64(4), w.reason = static_cast<DetailReason>(r.i64(5));
              fresh.push_back(w);
            });
        for (const DetailWindowRecord& w : fresh) {
          if (w.last_step > last_step) break;
          window_id = w.id;
          if (w.last_step < w.first_step) continue;  // a damaged row holds no step
          b.windows.push_back(w);
          db->each("SELECT step, start_ns, end_ns, loss, lr FROM steps WHERE step BETWEEN ?1 AND ?2 ORDER BY step",
                   {w.first_step, w.last_step}, [&](const gb::query::Row& row) {
                     StepRecord s;
                     s.step = row.i64(0), s.start_ns = row.i64(1), s.end_ns = row.i64(2), s.loss = row.opt_f64(3);
                     s.lr = row.opt_f64(4);
                     b.steps_with_detail.push_back(s);
                   });
        }
      }
      // The end (the same rule as `glassbox watch`).
      const bool gone = gb::query::writer_gone(m, host);
      switch (gb::query::follow_state(m, gone)) {
        case gb::query::FollowState::closed:
          b.end = end_text(m);
          break;
        case gb::query::FollowState::stopped:
          if (!stopped_seen) stopped_seen = Clock::now();
          if (gone || Clock::now() - *stopped_seen >= kStoppedGrace) b.end = end_text(m);
          break;
        case gb::query::FollowState::died:
          // seen twice, with a fresh read of meta between: a writer that closed just after our meta read is not dead
          if (gone_once) b.end = "the writer died (killed or crashed)", b.died = true;
          gone_once = true;
          break;
        case gb::query::FollowState::writing:
          gone_once = false;
          break;
      }
    } catch (const std::exception&) {  // the file is briefly unreadable (or being replaced): the next poll retries
      db.reset();
    }
    const bool end = b.end.has_value();
    {
      std::lock_guard<std::mutex> l(live_mutex_);
      LiveBatch& p = pending_;
      auto move_into = [](auto& to, auto& from) {
        to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
      };
      move_into(p.steps, b.steps);
      move_into(p.memory, b.memory);
      move_into(p.anomalies, b.anomalies);
      move_into(p.windows, b.windows);
      move_into(p.steps_with_detail, b.steps_with_detail);
      if (b.end) p.end = b.end, p.died = b.died;
      p.polls += b.polls;
    }
    if (end) return;
  }
}

bool TraceModel::poll() {
  if (!follow_ || live_.ended) return false;
  LiveBatch b;
  {
    std::lock_guard<std::mutex> l(live_mutex_);
    if (!loaded_) return false;
    std::swap(b, pending_);
  }
  live_.polls += b.polls;
  bool changed = false;
  if (!b.steps.empty() || !b.memory.empty()) {
    if (run_.extend(b.steps, b.memory) > 0) live_.last_step = Clock::now(), changed = true;
    for (const RunStep& s : b.steps) end_ns_ = std::max(end_ns_, s.end_ns);
    changed = changed || !b.memory.empty();
  }
  live_.steps = static_cast<std::int64_t>(run_.data().size());
  if (!b.anomalies.empty()) {
    for (AnomalyRow& a : b.anomalies) anomalies_.push_back(std::move(a));
    order_anomalies();  // a new row may be the consequence of one already in
    changed = true;
  }
  if (!b.windows.empty()) {
    for (const DetailWindowRecord& w : b.windows) {
      auto at = std::upper_bound(detail_.windows.begin(), detail_.windows.end(), w,
                                 [](const DetailWindowRecord& x, const DetailWindowRecord& y) {
                                   return x.first_step != y.first_step ? x.first_step < y.first_step : x.id < y.id;
                                 });
      detail_.windows.insert(at, w);
    }
    changed = true;
  }
  if (!b.steps_with_detail.empty()) {
    auto by_step = [](const StepRecord& x, const StepRecord& y) { return x.step < y.step; };
    for (const StepRecord& s : b.steps_with_detail) steps_.push_back(s), end_ns_ = std::max(end_ns_, s.end_ns);
    if (!std::is_sorted(steps_.begin(), steps_.end(), by_step)) {  // a window before a later one already in
      std::stable_sort(steps_.begin(), steps_.end(), by_step);
      steps_.erase(std::unique(steps_.begin(), steps_.end(),
                               [](const StepRecord& x, const StepRecord& y) { return x.step == y.step; }),
                   steps_.end());
    }
    changed = true;
  }
  if (b.end) {
    live_.following = false;
    live_.ended = true;
    live_.died = b.died;
    live_.end = *b.end;
    changed = true;
  }
  return changed;
}

}  // namespace gb::viewer
