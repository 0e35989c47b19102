// engine/cuda/device_error.cu — the per-device records of errors found by kernels (cuda/device_error.h).
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <mutex>

#include "cuda/check.h"
#include "cuda/device_error.h"
#include "glassbox/core/error.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kMaxDevices = 64;
std::array<std::atomic<DeviceError*>, kMaxDevices> g_records{};
std::mutex g_mu;  // allocation only

}  // namespace

DeviceError* device_error(int device) {
  GB_CHECK(device >= 0 && device < kMaxDevices, "cuda:", device, " is beyond the ", kMaxDevices,
           " devices glassbox keeps error records for");
  DeviceError* r = g_records[size_t(device)].load(std::memory_order_acquire);
  if (r) return r;
  std::lock_guard lock(g_mu);
  r = g_records[size_t(device)].load(std::memory_order_relaxed);
  if (r) return r;
  DeviceGuard guard(device);
  void* p = nullptr;
  GB_CUDA_CHECK(cudaHostAlloc(&p, sizeof(DeviceError), cudaHostAllocMapped | cudaHostAllocPortable));
  r = new (p) DeviceError();
  g_records[size_t(device)].store(r, std::memory_order_release);
  return r;  // with unified addressing, the host pointer is the device pointer
}

void raise_device_errors() {
  for (int d = 0; d < kMaxDevices; ++d) {
    DeviceError* r = g_records[size_t(d)].load(std::memory_order_acquire);
    if (!r) continue;
    // acquire: the fields below are read after `ready` (the device published them before it with a system fence)
    if (!__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE)) continue;
    const char* op = r->op;
    const int64_t dim = r->dim, index = r->index, size = r->size;
    __atomic_store_n(&r->ready, 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&r->flag, 0u, __ATOMIC_RELEASE);  // last, after the reads: the next error is reported too
    throw IndexError(detail::str_cat(
        op, "() on cuda:", d, ": index ", index, " is out of bounds for dimension ", dim, " with size ", size,
        " (found on the device by the kernel, which skipped it, and reported at the next synchronization or "
        "index kernel launch after it: results computed from that op since are wrong; on the cpu the op itself "
        "refuses it)"));
  }
}

void set_device_error_record_for_test(int device, DeviceError* record) {
  GB_CHECK(device >= 0 && device < kMaxDevices, "set_device_error_record_for_test: no cuda:", device);
  g_records[size_t(device)].store(record, std::memory_order_release);
}

}  // namespace gb::cuda_kernels
