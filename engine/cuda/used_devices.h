// engine/cuda/used_devices.h — which devices this process has queued GPU work on, and what a trace's end does
// about them (internal; no CUDA types, so plain C++ and the no-CUDA build include it too).
#pragma once

#include <cstdint>

namespace gb::cuda_kernels {

// Bit d set: cuda:d has had work queued (stream.cu marks it in current_stream, which every launch and copy asks).
// 0 in a build without CUDA.
std::uint64_t used_devices();
// Registers, once, the trace-session hook that synchronizes every used device when a trace ends, so CUPTI holds
// their last kernels before the session flushes it (trace_sync.cpp). stream.cu calls it on the first device's first
// work.
void sync_devices_at_trace_end();
// Waits for all of `device`'s work (cudaDeviceSynchronize) and nothing more: unlike gb::cuda::synchronize it leaves
// the device-error records (cuda/device_error.h) alone. Throws gb::Error when the device reports a CUDA error.
void wait_device(int device);
// The hook's body: wait(d) for every device d whose bit is set in `used` (the hook passes used_devices() and
// wait_device; tests inject theirs). A failure is printed as a warning and the others are still waited for. It never
// reads or clears the device-error records, so a bad index found by the trace's last kernels is raised to the program
// at its next synchronization or checked launch, as without a trace.
void wait_at_trace_end(std::uint64_t used, void (*wait)(int device)) noexcept;

}  // namespace gb::cuda_kernels
