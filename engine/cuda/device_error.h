// engine/cuda/device_error.h — errors a kernel finds in its inputs (an index out of range), reported without the
// op waiting for the device (internal; plain C++, no CUDA types).
//
// A kernel that checks its indices writes the first bad one of a device into that device's record, in host-mapped
// pinned memory, and leaves the element alone (no out-of-bounds read or write). The host reads the record without a
// copy: raise_device_errors() throws gb::IndexError naming the op, the index, the dim and its size, and is called
// where the host waits for a device anyway (a blocking copy to the host such as item() or .cpu(), synchronize(),
// a stream's or an event's synchronize, the monitor's read-back) and before each checked launch, which reports a
// kernel that has finished by then. PyTorch's device-side assert instead poisons the CUDA context: every later
// call fails and the process must restart. engine/cuda/device_error.cu defines these; a build without nvcc,
// engine/core/cuda_fallback.cpp.
#pragma once

#include <cstdint>

namespace gb::cuda_kernels {

struct DeviceError {
  unsigned int flag = 0;     // set (atomically) by the first kernel thread that found an error
  unsigned int ready = 0;    // set after the fields below are written
  const char* op = nullptr;  // the op's name (a string literal: its address is the same in kernels and host)
  int64_t dim = 0, index = 0, size = 0;
};

// The record kernels on `device` write (mapped pinned memory, allocated on first use; one per device).
DeviceError* device_error(int device);
// Throws gb::IndexError for the first error any device reported since the last call (and clears it). The host reads
// `ready` with acquire ordering before the fields (the device wrote them, then __threadfence_system(), then ready):
// on a weakly ordered host (aarch64: Grace Hopper) a plain or volatile read could see ready and stale fields.
void raise_device_errors();
// For tests: `record` (ordinary host memory; nullptr to forget it) stands in for `device`'s record, so the host side
// runs without a device. Not for use while kernels may write the device's real record.
void set_device_error_record_for_test(int device, DeviceError* record);

#ifdef __CUDACC__
// In a kernel: records a bad index as the device's error unless one is recorded already. `op` must be a host
// string's address handed in by the launch (a literal written in device code is a device address).
__device__ inline void record_device_error(DeviceError* err, const char* op, int64_t dim, int64_t index, int64_t size) {
  if (atomicCAS(&err->flag, 0u, 1u) != 0u) return;
  err->op = op;
  err->dim = dim;
  err->index = index;
  err->size = size;
  __threadfence_system();
  atomicExch(&err->ready, 1u);
}
#endif

}  // namespace gb::cuda_kernels
