// engine/cuda/trace_sync.cpp — a trace's end waits for the GPU (contract in used_devices.h): kernels still running
// when a session stops would otherwise miss CUPTI's last flush (instrument/cupti.h) and the trace. The wait leaves the
// device-error records to the program: a bad index the last kernels found is the program's IndexError at its next
// synchronization, not a warning of the trace's.
#include <cstdio>
#include <exception>
#include <mutex>

#include "cuda/used_devices.h"
#include "instrument/probe.h"

namespace gb::cuda_kernels {

void wait_at_trace_end(std::uint64_t used, void (*wait)(int device)) noexcept {
  for (int d = 0; d < 64; ++d) {
    if (!(used >> d & 1)) continue;
    try {
      wait(d);
    } catch (const std::exception& e) {  // a device in error: the trace still ends, with what CUPTI has
      std::fprintf(stderr, "glassbox: warning: the trace's end could not wait for cuda:%d: %s\n", d, e.what());
    } catch (...) {
      std::fprintf(stderr, "glassbox: warning: the trace's end could not wait for cuda:%d\n", d);
    }
  }
}

namespace {
void wait_for_used() { wait_at_trace_end(used_devices(), wait_device); }
}  // namespace

void sync_devices_at_trace_end() {
  static std::once_flag once;
  std::call_once(once, [] { trace::add_session_hook(nullptr, wait_for_used); });
}

}  // namespace gb::cuda_kernels
