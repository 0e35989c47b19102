// tools/watch.h — `glassbox watch RUN.db`: follows a trace while the training writes it, one line at a time.
//
// Contract:
//   - Output, flushed after every poll: a header line (`watching PATH: COMMAND on HOST (pid N); detail POLICY`),
//     then one line every `every` steps (step, its loss, the mean step time since the last line, samples/s or
//     tokens/s when the steps say them, grad norm, the peak allocated memory per device since the last line, from
//     step_memory), each anomaly on its own line as soon as it is read (severity, kind, step, message), a line when
//     a detail window is written, and at the end `ended: ...` (the story's words, tools/story.h ending_text) and a
//     one-line `summary: ...` (traces/query/run_summary.h).
//   - It ends when the run ends: meta closed_cleanly appears; or stopped_by without closed_cleanly and the writer
//     gone or 3 s passed; or the writing process (meta `pid` on this `host`) no longer exists, seen twice: "the run
//     ended without closing its trace (killed or crashed)". A trace without `pid` (older writers) or from another
//     host is followed until it closes (the header says so).
//   - It never holds a read transaction between polls: every poll (about every `poll`, 250 ms) opens the file,
//     reads meta, then new rows by key ranges (steps WHERE step > last, step_memory / anomalies / detail_windows by
//     rowid or id), at most a batch per statement, and closes it; a row committed by the writer (every 100 ms) is
//     on screen within about poll + 100 ms. No query scans a whole table per poll.
//   - A file that does not exist yet, or is not a trace yet (being created: no schema), is retried until `wait_s`
//     seconds passed, then a gb::trace::Error says so (the command's exit code 2); the same after the file was read
//     once and stops being readable.
//   - from the start by default (a finished trace prints all its lines, then the end); `tail` starts at the step
//     the trace has reached.
//   - `every` 0: chosen from the first steps read so a line comes about every 2 s of training (1, 2 or 5 times a
//     power of ten: choose_every), 100 when the steps have no duration.
//
//   gb::tools::WatchOptions o;
//   o.every = 100;
//   gb::tools::WatchResult r = gb::tools::watch_trace("run.db", o, std::cout);  // returns when the run ended
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace gb::tools {

struct WatchOptions {
  std::int64_t every = 0;  // a line every N steps; 0: choose_every
  double wait_s = 60;      // for the file to become a readable trace
  bool tail = false;       // start at the current step
  std::chrono::milliseconds poll = std::chrono::milliseconds(250);
  std::function<bool()> stop;  // asked before each poll: true ends the watch
};

enum class WatchEnd { closed, stopped, died, stopped_by_caller };

struct WatchResult {
  WatchEnd end = WatchEnd::stopped_by_caller;
  std::int64_t steps = 0;      // steps read
  std::int64_t anomalies = 0;  // anomaly lines written
  std::int64_t every = 0;      // the line interval used (0: no step was read)
};

WatchResult watch_trace(const std::string& path, const WatchOptions& options, std::ostream& out);

// The line interval for steps of mean_ns: about 2 s of training, rounded to 1, 2 or 5 times a power of ten; 100
// when mean_ns is not positive.
std::int64_t choose_every(double mean_ns);

}  // namespace gb::tools
