// viewer/compare_model.h — the Compare domain of TraceModel: this trace (A) beside a second one (B), through
// query::diff_traces (step statistics, op deltas, memory peaks). No ImGui.
//
// Contract (calls from the UI thread):
//   - start(path_b) returns at once: the diff (one scan of each trace's spans) runs on the query worker, on its own
//     connection to A and a connection it opens to B. A newer start() supersedes a pending one; "" clears.
//   - pending() is true until the answer is in; result() is then the diff, or nullptr with error() saying why
//     ("B.db: ..." when B cannot be read). Answers are taken when asked (poll()); nothing here waits.
//   - run_b() is B's run summary (run_model.h read_run, read by the same job after the diff), for the Run panel's
//     overlay of B's loss and step time; nullptr until the answer is in, or when B cannot be read.
//
//   m.compare().start("b.db");
//   if (const gb::query::TraceDiff* d = m.compare().result()) draw(*d);
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "traces/query/diff.h"
#include "viewer/run_model.h"
#include "viewer/worker.h"

namespace gb::viewer {

class CompareModel {
 public:
  explicit CompareModel(Worker& worker) : worker_(worker) {}
  void start(const std::string& path_b);
  bool pending() const {
    poll();
    return job_ != nullptr;
  }
  const gb::query::TraceDiff* result() const {
    poll();
    return diff_ ? &*diff_ : nullptr;
  }
  const RunData* run_b() const {
    poll();
    return run_b_ ? &*run_b_ : nullptr;
  }
  const std::string& error() const {
    poll();
    return error_;
  }
  void poll() const;  // takes a finished answer

 private:
  struct Job {
    std::string path;
    std::optional<gb::query::TraceDiff> result;
    std::optional<RunData> run;
    std::string error;
    std::atomic<bool> done{false}, cancelled{false};
  };
  Worker& worker_;
  mutable std::optional<gb::query::TraceDiff> diff_;
  mutable std::optional<RunData> run_b_;
  mutable std::string error_;
  mutable std::shared_ptr<Job> job_;
};

}  // namespace gb::viewer
