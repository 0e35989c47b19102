// engine/cuda/trace_sync.cpp — a trace's end waits for the GPU (contract in used_devices.h): kernels still running
// when a session stops would otherwise miss CUPTI's last flush (instrument/cupti.h) and the trace.
#include <cstdio>
#include <exception>
#include <mutex>

#include "cuda/used_devices.h"
#include "glassbox/core/cuda.h"
#include "instrument/probe.h"

namespace gb::cuda_kernels {
namespace {

void synchronize_used() {
  const std::uint64_t used = used_devices();
  for (int d = 0; d < 64; ++d) {
    if (!(used >> d & 1)) continue;
    try {
      gb::cuda::synchronize(d);
    } catch (const std::exception& e) {  // a device in error: the trace still ends, with what CUPTI has
      std::fprintf(stderr, "glassbox: warning: the trace's end could not wait for cuda:%d: %s\n", d, e.what());
    }
  }
}

}  // namespace

void sync_devices_at_trace_end() {
  static std::once_flag once;
  std::call_once(once, [] { trace::add_session_hook(nullptr, synchronize_used); });
}

}  // namespace gb::cuda_kernels
