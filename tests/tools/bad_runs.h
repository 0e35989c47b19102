// tests/tools/bad_runs.h — small traces of runs that went wrong, written with gb::trace::Writer, for the story of
// `glassbox report` (story_test.cpp, main_test.cpp), its query layer (tests/traces/query/alarms_test.cpp) and the
// viewer's Anomalies panel (tests/viewer/panels/anomalies_test.cpp).
//
// Every run has: thread 1 (main); modules 1 "" (MLP), 2 encoder, 3 encoder.norm, 4 fc1, 5 fc2, 6 act1; params 1..8
// (1 fc1.weight, 2 fc1.bias, 3 fc2.weight, 4 fc2.bias, 5 encoder.norm.weight, 6 encoder.norm.bias, 7 encoder.w7,
// 8 encoder.w8); `steps` steps of 10 ms each (step s spans [10 ms * s, 10 ms * (s + 1))) with a step span each;
// meta stopped_by "exit". Each writer adds its story on top, then closes the file unless told otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "traces/records.h"
#include "traces/writer.h"

namespace bad_runs {

using namespace gb::trace;

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kGiB = 1LL << 30, kMiB = 1LL << 20;

// The text the engine stores with an OOM (engine/memory/oom_report.cpp), shortened.
inline const char* kOomText =
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 16.00 GiB of which 1.00 GiB is "
    "free.\n"
    "\n"
    "Memory on cuda:0 when it failed:\n"
    "  allocated                      14.00 GiB\n"
    "    activation                   10.00 GiB   71%\n"
    "What to do:\n"
    "  - activations are 71% of allocated memory: activation checkpointing or a smaller batch would free up to "
    "10.00 GiB";

// A run in the making: the common rows, then whatever a test adds; span(...) numbers the main thread's spans.
struct Run {
  Writer w;
  std::int64_t next_span = 0;
  explicit Run(const std::string& path, int steps = 20) : w(path) {
    w.set_meta("command", "./train --bad");
    w.set_meta("stopped_by", "exit");
    w.set_meta("dropped_events", "0");
    w.add(ThreadRecord{1, 100, "main", ThreadRole::main, std::nullopt});
    w.add(ModuleRecord{1, "", "MLP", std::nullopt});
    w.add(ModuleRecord{2, "encoder", "Encoder", 1});
    w.add(ModuleRecord{3, "encoder.norm", "LayerNorm", 2});
    w.add(ModuleRecord{4, "fc1", "Linear", 1});
    w.add(ModuleRecord{5, "fc2", "Linear", 1});
    w.add(ModuleRecord{6, "act1", "ReLU", 1});
    const std::pair<Id, const char*> params[] = {{4, "weight"}, {4, "bias"}, {5, "weight"}, {5, "bias"},
                                                 {3, "weight"}, {3, "bias"}, {2, "w7"},     {2, "w8"}};
    for (Id i = 0; i < 8; ++i)
      w.add(ParamRecord{i + 1, params[i].first, params[i].second, "[4, 4]", 16, DType::float32});
    for (std::int64_t s = 0; s < steps; ++s) {
      w.add(StepRecord{.step = s, .start_ns = s * 10 * kMs, .end_ns = (s + 1) * 10 * kMs, .loss = 1.0, .lr = 0.1});
      span(SpanKind::step, "step", s * 10 * kMs, 10 * kMs, s);
    }
  }
  Id span(SpanKind kind, const char* name, std::int64_t start, std::int64_t dur, OptId step, OptId module = {}) {
    Id id = span_id(1, ++next_span);
    w.add(SpanRecord{.id = id,
                     .kind = kind,
                     .name_id = w.intern(name),
                     .thread_id = 1,
                     .start_ns = start,
                     .end_ns = start + dur,
                     .step = step,
                     .parent_id = std::nullopt,
                     .seq = std::nullopt,
                     .module_id = module});
    return id;
  }
  // An op span with its op_details.
  Id op(const char* name, std::int64_t start, OptId step, OptId module, const char* shapes, const char* dtypes,
        int device) {
    Id id = span(SpanKind::op, name, start, 2000, step, module);
    w.add(OpDetailsRecord{id, w.intern(shapes), w.intern(dtypes), device, std::nullopt, std::nullopt});
    return id;
  }
  // cause_id and cause: the earlier anomaly that explains this one and the evidence (schema version 6).
  void anomaly(Id id, std::int64_t t, OptId step, AnomalyKind kind, Severity sev, OptId span, OptId node, OptId module,
               OptId param, std::optional<double> value, const std::string& message, OptId cause_id = {},
               const std::string& cause = "") {
    w.add(AnomalyRecord{id, t, step, kind, sev, span, node, module, param, value, message, std::nullopt, cause_id,
                        cause});
  }
  // An out-of-memory at t on cuda:0: the allocator's oom event and the report.
  void oom(Id id, std::int64_t t, std::int64_t requested) {
    w.add(MemoryEventRecord{id, t, MemAction::oom, 0, 0, requested, requested, std::nullopt, 0, MemCategory::activation,
                            std::nullopt, std::nullopt, 14 * kGiB, 14 * kGiB + 512 * kMiB});
    w.add(OomReportRecord{id, t, requested, 16 * kGiB, 1 * kGiB, 14 * kGiB, 14 * kGiB + 512 * kMiB, 256 * kMiB,
                          kOomText});
  }
};

// Ran out of memory in step 5 (55 ms) on cuda:0 and the exception ended the program; the trace closed cleanly.
inline void write_oom(const std::string& path) {
  Run r(path, 6);  // steps 0..5
  r.w.set_meta("stopped_by",
               "uncaught exception: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
               "16.00 GiB\nWhat to do: ...");
  r.oom(1, 55 * kMs, 2 * kGiB);
  r.w.close();
}

// A leak: every step kept its activations; memory_growth said so at step 6 (cpu first, then cuda:0 at step 7), and
// step 19 ran out of memory on cuda:0 with 14.00 of its 15.00 GiB allocated kept by earlier steps (schema 6:
// oom_reports.step, kept_bytes).
inline const char* kLeakOomText =
    "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 16.00 GiB of which 512.00 MiB is "
    "free.\n"
    "What to do:\n"
    "  - a leak across steps, not this step's peak: 14.00 GiB (93% of the 15.00 GiB allocated) from 19 earlier "
    "steps (0..18): activation 14.00 GiB";
inline void write_leak_oom(const std::string& path) {
  Run r(path, 20);  // steps 0..19
  r.anomaly(1, 66 * kMs, 6, AnomalyKind::memory_growth, Severity::warning, std::nullopt, std::nullopt, std::nullopt,
            std::nullopt, 1.0 * kMiB,
            "cpu memory allocated at step end grew 6 steps in a row, by 1.00 MiB per step (6.00 MiB in all, now "
            "9.00 MiB, step 6)");
  r.anomaly(2, 76 * kMs, 7, AnomalyKind::memory_growth, Severity::warning, std::nullopt, std::nullopt, std::nullopt,
            std::nullopt, 768.0 * kMiB,
            "cuda:0 memory allocated at step end grew 6 steps in a row, by 768.00 MiB per step (4.50 GiB in all, now "
            "5.50 GiB, step 7); live by the step that allocated it: this step 768.00 MiB, earlier steps 4.50 GiB");
  const std::int64_t t = 195 * kMs;
  r.w.add(MemoryEventRecord{1, t, MemAction::oom, 0, 0, kGiB, kGiB, std::nullopt, 0, MemCategory::activation,
                            std::nullopt, std::nullopt, 15 * kGiB, 15 * kGiB + 512 * kMiB});
  r.w.add(OomReportRecord{1, t, kGiB, 16 * kGiB, 512 * kMiB, 15 * kGiB, 15 * kGiB + 512 * kMiB, 256 * kMiB,
                          kLeakOomText, 19, 14 * kGiB});
  r.w.close();
}

// Went NaN in step 12: log (module encoder.norm) made a NaN from finite inputs; the loss and then the backward
// (SqrtBackward0) followed. The anomaly ids are not in time order (the backward one has the smallest id).
inline void write_nan(const std::string& path) {
  Run r(path);
  Id log = r.op("log", 120 * kMs, 12, 3, "[[64, 128]]", "float32", 0);
  Id sqrt = r.op("sqrt", 120 * kMs + 5000, 12, 3, "[[64, 128]]", "float32", 0);
  r.w.add(GraphNodeRecord{7, 12, 40, r.w.intern("SqrtBackward0"), sqrt, 3, 32768});
  r.anomaly(1, 125 * kMs, 12, AnomalyKind::nonfinite_backward, Severity::error, std::nullopt, 7, 3, std::nullopt,
            std::nullopt, "SqrtBackward0 produced NaN gradients from finite ones");
  r.anomaly(2, 120 * kMs + 2000, 12, AnomalyKind::nonfinite_forward, Severity::error, log, std::nullopt, 3,
            std::nullopt, std::nullopt, "log produced 12 NaN from finite inputs (a negative input?)");
  r.anomaly(3, 124 * kMs, 12, AnomalyKind::nonfinite_loss, Severity::error, std::nullopt, std::nullopt, std::nullopt,
            std::nullopt, std::nullopt, "the loss of step 12 is nan");
  r.w.close();
}

// Only the backward went NaN, at SqrtBackward0 (forward op sqrt in encoder.norm), step 3; the anomaly names the
// node but not the step nor the module (found from the node).
inline void write_backward_nan(const std::string& path) {
  Run r(path);
  Id sqrt = r.op("sqrt", 31 * kMs, 3, 3, "[[128]]", "float32", kCpu);
  r.w.add(GraphNodeRecord{9, 3, 12, r.w.intern("SqrtBackward0"), sqrt, 3, 512});
  r.anomaly(1, 35 * kMs, std::nullopt, AnomalyKind::nonfinite_backward, Severity::error, std::nullopt, 9, std::nullopt,
            std::nullopt, std::nullopt, "SqrtBackward0 produced inf gradients from finite ones");
  r.w.close();
}

// Alarms without NaN: 3 exploding_norm warnings on fc1.weight (steps 4, 9) and fc2.weight (step 6), 1 dead_relu
// info on act1 (step 3, the earliest), 1 update_ratio warning on fc2.weight (step 7).
inline void write_alarms(const std::string& path) {
  Run r(path);
  r.anomaly(1, 33 * kMs, 3, AnomalyKind::dead_relu, Severity::info, std::nullopt, std::nullopt, 6, std::nullopt, 0.998,
            "act1: 99.8% of the ReLU's outputs were zero for 3 steps");
  r.anomaly(2, 45 * kMs, 4, AnomalyKind::exploding_norm, Severity::warning, std::nullopt, std::nullopt, 4, 1, 50.0,
            "gradient norm of fc1.weight is 50 (40x its running mean)");
  r.anomaly(3, 65 * kMs, 6, AnomalyKind::exploding_norm, Severity::warning, std::nullopt, std::nullopt, 5, 3, 120.0,
            "gradient norm of fc2.weight is 120 (60x its running mean)");
  r.anomaly(4, 75 * kMs, 7, AnomalyKind::update_ratio, Severity::warning, std::nullopt, std::nullopt, 5, 3, 0.52,
            "learning rate too high for fc2: the update is 0.52 of fc2.weight");
  r.anomaly(5, 95 * kMs, 9, AnomalyKind::exploding_norm, Severity::warning, std::nullopt, std::nullopt, 4, 1, 80.0,
            "gradient norm of fc1.weight is 80 (30x its running mean)");
  r.w.close();
}

// Alarms the monitor linked (anomalies.cause_id, schema version 6), over 100 steps and a module 7 "act2" (ReLU)
// after fc2: one update of fc2.weight at step 0 was 13x the weight's norm (id 1, the root); act2 went dead at step 9
// (id 2, caused by 1); fc1.weight's gradient vanished at step 92 (id 4, caused by 2: fc1 feeds act2's dead units).
// A loss spike at step 40 (id 3) is unrelated. add_chain() writes the rows into a run a test adds to.
inline const char* kChainRootMessage =
    "one update of fc2.weight was 13x its norm (group 1: lr 0.6, 6000x group 0's 1e-04)";
inline const char* kChainDeadCause = "act2 follows fc2, whose update at step 0 was 13x its weight; dead 9 steps later";
inline const char* kChainVanishCause = "fc1 feeds act2, dead since step 9: no gradient flows back through its units";
inline void add_chain(Run& r) {
  r.w.add(ModuleRecord{7, "act2", "ReLU", 1});
  r.anomaly(1, 5 * kMs, 0, AnomalyKind::update_ratio, Severity::warning, std::nullopt, std::nullopt, 5, 3, 13.2,
            kChainRootMessage);
  r.anomaly(2, 95 * kMs, 9, AnomalyKind::dead_relu, Severity::warning, std::nullopt, std::nullopt, 7, std::nullopt,
            0.999, "act2: 99.9% of the ReLU's outputs were zero for 5 steps", 1, kChainDeadCause);
  r.anomaly(3, 405 * kMs, 40, AnomalyKind::loss_spike, Severity::warning, std::nullopt, std::nullopt, std::nullopt,
            std::nullopt, 4.1, "loss 4.1 at step 40 is 5x the median of the last 20 steps");
  r.anomaly(4, 925 * kMs, 92, AnomalyKind::vanishing_norm, Severity::warning, std::nullopt, std::nullopt, 4, 1, 2e-9,
            "gradient norm of fc1.weight fell to 2e-09, 1e-06 of its median", 2, kChainVanishCause);
}
inline void write_chain(const std::string& path) {
  Run r(path, 100);
  add_chain(r);
  r.w.close();
}

// A healthy run: closed cleanly by exit, no anomalies, no OOM.
inline void write_healthy(const std::string& path) {
  Run r(path);
  r.op("matmul", 1 * kMs, 0, 4, "[[4, 4], [4, 4]]", "float32,float32", kCpu);
  r.w.close();
}

}  // namespace bad_runs
