// instrument/gpu_activity.h — GPU activity (kernels, copies, memsets, CUDA API calls) into trace rows.
//
// cupti.cpp reads CUPTI's activity buffers into GpuActivity values (no CUPTI types here, so this part is built and
// tested everywhere); GpuActivityWriter turns them into rows of the session that records (traces/SCHEMA.md):
//   - kernels, copies and memsets: spans of kind cuda_kernel / cuda_memcpy / cuda_memset on one track per (device,
//     stream), a threads row named "cuda:D stream S" with role cuda_stream; a kernel also gets its `kernels` row
//     (grid, block, registers, shared memory, stream, CUPTI correlation id), a copy or memset an `op_details` row
//     with its device and bytes;
//   - CUDA API calls and synchronizations: spans of kind cuda_api on one track per host thread ("CUDA API: main",
//     role other), their `seq` the CUPTI correlation id (the kernel's kernels.correlation_id);
//   - kernels.launch_span_id: the span that was open on the launching thread (external correlation, cupti.cpp),
//     given to correlate() before or after the kernel arrives (the join waits for both, bounded).
// Ids: span_id(track, n), n counting each track's spans in start order within what one write() receives (CUPTI
// delivers a stream's activity in order). Times are trace-clock nanoseconds. A span's step is left NULL: GPU work runs
// after the step that launched it may have ended; join through launch_span_id for the launching op's step.
//
// Not thread-safe: one writer per session, fed by one thread (cupti.cpp's consumer).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/records.h"

namespace gb::trace {

enum class GpuActivityKind { kernel, memcpy, memset, api, sync };

struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::kernel;
  std::string name;  // kernel: demangled; copy: "Memcpy HtoD"; api: "cudaLaunchKernel"; sync: "Stream synchronize"
  std::int64_t start_ns = 0, end_ns = 0;  // trace clock
  int device = 0;
  std::int64_t stream = 0;       // CUPTI's stream id (sync: the stream waited for, 0 when none)
  std::int64_t correlation = 0;  // CUPTI correlation id: joins a kernel, copy or memset to its API call
  std::array<std::int64_t, 3> grid{}, block{};  // kernel
  std::int64_t registers = 0;    // kernel: per thread
  std::int64_t shared_mem = 0;   // kernel: static + dynamic bytes per block
  std::int64_t bytes = 0;        // copy, memset
  std::int64_t host_tid = 0;     // api: the OS thread that called (sync: found through its API call's correlation)
};

class GpuActivityWriter {
 public:
  // The span open on the launching thread when CUPTI's call `correlation` was made.
  void correlate(std::int64_t correlation, Id span);
  // Queues the rows of a batch (any order, any mix of kinds) for the session's collector.
  void write(std::vector<GpuActivity> batch);
  // Kernels still waiting for their correlate() at the end: written without launch_span_id.
  void finish();

  std::size_t pending() const { return waiting_.size(); }
  std::size_t kernels_written() const { return kernels_; }
  std::size_t unlinked_kernels() const { return unlinked_; }

  // How many correlations (and kernels waiting for one) are kept: API calls that launch nothing leave theirs.
  static constexpr std::size_t kMaxKept = 1u << 20;

 private:
  Id track(const std::string& name, ThreadRole role, std::int64_t key_a, std::int64_t key_b);
  Id api_track(std::int64_t host_tid);
  Id name_id(const std::string& name);  // intern() once per name: it takes the registry's mutex

  std::map<std::pair<std::int64_t, std::int64_t>, Id> tracks_;  // (device, stream) or (-1, host tid)
  std::unordered_map<Id, std::int64_t> next_n_;
  std::unordered_map<std::string, Id> names_;
  std::unordered_map<std::int64_t, Id> launched_by_;  // correlation -> span
  std::deque<std::int64_t> launched_order_;
  std::unordered_map<std::int64_t, std::int64_t> api_tid_;  // correlation -> host tid (for sync records)
  std::deque<std::int64_t> api_order_;
  std::unordered_map<std::int64_t, KernelRecord> waiting_;  // correlation -> kernel row without its span yet
  std::deque<std::int64_t> waiting_order_;
  std::size_t kernels_ = 0, unlinked_ = 0;
};

}  // namespace gb::trace
