// tests/tools/watch_test.cpp — tools/watch.cpp: a trace followed while a writer thread writes it (long_run.h, about
// 1.5 s of 10 ms steps, started after the watch: the file does not exist yet), with the lines, their latency from
// the commit and the end; a finished trace from the start and with --tail; a run killed without closing its trace;
// a trace without detail or pid; a missing file with --wait 1; the line interval chosen from the step times.
#include "tools/watch.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <sstream>
#include <thread>

#include "long_run.h"
#include "synthetic_trace.h"
#include "tools_test_util.h"
#include "traces/error.h"
#include "traces/temp_dir.h"

using namespace gb::tools;
using toolstest::has;
using Clock = std::chrono::steady_clock;

namespace {

// An ostream that keeps each line with the moment it was completed (the watch writes from the test's thread; the
// writer thread never touches it, but the lock keeps the reads safe anyway).
class Lines : public std::streambuf {
 public:
  std::vector<std::pair<Clock::time_point, std::string>> lines() {
    std::lock_guard<std::mutex> l(m_);
    return lines_;
  }
  std::string text() {
    std::string t;
    for (const auto& [when, line] : lines()) t += line + "\n";
    return t;
  }
  // The first line starting with `prefix`, and when it was written.
  std::optional<std::pair<Clock::time_point, std::size_t>> find(const std::string& prefix) {
    std::lock_guard<std::mutex> l(m_);
    for (std::size_t i = 0; i < lines_.size(); ++i)
      if (lines_[i].second.rfind(prefix, 0) == 0) return std::make_pair(lines_[i].first, i);
    return std::nullopt;
  }

 protected:
  int overflow(int c) override {
    std::lock_guard<std::mutex> l(m_);
    if (c == '\n') {
      lines_.emplace_back(Clock::now(), cur_);
      cur_.clear();
    } else if (c != EOF) {
      cur_.push_back(static_cast<char>(c));
    }
    return c;
  }

 private:
  std::mutex m_;
  std::string cur_;
  std::vector<std::pair<Clock::time_point, std::string>> lines_;
};

std::string watched(const std::string& path, WatchOptions o, WatchResult* result = nullptr) {
  std::ostringstream out;
  WatchResult r = watch_trace(path, o, out);
  if (result) *result = r;
  return out.str();
}

}  // namespace

TEST_CASE(
    "a run being written: a line every 10 steps, the anomaly and windows as they come, within 1.5 s, then the end") {
  TempDir tmp;
  const std::string path = tmp.file("live.db");
  std::mutex m;
  Clock::time_point anomaly_committed, step99_committed;
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the watch starts first: no file yet
    long_run::Run r(path, {.steps = 150,
                           .windows = {{0, 4, gb::trace::DetailReason::first},
                                       {50, 51, gb::trace::DetailReason::periodic},
                                       {100, 101, gb::trace::DetailReason::periodic},
                                       {147, 149, gb::trace::DetailReason::end}},
                           .anomalies = {60}});
    for (std::int64_t s = 0; s < 150; ++s) {
      r.step(s);
      if (s == 60 || s == 99) {
        r.writer().flush();
        std::lock_guard<std::mutex> l(m);
        (s == 60 ? anomaly_committed : step99_committed) = Clock::now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    r.finish();
  });
  Lines lines;
  std::ostream out(&lines);
  WatchOptions o;
  o.every = 10;
  o.wait_s = 10;
  const auto started = Clock::now();
  o.stop = [&] { return Clock::now() - started > std::chrono::seconds(30); };  // a hung watch fails, never hangs
  const WatchResult r = watch_trace(path, o, out);
  writer.join();
  const std::string text = lines.text();
  INFO(text);
  CHECK(r.end == WatchEnd::closed);
  CHECK(r.steps == 150);
  CHECK(r.anomalies == 1);
  CHECK(r.every == 10);
  CHECK(text.rfind("watching " + path + ": ./train_long --steps 150 on ", 0) == 0);
  CHECK(has(text, " (pid " + std::to_string(::getpid()) +
                      "); detail first=5,every=20,window=2,recorder=3,"
                      "recorder_mb=8\n"));
  int step_lines = 0;
  for (const auto& [when, line] : lines.lines()) step_lines += line.rfind("step ", 0) == 0;
  CHECK(step_lines == 15);  // steps 9, 19, ..., 149
  CHECK(has(text,
            "step 99  loss 0.04  10.000ms/step  3200 samples/s  grad norm 4  peak allocated cpu 256 B, cuda:0 "
            "1.94 KiB\n"));
  CHECK(has(text, "detail: steps 0-4 written (first)\n"));
  CHECK(has(text, "detail: steps 100-101 written (periodic)\n"));
  CHECK(has(text, "detail: steps 147-149 written (end)\n"));
  CHECK(has(text,
            "ended: closed cleanly, stopped by exit\nsummary: 150 steps in 1.500s (mean 10.000ms), loss 4 -> "
            "0.02667, 3200 samples/s, 1 anomaly, 12 steps with detail in 4 windows; glassbox report "));
  const auto anomaly = lines.find("anomaly: warning loss_spike at step 60: ");
  const auto step59 = lines.find("step 59 "), step69 = lines.find("step 69 "), step99 = lines.find("step 99 ");
  REQUIRE(anomaly);
  REQUIRE(step59);
  REQUIRE(step69);
  REQUIRE(step99);
  CHECK(step59->second < anomaly->second);  // in step order
  CHECK(anomaly->second < step69->second);
  std::lock_guard<std::mutex> l(m);
  const double anomaly_latency = std::chrono::duration<double>(anomaly->first - anomaly_committed).count();
  const double step_latency = std::chrono::duration<double>(step99->first - step99_committed).count();
  MESSAGE("latency from commit to line: anomaly " << anomaly_latency << " s, step 99 " << step_latency << " s");
  CHECK(anomaly_latency <= 1.5);
  CHECK(step_latency <= 1.5);
}

TEST_CASE("a finished trace: every line from the start, then how it ended and a summary") {
  TempDir tmp;
  const std::string path = tmp.file("done.db");
  long_run::write(path);
  WatchOptions o;
  o.every = 20;
  WatchResult r;
  const std::string text = watched(path, o, &r);
  CHECK(r.end == WatchEnd::closed);
  const std::string header = text.substr(0, text.find('\n') + 1);
  CHECK(header.rfind("watching " + path + ": ./train_long --steps 60 on ", 0) == 0);
  CHECK(text.substr(header.size()) ==
        "detail: steps 0-4 written (first)\n"
        "anomaly: warning loss_spike at step 13: loss 0.285714 is 3.2x its running median\n"
        "step 19  loss 0.2  10.000ms/step  3200 samples/s  grad norm 4  peak allocated cpu 256 B, cuda:0 1.16 KiB\n"
        "detail: steps 20-21 written (periodic)\n"
        "step 39  loss 0.1  10.000ms/step  3200 samples/s  grad norm 4  peak allocated cpu 256 B, cuda:0 1.36 KiB\n"
        "detail: steps 40-41 written (periodic)\n"
        "detail: steps 57-59 written (end)\n"
        "step 59  loss 0.06667  10.000ms/step  3200 samples/s  grad norm 4  peak allocated cpu 256 B, cuda:0 1.55 KiB\n"
        "ended: closed cleanly, stopped by exit\n"
        "summary: 60 steps in 600.000ms (mean 10.000ms), loss 4 -> 0.06667, 3200 samples/s, 1 anomaly, 12 steps with "
        "detail in 4 windows; glassbox report " +
            path + " for the rest\n");

  // the interval chosen from the step times: 10 ms steps, a line every 200 (the run's last steps get theirs)
  const std::string chosen = watched(path, WatchOptions{});
  CHECK(has(chosen, "(a line every 200 steps: about 2 s of training at 10.000ms a step; --every N to change)\n"));
  CHECK(chosen.find("step 19 ") == std::string::npos);
  CHECK(has(chosen, "step 59  loss 0.06667"));

  WatchOptions tail;
  tail.tail = true;
  const std::string t = watched(path, tail);
  CHECK(has(t, "\n(--tail: from step 60; steps 0-59 were already written)\nended: closed cleanly, stopped by exit\n"));
  CHECK(t.find("anomaly:") == std::string::npos);
  CHECK(t.find("\nstep ") == std::string::npos);
}

TEST_CASE("a trace on a full disk ends with the story's words; an old trace without detail or pid is followed too") {
  TempDir tmp;
  const std::string path = tmp.file("full.db");
  {
    long_run::Run r(path, {.steps = 42, .anomalies = {}});
    for (std::int64_t s = 0; s < 42; ++s) r.step(s);
    r.writer().set_meta("disk_full", "step 41: No space left on device");
    r.finish("disk full");
  }
  WatchOptions o;
  o.every = 100;
  const std::string text = watched(path, o);
  CHECK(has(text, "step 41  loss 0.09524"));  // the last steps, fewer than 100
  CHECK(has(text,
            "ended: the trace stopped at step 41: the disk was full (No space left on device); the run went "
            "on untraced\n"));

  const std::string old = tmp.file("old.db");
  synthetic::write(old);
  const std::string t = watched(old, o);
  CHECK(has(t, ": ./train_mlp --steps 3 on "));
  CHECK(has(t,
            "; detail in every step (no detail policy); no pid recorded: a killed run cannot be told from a quiet "
            "one (Ctrl-C ends the watch)\n"));
  CHECK(has(t, "anomaly: warning loss_spike at step 2: loss 9.5 is 4.1x its running mean\n"));
  CHECK(has(t, "step 2  loss 1.5  12.000ms/step\n"));  // no samples, no grad norm, no step_memory: left out
  CHECK(has(t, "summary: 3 steps in 36.000ms (mean 12.000ms), loss 2.5 -> 1.5, 1 anomaly; glassbox report "));
}

TEST_CASE("a run killed without closing its trace: the writer's pid is gone, the watch says so and ends") {
  TempDir tmp;
  const std::string path = tmp.file("killed.db");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  ::waitpid(child, nullptr, 0);  // a pid that no longer exists
  long_run::Run r(path, {.steps = 30, .anomalies = {}});
  for (std::int64_t s = 0; s < 30; ++s) r.step(s);
  r.writer().set_meta("pid", std::to_string(child));
  r.writer().flush();  // what SIGKILL leaves: committed rows, no closed_cleanly
  WatchOptions o;
  o.every = 10;
  const auto started = Clock::now();
  o.stop = [&] { return Clock::now() - started > std::chrono::seconds(10); };
  WatchResult result;
  const std::string text = watched(path, o, &result);
  CHECK(result.end == WatchEnd::died);
  CHECK(has(text, "step 29  loss 0.1333"));
  CHECK(has(text,
            "ended: the run ended without closing its trace (killed or crashed); the last ~100 ms may be "
            "missing\nsummary: 30 steps"));
}

TEST_CASE("a run still going: the caller's stop ends the watch; nothing is held between polls") {
  TempDir tmp;
  const std::string path = tmp.file("going.db");
  long_run::Run r(path, {.steps = 100, .anomalies = {}});
  for (std::int64_t s = 0; s < 5; ++s) r.step(s);
  r.writer().flush();
  Lines lines;
  std::ostream out(&lines);
  WatchOptions o;
  o.every = 5;
  const auto started = Clock::now();
  o.stop = [&] {  // a few polls after the line came (or, on a machine far too slow, 10 s)
    const auto line = lines.find("step 4 ");
    return Clock::now() - (line ? line->first : started) > std::chrono::milliseconds(line ? 600 : 10'000);
  };
  const WatchResult result = watch_trace(path, o, out);
  const std::string text = lines.text();
  CHECK(result.end == WatchEnd::stopped_by_caller);
  CHECK(result.steps == 5);
  CHECK(has(text, "step 4  loss 0.8"));
  CHECK(text.find("ended:") == std::string::npos);
  // the writer was never blocked: it still commits and closes, and the file returns to one rollback-journal file
  for (std::int64_t s = 5; s < 100; ++s) r.step(s);
  r.finish();
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST_CASE("a trace being created (a SQLite file without the schema yet) is retried until it is one") {
  TempDir tmp;
  const std::string path = tmp.file("creating.db");
  toolstest::run_sql(path, "CREATE TABLE half (x INTEGER)");  // user_version 0: not a trace yet
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    long_run::write(path, {.steps = 10, .windows = {{0, 4, gb::trace::DetailReason::first}}, .anomalies = {}});
  });
  WatchOptions o;
  o.every = 5;
  o.wait_s = 10;
  const auto started = Clock::now();
  o.stop = [&] { return Clock::now() - started > std::chrono::seconds(20); };
  WatchResult r;
  const std::string text = watched(path, o, &r);
  writer.join();
  CHECK(r.end == WatchEnd::closed);
  CHECK(r.steps == 10);
  CHECK(has(text, "step 9  loss 0.4"));
  CHECK(has(text, "ended: closed cleanly, stopped by exit\n"));
}

TEST_CASE("a trace that never appears: a clear error after --wait seconds") {
  TempDir tmp;
  const std::string path = tmp.file("never.db");
  WatchOptions o;
  o.wait_s = 1;
  const auto started = Clock::now();
  std::string error;
  try {
    watched(path, o);
  } catch (const gb::trace::Error& e) {
    error = e.what();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  CHECK(error == "glassbox: watch: '" + path + "' did not become a readable trace within 1 s (--wait): trace '" + path +
                     "' does not exist; check the path; start the training first, or wait longer");
  CHECK(seconds >= 0.9);
  CHECK(seconds < 5.0);  // 1 s and a poll, with room for a loaded machine
}

TEST_CASE("the line interval: about 2 s of steps, 1, 2 or 5 times a power of ten") {
  CHECK(choose_every(10e6) == 200);
  CHECK(choose_every(21.3e6) == 100);
  CHECK(choose_every(3e9) == 1);
  CHECK(choose_every(1e3) == 2'000'000);
  CHECK(choose_every(0.3e6) == 5000);  // 6667 -> 5000
  CHECK(choose_every(0) == 100);
  CHECK(choose_every(-5) == 100);
}
