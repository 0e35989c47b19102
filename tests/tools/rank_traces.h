// tests/tools/rank_traces.h — the traces of a 2-rank data-parallel job with known true times, written with
// gb::trace::Writer, for `glassbox merge` and the ranks comparison.
//
// True time tau (ns). Rank r's trace starts at tau = start_ns[r] and its clock runs at rate[r]: it writes
// t = round((tau - start_ns[r]) * rate[r]). Defaults: rank 0 starts at 2 ms, rank 1 at 0 with a clock 100 ppm fast,
// so merging must shift rank 1 and undo its drift (the merged times are tau exactly, ±2 ns, when both handshakes are
// there). Threads: 1 main (main), 2 communication. Modules: rank 0 "" id 1, "fc1" id 2, param fc1.weight id 1;
// rank 1 "" id 5, "fc1" id 7, param id 9.
//   communication: the start handshake, clock_sync barriers seq 1..3 released at 12 ms + 0, 1 and 2 us (rank i % 2
//   enters the i-th at its release, the other 0.5 us before) (with_start_sync);
//   steps k = 0..3 from tau_k = 20 + 20k ms to tau_k + 12 ms (steps rows, step spans). The straggler (if any) sleeps
//   3 ms first (rank 1 6 ms in hiccup_step only): f = tau_k (+3 ms). main: linear (op, module fc1) [f, f+2), backward
//   (backward_phase) [f+2, f+5); communication: all_reduce seq 4+k, bucket 0, arrives at a = f+3 ms and ends 1 ms after
//   the last arrival; main: "wait all_reduce" (collective) from f+5 to that end when it is later. program barrier seq 8
//   from 100 + r ms to 110 ms; the end handshake, clock_sync seq 9..11 released at 125 ms + 0, 1 and 2 us, except that
//   rank 1 stamps seq 11's end 4 ms late (its thread was preempted: the merge must not be misled) (with_end_sync).
//   anomalies: rank 1 nonfinite_backward at tau 41 ms (module fc1), rank 0 nonfinite_backward at 42 ms (param
//   fc1.weight): in each rank's own clock rank 0's comes first; on the true clock rank 1's does.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "traces/records.h"
#include "traces/writer.h"

namespace rank_traces {

using namespace gb::trace;

struct Job {
  std::int64_t start_ns[2] = {2'000'000, 0};
  double rate[2] = {1.0, 1.0001};
  int straggler = 1;  // -1: none
  std::int64_t sleep_ns = 3'000'000;
  int hiccup_step = -1;   // rank 1 is 6 ms late in this step only (a preemption)
  double time_scale = 1;  // every duration and time of the job multiplied (0.05: steps of 0.6 ms)
  bool with_start_sync = true;
  bool with_end_sync = true;
  int world_size = 2;
};

constexpr std::int64_t ms(double v) { return static_cast<std::int64_t>(v * 1'000'000); }
constexpr std::int64_t step_start(int k) { return ms(20) + k * ms(20); }
constexpr std::int64_t kAllReduceSeq = 4;  // step k's all-reduce is kAllReduceSeq + k
constexpr std::int64_t kBarrierSeq = 8;
constexpr std::int64_t kCollectivesPerRank = 3 + 4 + 1 + 3;

inline void write_rank(const std::string& path, int r, const Job& job = {}) {
  Writer w(path);
  auto t = [&](std::int64_t tau) { return std::llround(double(tau - job.start_ns[r]) * job.time_scale * job.rate[r]); };
  w.set_meta("rank", std::to_string(r));
  w.set_meta("world_size", std::to_string(job.world_size));
  w.set_meta("host", "node" + std::to_string(r));
  w.set_meta("started_at_unix_ns", std::to_string(1'700'000'000'000'000'000LL + job.start_ns[r]));
  w.add(ThreadRecord{1, 100, "main", ThreadRole::main, std::nullopt});
  w.add(ThreadRecord{2, 101, "communication", ThreadRole::communication, std::nullopt});
  const Id root = r == 0 ? 1 : 5, fc1 = r == 0 ? 2 : 7, weight = r == 0 ? 1 : 9;
  w.add(ModuleRecord{root, "", "MLP", std::nullopt});
  w.add(ModuleRecord{fc1, "fc1", "Linear", root});
  w.add(ParamRecord{weight, fc1, "weight", "[4, 4]", 16, DType::float32});
  const Id avg = w.intern("avg");

  std::map<Id, std::int64_t> next;
  auto span = [&](Id thread, SpanKind kind, const char* name, std::int64_t tau0, std::int64_t tau1, OptId parent,
                  OptId step, OptId seq = std::nullopt, OptId module = std::nullopt) {
    const Id id = span_id(thread, ++next[thread]);
    w.add(SpanRecord{.id = id,
                     .kind = kind,
                     .name_id = w.intern(name),
                     .thread_id = thread,
                     .start_ns = t(tau0),
                     .end_ns = t(tau1),
                     .step = step,
                     .parent_id = parent,
                     .seq = seq,
                     .module_id = module});
    return id;
  };
  auto collective = [&](const char* name, std::int64_t seq, std::int64_t tau0, std::int64_t tau1, OptId step,
                        OptId bucket = std::nullopt, std::int64_t bytes = 0) {
    const Id id = span(2, SpanKind::collective, name, tau0, tau1, std::nullopt, step, seq);
    w.add(CollectiveRecord{id, bytes, DType::float32, bucket ? OptId(avg) : std::nullopt, bucket, 2, t(tau0)});
  };

  // A barrier ends at its release R on every rank; the rank that arrives last (rank i % 2 at the i-th) enters at R,
  // the other 0.5 us before; the barriers are 1 us apart.
  auto handshake = [&](std::int64_t seq0, std::int64_t release0, int late_stamp) {
    for (int i = 0; i < 3; ++i) {
      const std::int64_t R = release0 + i * 1000;
      collective("clock_sync", seq0 + i, r == i % 2 ? R : R - 500, R + (i == late_stamp ? ms(4) : 0), std::nullopt);
    }
  };
  if (job.with_start_sync) handshake(1, ms(12), -1);
  for (int k = 0; k < 4; ++k) {
    const std::int64_t tau = step_start(k);
    auto late = [&](int q) {
      return (q == job.straggler ? job.sleep_ns : 0) + (q == 1 && k == job.hiccup_step ? ms(6) : 0);
    };
    const std::int64_t f = tau + late(r);
    std::int64_t last = tau + ms(3);
    for (int q = 0; q < 2; ++q) last = std::max(last, tau + late(q) + ms(3));
    const std::int64_t end = last + ms(1);
    w.add(StepRecord{.step = k, .start_ns = t(tau), .end_ns = t(tau + ms(12)), .loss = 1.0, .lr = 0.1});
    const Id step = span(1, SpanKind::step, "step", tau, tau + ms(12), std::nullopt, k);
    span(1, SpanKind::op, "linear", f, f + ms(2), step, k, std::nullopt, fc1);
    span(1, SpanKind::backward_phase, "backward", f + ms(2), f + ms(5), step, k);
    if (end > f + ms(5)) span(1, SpanKind::collective, "wait all_reduce", f + ms(5), end, step, k);
    collective("all_reduce", kAllReduceSeq + k, f + ms(3), end, k, 0, 4096);
  }
  collective("barrier", kBarrierSeq, ms(100) + r * ms(1), ms(110), std::nullopt);
  if (job.with_end_sync) handshake(9, ms(125), r == 1 ? 2 : -1);

  if (r == 1)
    w.add(AnomalyRecord{1, t(ms(41)), 1, AnomalyKind::nonfinite_backward, Severity::error, std::nullopt, std::nullopt,
                        fc1, std::nullopt, 3.0, "backward node AddmmBackward0 made 3 NaN", std::nullopt});
  else
    w.add(AnomalyRecord{1, t(ms(42)), 1, AnomalyKind::nonfinite_backward, Severity::error, std::nullopt, std::nullopt,
                        fc1, weight, 16.0, "gradient of fc1.weight holds 16 NaN", std::nullopt});
  w.close();
}

}  // namespace rank_traces
