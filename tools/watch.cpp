// tools/watch.cpp — `glassbox watch`: polls a trace being written (a fresh, short-lived connection each poll), reads
// the new rows by key range, and writes the lines in step order.
#include "tools/watch.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "tools/story.h"
#include "traces/error.h"
#include "traces/query/follow.h"
#include "traces/query/format.h"
#include "traces/query/memory.h"
#include "traces/query/run_summary.h"
#include "traces/query/trace_db.h"
#include "traces/schema.h"

namespace gb::tools {

using namespace gb::query;

std::int64_t choose_every(double mean_ns) {
  if (!(mean_ns > 0)) return 100;
  const double n = 2e9 / mean_ns;
  if (n <= 1) return 1;
  // the nearest of 1, 2, 5 x 10^k, in log scale
  const double k = std::floor(std::log10(n));
  double best = 1, best_d = std::numeric_limits<double>::max();
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    const double c = m * std::pow(10.0, k), d = std::abs(std::log(c / n));
    if (d < best_d) best = c, best_d = d;
  }
  return best > 1e15 ? 1'000'000'000'000'000 : static_cast<std::int64_t>(std::llround(best));
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::int64_t kStepBatch = 1024;    // steps per statement: a poll's transactions stay short
constexpr std::int64_t kMemoryBatch = 4096;  // step_memory rows per statement
constexpr std::int64_t kNoKey = std::numeric_limits<std::int64_t>::min();
constexpr auto kStoppedGrace = std::chrono::seconds(3);  // stopped_by seen, closed_cleanly not yet: wait this long

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

using Meta = WriterMeta;  // traces/query/follow.h: read_writer_meta, writer_gone, this_host

struct StepRow {
  std::int64_t step = 0;
  double dur_ns = 0;
  std::optional<double> loss, grad_norm;
  std::optional<std::int64_t> samples, tokens;
};

struct MemoryRow {
  std::int64_t step = 0;
  int device = 0;
  std::int64_t allocated_peak = 0;
};

class Watcher {
 public:
  Watcher(std::string path, const WatchOptions& o, std::ostream& out)
      : path_(std::move(path)), o_(o), out_(out), host_(this_host()) {
    every_ = o.every > 0 ? o.every : 0;
  }

  WatchResult run() {
    Clock::time_point failing_since{};
    bool failing = false, ever_opened = false;
    std::optional<Clock::time_point> stopped_seen;
    bool gone_once = false;
    for (;;) {
      if (o_.stop && o_.stop()) {
        out_.flush();
        return result(WatchEnd::stopped_by_caller);
      }
      std::optional<TraceDb> db;
      std::string error;
      try {
        db.emplace(path_);
      } catch (const gb::trace::Error& e) {
        error = e.what();
      }
      if (!db) {
        const auto now = Clock::now();
        if (!failing) failing_since = now, failing = true;
        if (std::chrono::duration<double>(now - failing_since).count() >= o_.wait_s) {
          const std::string secs = format_fixed(o_.wait_s, o_.wait_s == std::floor(o_.wait_s) ? 0 : 1);
          if (!ever_opened)
            throw gb::trace::Error("glassbox: watch: '" + path_ + "' did not become a readable trace within " + secs +
                                   " s (--wait): " + strip(error) + "; start the training first, or wait longer");
          throw gb::trace::Error("glassbox: watch: '" + path_ + "' could not be read for " + secs +
                                 " s: " + strip(error));
        }
        std::this_thread::sleep_for(o_.poll);
        continue;
      }
      failing = false;
      ever_opened = true;

      // Meta first, then the rows: rows read after meta are at least as new, so a closed trace is read to its end.
      const Meta m = read_writer_meta(*db);
      if (!header_done_) header(m);
      if (o_.tail && !positioned_) position(*db);
      positioned_ = true;
      read_rows(*db);
      out_.flush();

      if (m.closed_cleanly == "1") return finish(*db, m, WatchEnd::closed);
      const bool gone = writer_gone(m, host_);
      if (m.stopped_by) {
        if (!stopped_seen) stopped_seen = Clock::now();
        if (gone || Clock::now() - *stopped_seen >= kStoppedGrace) return finish(*db, m, WatchEnd::stopped);
      } else if (gone) {
        // seen twice, with a fresh read of meta between: a writer that closed just after our meta read is not dead
        if (gone_once) return finish(*db, m, WatchEnd::died);
        gone_once = true;
        continue;
      }
      gone_once = false;
      db.reset();  // nothing held between polls
      std::this_thread::sleep_for(o_.poll);
    }
  }

 private:
  static std::string strip(std::string s) {
    if (s.rfind("glassbox: ", 0) == 0) s = s.substr(10);
    return s;
  }

  WatchResult result(WatchEnd end) const {
    WatchResult r;
    r.end = end;
    r.steps = steps_read_;
    r.anomalies = anomalies_written_;
    r.every = every_;
    return r;
  }

  void header(const Meta& m) {
    header_done_ = true;
    out_ << "watching " << path_ << ": " << one_line(m.command.value_or("(command not recorded)")) << " on "
         << m.host.value_or("(host not recorded)");
    if (m.pid) out_ << " (pid " << *m.pid << ")";
    out_ << "; detail " << (m.detail ? *m.detail : std::string("in every step (no detail policy)"));
    if (!m.pid)
      out_ << "; no pid recorded: a killed run cannot be told from a quiet one (Ctrl-C ends the watch)";
    else if (m.host && *m.host != host_)
      out_ << "; written on another host: a killed run cannot be told from a quiet one (Ctrl-C ends the watch)";
    out_ << "\n";
  }

  // --tail: the rows already there are skipped.
  void position(const TraceDb& db) {
    db.each("SELECT max(step) FROM steps", [&](const Row& r) {
      if (!r.is_null(0)) last_step_ = r.i64(0);
    });
    memory_rowid_ = db.scalar("SELECT max(rowid) FROM step_memory");
    anomaly_id_ = db.scalar("SELECT max(id) FROM anomalies");
    window_id_ = db.scalar("SELECT max(id) FROM detail_windows");
    if (last_step_ != kNoKey)
      out_ << "(--tail: from step " << last_step_ + 1 << "; steps 0-" << last_step_ << " were already written)\n";
  }

  void read_rows(const TraceDb& db) {
    db.each("SELECT id, t_ns, step, kind, severity, message FROM anomalies WHERE id > ?1 ORDER BY id", {anomaly_id_},
            [&](const Row& r) {
              anomaly_id_ = r.i64(0);
              Anomaly a;
              a.step = r.opt_i64(2);
              a.text = "anomaly: " + std::string(gb::trace::name(static_cast<gb::trace::Severity>(r.i64(4)))) + " " +
                       std::string(gb::trace::name(static_cast<gb::trace::AnomalyKind>(r.i64(3)))) +
                       (a.step ? " at step " + std::to_string(*a.step) : std::string()) + ": " +
                       one_line(std::string(r.text(5)));
              anomalies_.emplace(a.step.value_or(kNoKey), std::move(a));
            });
    db.each("SELECT id, first_step, last_step, reason FROM detail_windows WHERE id > ?1 ORDER BY id", {window_id_},
            [&](const Row& r) {
              window_id_ = r.i64(0);
              const std::int64_t first = r.i64(1), last = r.i64(2);
              windows_.emplace(last,
                               "detail: " +
                                   (first == last ? "step " + std::to_string(first)
                                                  : "steps " + std::to_string(first) + "-" + std::to_string(last)) +
                                   " written (" +
                                   std::string(gb::trace::name(static_cast<gb::trace::DetailReason>(r.i64(3)))) + ")");
            });
    for (;;) {
      std::vector<StepRow> batch;
      db.each(
          "SELECT step, end_ns - start_ns, loss, grad_norm, samples, tokens FROM steps WHERE step > ?1 ORDER BY step "
          "LIMIT ?2",
          {last_step_, kStepBatch}, [&](const Row& r) {
            StepRow s;
            s.step = r.i64(0);
            s.dur_ns = r.f64(1);
            s.loss = r.opt_f64(2);
            s.grad_norm = r.opt_f64(3);
            s.samples = r.opt_i64(4);
            s.tokens = r.opt_i64(5);
            batch.push_back(s);
          });
      if (!batch.empty()) {
        last_step_ = batch.back().step;
        read_memory(db);
        if (every_ == 0) {  // about 2 s of training a line, from the median step of the first batch
          std::vector<double> d;
          for (const StepRow& s : batch) d.push_back(s.dur_ns);
          std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
          every_ = choose_every(d[d.size() / 2]);
          out_ << "(a line every " << every_ << (every_ == 1 ? " step" : " steps") << ": about 2 s of training at "
               << format_time(d[d.size() / 2]) << " a step; --every N to change)\n";
        }
      }
      for (const StepRow& s : batch) {
        add_step(s);
        events_up_to(s.step);
        if (line_steps_ >= every_) write_line();
      }
      if (static_cast<std::int64_t>(batch.size()) < kStepBatch) break;
      if (o_.stop && o_.stop()) return;
    }
    events_up_to(std::numeric_limits<std::int64_t>::max());  // caught up: the rest, whose steps are still running
  }

  // step_memory rows by rowid, in chunks, until past the last step read (they come in step order).
  void read_memory(const TraceDb& db) {
    for (;;) {
      std::int64_t n = 0, last_step = kNoKey;
      db.each("SELECT rowid, step, device, allocated_peak FROM step_memory WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
              {memory_rowid_, kMemoryBatch}, [&](const Row& r) {
                memory_rowid_ = r.i64(0);
                MemoryRow m;
                m.step = last_step = r.i64(1);
                m.device = static_cast<int>(std::clamp<std::int64_t>(r.i64(2), std::numeric_limits<int>::min(),
                                                                     std::numeric_limits<int>::max()));
                m.allocated_peak = r.i64(3);
                memory_.push_back(m);
                ++n;
              });
      if (n < kMemoryBatch || last_step > last_step_) return;
    }
  }

  void add_step(const StepRow& s) {
    ++steps_read_;
    ++line_steps_;
    line_last_ = s.step;
    line_dur_ += s.dur_ns;
    if (s.samples) line_samples_ += static_cast<double>(*s.samples), line_samples_ns_ += s.dur_ns;
    if (s.tokens) line_tokens_ += static_cast<double>(*s.tokens), line_tokens_ns_ += s.dur_ns;
    line_loss_ = s.loss;
    line_grad_norm_ = s.grad_norm;
  }

  void events_up_to(std::int64_t step) {
    while (!anomalies_.empty() && anomalies_.begin()->first <= step) {
      out_ << anomalies_.begin()->second.text << "\n";
      ++anomalies_written_;
      anomalies_.erase(anomalies_.begin());
    }
    while (!windows_.empty() && windows_.begin()->first <= step) {
      out_ << windows_.begin()->second << "\n";
      windows_.erase(windows_.begin());
    }
  }

  void write_line() {
    if (line_steps_ == 0) return;
    out_ << "step " << line_last_;
    if (line_loss_) out_ << "  loss " << format_number(*line_loss_);
    out_ << "  " << format_time(line_dur_ / static_cast<double>(line_steps_)) << "/step";
    if (line_tokens_ns_ > 0)
      out_ << "  " << format_fixed(line_tokens_ / (line_tokens_ns_ / 1e9), 0) << " tokens/s";
    else if (line_samples_ns_ > 0)
      out_ << "  " << format_fixed(line_samples_ / (line_samples_ns_ / 1e9), 0) << " samples/s";
    if (line_grad_norm_) out_ << "  grad norm " << format_number(*line_grad_norm_);
    std::map<int, std::int64_t> peaks;
    while (!memory_.empty() && memory_.front().step <= line_last_) {
      auto [it, fresh] = peaks.try_emplace(memory_.front().device, memory_.front().allocated_peak);
      if (!fresh) it->second = std::max(it->second, memory_.front().allocated_peak);
      memory_.pop_front();
    }
    const char* sep = "  peak allocated ";
    for (const auto& [device, bytes] : peaks) {
      out_ << sep << device_name(device) << " " << format_bytes(bytes);
      sep = ", ";
    }
    out_ << "\n";
    line_steps_ = 0;
    line_dur_ = line_samples_ = line_samples_ns_ = line_tokens_ = line_tokens_ns_ = 0;
  }

  WatchResult finish(const TraceDb& db, const Meta& m, WatchEnd end) {
    read_rows(db);  // anything committed since this poll's read
    write_line();   // the steps since the last line
    RunEnd e;
    e.closed_cleanly = m.closed_cleanly == "1";
    e.stopped_by = m.stopped_by;
    e.disk_full = m.disk_full;
    out_ << "ended: "
         << (end == WatchEnd::died ? "the run ended without closing its trace (killed or crashed); the last ~100 ms "
                                     "may be missing"
                                   : ending_text(e))
         << "\n";
    const RunSummary s = run_summary(db);
    out_ << "summary: " << s.steps << (s.steps == 1 ? " step" : " steps");
    if (s.steps > 0)
      out_ << " in " << format_time(s.step_time.total) << " (mean " << format_time(s.step_time.mean) << ")";
    if (s.loss) out_ << ", loss " << format_number(s.loss->first.value) << " -> " << format_number(s.loss->last.value);
    if (s.tokens_per_s)
      out_ << ", " << format_fixed(*s.tokens_per_s, 0) << " tokens/s";
    else if (s.samples_per_s)
      out_ << ", " << format_fixed(*s.samples_per_s, 0) << " samples/s";
    const std::int64_t anomalies = db.scalar("SELECT count(*) FROM anomalies");
    out_ << ", " << anomalies << (anomalies == 1 ? " anomaly" : " anomalies");
    if (!s.detail.all())
      out_ << ", " << s.steps_with_detail << " steps with detail in " << s.detail.windows.size()
           << (s.detail.windows.size() == 1 ? " window" : " windows");
    out_ << "; glassbox report " << path_ << " for the rest\n";
    out_.flush();
    return result(end);
  }

  struct Anomaly {
    std::optional<std::int64_t> step;
    std::string text;
  };

  std::string path_;
  const WatchOptions& o_;
  std::ostream& out_;
  std::string host_;
  bool header_done_ = false, positioned_ = false;
  std::int64_t every_ = 0;
  // cursors: the last key read of each table
  std::int64_t last_step_ = kNoKey, memory_rowid_ = 0, anomaly_id_ = kNoKey, window_id_ = kNoKey;
  // read, not yet written: anomalies by step (none first), windows by last step, memory rows in rowid order
  std::multimap<std::int64_t, Anomaly> anomalies_;
  std::multimap<std::int64_t, std::string> windows_;
  std::deque<MemoryRow> memory_;
  // the line being gathered
  std::int64_t line_steps_ = 0, line_last_ = 0;
  double line_dur_ = 0, line_samples_ = 0, line_samples_ns_ = 0, line_tokens_ = 0, line_tokens_ns_ = 0;
  std::optional<double> line_loss_, line_grad_norm_;
  std::int64_t steps_read_ = 0, anomalies_written_ = 0;
};

}  // namespace

WatchResult watch_trace(const std::string& path, const WatchOptions& options, std::ostream& out) {
  return Watcher(path, options, out).run();
}

}  // namespace gb::tools
