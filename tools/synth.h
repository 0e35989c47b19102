// tools/synth.h — `glassbox synth OUT.db`: a realistic synthetic training trace of any size, written with
// gb::trace::Writer, for the viewer, its tests and benchmarks (no engine needed).
//
// What it writes (deterministic for a seed; times in ns from 0):
//   threads   1 "main" (main), 2.. "DataLoader worker k" (dataloader_worker), one per `workers`
//   modules   "" (the root, type MLP) and "layers.l" (Linear) for l < layers; params layers.l.weight / .bias
//             (ids 2l+1, 2l+2: model order)
//   per step on main, nested as the engine writes them:
//     step (step) ─┬ zero_grad (optimizer)
//                  ├ wait (dataloader): until the batch's collate on its worker ended
//                  ├ forward (module, root) ─ layers.l (module) ─┬ linear (op, seq) ─ matmul, add (op)
//                  │                                              └ ops_per_layer elementwise ops (op, seq each)
//                  ├ cross_entropy (op, seq)
//                  ├ backward (backward_phase) ─ discovery, execution ─ one backward_node per forward op with
//                  │                             the same seq, in reverse order; release
//                  └ SGD.step (optimizer) ─ add_ (op) per param
//   workers     fetch then collate (dataloader) for batch s on worker s % workers, prefetching two steps ahead
//   memory      device 0: parameters and a workspace (unknown) up front; per step an input batch, per layer two
//               activations (freed by its backward node), a temporary in matmul, an autograd_detail block in
//               the backward node, gradients (allocated in backward, freed by zero_grad) and, at step 0, momentum
//               buffers (optimizer_state); with memory_layer_stride n only every n-th layer allocates per step.
//               Blocks are placed inside segments by best fit (512-byte rounding, split and merge), so addresses
//               lie in their segment [addr, addr + size) and freed gaps fragment it; a segment of >= 64 MiB is
//               reserved when no free range fits. `allocated` and `reserved` are the exact running totals.
//               meta context_bytes = 300 MiB.
//   oom         (oom) after the last step, an allocation that does not fit: a memory event `oom` and an
//               oom_reports row with PyTorch's wording
//   cuda        (cuda) thread "CUDA stream 7" (cuda_stream): one cuda_kernel span per matmul, elementwise op and
//               linear backward node, serialized on the stream after its launch, with a kernels row whose
//               launch_span_id names the op
//   counters    loss and lr at each step's end; steps rows with loss and lr
//   grad_stats  every param every step; at (nan_step, nan_layer) the weight has nan_count = 12 (the norm column
//               cannot hold NaN: SQLite stores NaN as NULL and norm is NOT NULL)
//   anomalies   an exploding_norm warning one step before, and a nonfinite_backward error naming the backward
//               node, module and param of the planted NaN
//   graph       graph_nodes / graph_edges of step 0: the backward nodes from the loss down, and one
//               AccumulateGrad node per parameter fed by its layer's AddmmBackward0
// `spans` > 0 picks ops_per_layer so the file holds about that many spans (steps and layers stay as given).
//
// Long-run mode (`long_steps` > 0; `glassbox synth OUT.db --long-steps 1000000`): a schema-5 trace of long_steps
// steps written as the engine writes a long run (traces/SCHEMA.md detail_windows). Every step has its summary: a
// steps row with every version 5 column (a loss that falls noisily, lr with a linear warm-up then a cosine decay,
// data/forward/backward/optimizer times, samples, tokens, grad_norm) and a step_memory row for device 0. Detail
// (the per-step generator above: spans, memory events, op_details, counters) exists only in the windows of the
// policy in meta `detail` = "first=500,every=1000,window=5,recorder=16,recorder_mb=64": `first` steps
// 0..min(499, last), `periodic` [k*1000, k*1000+4], `anomaly` the 16 steps up to the planted late loss spike
// (nan_step: 3/4 through by default; a loss_spike warning and, from the per-step generator, a nonfinite_backward
// error there and an exploding_norm warning a step before) and `end` the last 16 steps. Windows never overlap (a
// periodic window that would is left out, a recorder window starts after the one before). Each window after the
// first starts with a memory `resume` row, a `live` row per live block and a `live_segment` row per segment, so a
// replay of any window is exact. grad_stats every 10 steps and in every detail step. One transaction.
//
//   SynthResult r = write_synthetic_trace("big.db", SynthOptions{.steps = 50, .spans = 1'000'000});
#pragma once

#include <cstdint>
#include <string>

#include "traces/records.h"

namespace gb::tools {

struct SynthOptions {
  std::int64_t steps = 20;
  std::int64_t layers = 8;
  std::int64_t spans = 0;          // target total; 0 = from ops_per_layer
  std::int64_t ops_per_layer = 3;  // elementwise ops after each linear
  std::int64_t workers = 2;
  std::int64_t nan_step = -1;   // -1: 3/4 of the way through; -2: no NaN
  std::int64_t nan_layer = -1;  // -1: the middle layer
  std::int64_t batch = 2048;    // activation bytes = batch * width * 4
  std::int64_t width = 1024;
  std::int64_t memory_layer_stride = 1;  // per-step memory events only for layers l % stride == 0
  bool cuda = false;                     // a CUDA stream thread with kernels
  bool oom = false;                      // an OOM at the end
  std::uint64_t seed = 1;
  std::int64_t long_steps = 0;  // > 0: a long run of this many steps (replaces `steps`); see above
};

struct SynthResult {
  std::int64_t spans = 0, memory_events = 0, grad_stats = 0, steps = 0, ops_per_layer = 0;
  std::int64_t nan_step = -1, nan_layer = -1;
  gb::trace::Id nan_param_id = 0;       // params.id of the NaN weight (0: none)
  std::int64_t nan_t_ns = 0;            // when the nonfinite_backward anomaly happened
  std::int64_t end_ns = 0;              // the last step's end
  std::int64_t peak_allocated = 0, peak_reserved = 0;
  std::int64_t kernels = 0, segments = 0;
  std::int64_t oom_t_ns = -1;           // when the OOM happened (oom)
  // long_steps: the planted loss spike (== nan_step), the detail windows written and the steps they hold
  std::int64_t spike_step = -1, windows = 0, detail_steps = 0;
};

// Replaces any file at path. Throws gb::trace::Error when it cannot be written.
SynthResult write_synthetic_trace(const std::string& path, const SynthOptions& options = {});

}  // namespace gb::tools
