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

}  // namespace gb::cuda_kernels
