// tests/tools/synthetic_trace.h — a small training run with known numbers, written with gb::trace::Writer, for the
// tools tests (and the examples in docs/GUIDE.md §5, "On the tests' synthetic trace").
//
// Three steps (steps table) of 10, 12 and 14 ms by default. In each step, on thread 1 (main), relative to the step
// start:
//   step span (kind step)                      [0, step_ns)
//     wait   (dataloader)                      [0, 1 ms)
//     linear (op, module fc1)                  [1.001 ms, +5 us): total 5000 ns, self 1000 ns
//       matmul (op)                            [1.001 ms, +matmul_ns)    (3000 ns by default)
//       add    (op)                            [after matmul, +1000 ns)
//     relu   (op, when with_relu)              [1.006 ms, +500 ns)
//     softmax (op, when with_softmax)          [1.007 ms, +700 ns)
// thread 2 (dataloader worker): fetch 2000 ns and collate 500 ns per step.
// with_cuda: thread 3 (cuda stream) holds per step a 2000 ns "gemm" kernel launched by matmul and a 500 ns
// "add_kernel" launched by add (kernels.launch_span_id).
// Memory (memory_events, ids 1..9): device 0 segment of 2 MiB, parameter 1000 B, activations 4000 + 3000 B (peak
// allocated 8000 B, activation peak 7000 B), frees, gradient 500 B, activation 6000 B; CPU: input 256 B at the same
// address as a device-0 block. meta context_bytes = 300 MiB. Multiply sizes with mem_scale.
// One anomaly (loss_spike), two counters ("loss"), one instant ("checkpoint"), modules, params, grad stats, graph.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "traces/records.h"
#include "traces/writer.h"

namespace synthetic {

using namespace gb::trace;

struct Options {
  std::vector<std::int64_t> step_ns = {10'000'000, 12'000'000, 14'000'000};
  std::int64_t matmul_ns = 3000;
  bool with_relu = true;
  bool with_softmax = false;
  bool with_cuda = false;
  bool with_steps_table = true;  // false: step durations only as step spans
  std::int64_t mem_scale = 1;
};

// Ids of a few rows, for tests that damage the file on purpose.
struct Ids {
  std::vector<Id> matmul_spans;
  std::vector<Id> all_spans;
};

inline Ids write(const std::string& path, const Options& o = {}) {
  Writer w(path);
  Ids ids;
  w.set_meta("command", "./train_mlp --steps 3");
  w.set_meta("device_name", "Synthetic GPU");
  w.set_meta("context_bytes", std::to_string(300LL << 20));
  w.set_meta("dropped_events", "0");
  w.add(ThreadRecord{1, 100, "main", ThreadRole::main, std::nullopt});
  w.add(ThreadRecord{2, 101, "dataloader worker 0", ThreadRole::dataloader_worker, std::nullopt});
  if (o.with_cuda) w.add(ThreadRecord{3, 102, "cuda stream 7", ThreadRole::cuda_stream, std::nullopt});
  w.add(ModuleRecord{1, "", "MLP", std::nullopt});
  w.add(ModuleRecord{2, "fc1", "Linear", 1});
  w.add(ParamRecord{1, 2, "weight", "[4, 4]", 16, DType::float32});

  std::map<Id, std::int64_t> next;  // thread -> next n
  auto span = [&](Id thread, SpanKind kind, const char* name, std::int64_t start, std::int64_t dur, OptId parent,
                  OptId step, OptId module = std::nullopt) {
    Id id = span_id(thread, ++next[thread]);
    w.add(SpanRecord{.id = id,
                     .kind = kind,
                     .name_id = w.intern(name),
                     .thread_id = thread,
                     .start_ns = start,
                     .end_ns = start + dur,
                     .step = step,
                     .parent_id = parent,
                     .seq = std::nullopt,
                     .module_id = module});
    ids.all_spans.push_back(id);
    return id;
  };
  auto kernel = [&](const char* name, std::int64_t start, std::int64_t dur, Id launcher, OptId step) {
    Id k = span(3, SpanKind::cuda_kernel, name, start, dur, std::nullopt, step);
    w.add(KernelRecord{k, 0, 7, k, launcher, "1,1,1", "128,1,1", 32, 0});
  };

  std::int64_t base = 0;
  for (std::size_t s = 0; s < o.step_ns.size(); ++s) {
    const auto st = static_cast<std::int64_t>(s);
    if (o.with_steps_table) w.add(StepRecord{.step = st, .start_ns = base, .end_ns = base + o.step_ns[s], .loss = 2.5 - 0.5 * st, .lr = 0.1});
    Id step = span(1, SpanKind::step, "step", base, o.step_ns[s], std::nullopt, st);
    span(1, SpanKind::dataloader, "wait", base, 1'000'000, step, st);
    std::int64_t t = base + 1'001'000;
    Id linear = span(1, SpanKind::op, "linear", t, 5000, step, st, 2);
    Id mm = span(1, SpanKind::op, "matmul", t, o.matmul_ns, linear, st, 2);
    ids.matmul_spans.push_back(mm);
    Id add = span(1, SpanKind::op, "add", t + o.matmul_ns, 1000, linear, st, 2);
    if (o.with_relu) span(1, SpanKind::op, "relu", base + 1'006'000, 500, step, st);
    if (o.with_softmax) span(1, SpanKind::op, "softmax", base + 1'007'000, 700, step, st);
    span(2, SpanKind::dataloader, "fetch", base, 2000, std::nullopt, st);
    span(2, SpanKind::dataloader, "collate", base + 2000, 500, std::nullopt, st);
    if (o.with_cuda) {
      kernel("gemm", t + 100, 2000, mm, st);
      kernel("add_kernel", t + o.matmul_ns + 100, 500, add, st);
    }
    if (s == 0) {
      w.add(GraphNodeRecord{1, 0, 1, w.intern("MmBackward0"), mm, 2, 64});
      w.add(GraphNodeRecord{2, 0, 2, w.intern("AddBackward0"), add, 2, 0});
      w.add(GraphEdgeRecord{0, 2, 1, 0});
      w.add(OpDetailsRecord{mm, w.intern("[[4, 4], [4, 4]]"), w.intern("float32,float32"), 0, 128, 192});
      w.add(InstantRecord{1, base + 5'000'000, w.intern("checkpoint"), 1, step, st});
    }
    w.add(GradStatRecord{st, 1, 0.5, 0.25, 0, 0, 0.0, 3.0, 0.01});
    base += o.step_ns[s];
  }

  const std::int64_t m = o.mem_scale, seg = 2 << 20;
  auto mem = [&](Id id, MemAction a, int device, std::int64_t addr, std::int64_t size, MemCategory c,
                 std::int64_t allocated, std::int64_t reserved) {
    w.add(MemoryEventRecord{id, id * 100, a, device, addr, size, size, 1, 0, c, std::nullopt, std::nullopt, allocated,
                            reserved});
  };
  mem(1, MemAction::segment_alloc, 0, 0x1000, seg, MemCategory::unknown, 0, seg);
  mem(2, MemAction::alloc, 0, 0x1000, 1000 * m, MemCategory::parameter, 1000 * m, seg);
  mem(3, MemAction::alloc, 0, 0x2000, 4000 * m, MemCategory::activation, 5000 * m, seg);
  mem(4, MemAction::alloc, 0, 0x3000, 3000 * m, MemCategory::activation, 8000 * m, seg);
  mem(5, MemAction::free, 0, 0x2000, 4000 * m, MemCategory::unknown, 4000 * m, seg);
  mem(6, MemAction::alloc, 0, 0x4000, 500 * m, MemCategory::gradient, 4500 * m, seg);
  mem(7, MemAction::free, 0, 0x3000, 3000 * m, MemCategory::activation, 1500 * m, seg);
  mem(8, MemAction::alloc, 0, 0x5000, 6000 * m, MemCategory::activation, 7500 * m, seg);
  mem(9, MemAction::alloc, kCpu, 0x1000, 256, MemCategory::input, 256, 256);

  w.add(CounterRecord{10'000'000, w.intern("loss"), 2.5});
  w.add(CounterRecord{22'000'000, w.intern("loss"), 1.5});
  w.add(AnomalyRecord{1, 22'000'500, 2, AnomalyKind::loss_spike, Severity::warning, std::nullopt, std::nullopt,
                      std::nullopt, std::nullopt, 9.5, "loss 9.5 is 4.1x its running mean", std::nullopt});
  w.close();
  return ids;
}

}  // namespace synthetic
