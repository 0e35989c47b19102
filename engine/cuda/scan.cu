// engine/cuda/scan.cu — the training monitor's scan on cuda (cuda/scan_kernels.h): one launch for up to
// kMaxScanTensors tensors, blockIdx.y the tensor; each thread counts NaN, Inf and zeros and sums squares in double
// over a grid-stride loop, a block folds its threads with warp shuffles, and one thread per block adds the block's
// part into the tensor's slot with atomics. Nothing is read back here: the slots stay on the device until the
// monitor reads them all at once.
#include <cstdint>

#include "cuda/check.h"
#include "cuda/multi_tensor.h"
#include "cuda/pointwise_ops.h"
#include "cuda/scan_kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kThreads = 256;

struct Part {
  unsigned long long nan = 0, inf = 0, zeros = 0, max_bits = 0;
  double sumsq = 0;
};

__device__ void fold_warp(Part& p) {
  for (int o = 16; o > 0; o >>= 1) {
    p.nan += __shfl_down_sync(0xffffffffu, p.nan, o);
    p.inf += __shfl_down_sync(0xffffffffu, p.inf, o);
    p.zeros += __shfl_down_sync(0xffffffffu, p.zeros, o);
    const unsigned long long m = __shfl_down_sync(0xffffffffu, p.max_bits, o);
    p.max_bits = m > p.max_bits ? m : p.max_bits;
    p.sumsq += __shfl_down_sync(0xffffffffu, p.sumsq, o);
  }
}

template <typename T>
__device__ void scan_one(const T* x, int64_t n, ScanSlot* slot) {
  Part p;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double v = double(load(x + i));
    if (i == 0) slot->first = v;
    if (isnan(v)) {
      ++p.nan;
    } else if (isinf(v)) {
      ++p.inf;
    } else {
      const unsigned long long b = __double_as_longlong(fabs(v));
      p.max_bits = b > p.max_bits ? b : p.max_bits;
    }
    p.zeros += v == 0.0;
    p.sumsq += v * v;
  }
  fold_warp(p);
  __shared__ Part warps[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warps[warp] = p;
  __syncthreads();
  if (warp != 0) return;
  p = lane < kThreads / 32 ? warps[lane] : Part{};
  fold_warp(p);
  if (lane != 0) return;
  if (p.nan) atomicAdd(&slot->nan, p.nan);
  if (p.inf) atomicAdd(&slot->inf, p.inf);
  if (p.zeros) atomicAdd(&slot->zeros, p.zeros);
  if (p.max_bits) atomicMax(&slot->max_bits, p.max_bits);
  if (p.sumsq != 0.0 || p.nan || p.inf) atomicAdd(&slot->sumsq, p.sumsq);
}

__global__ void scan_kernel(ScanLaunch l) {
  const int t = blockIdx.y;
  ScanSlot* slot = l.slots + l.slot[t];
  switch (l.dtype[t]) {  // one dtype per blockIdx.y: no divergence inside a block
    case ScalarType::Float:
      scan_one(static_cast<const float*>(l.data[t]), l.numel[t], slot);
      break;
    case ScalarType::Double:
      scan_one(static_cast<const double*>(l.data[t]), l.numel[t], slot);
      break;
    case ScalarType::Half:
      scan_one(static_cast<const Half*>(l.data[t]), l.numel[t], slot);
      break;
    case ScalarType::BFloat16:
      scan_one(static_cast<const BFloat16*>(l.data[t]), l.numel[t], slot);
      break;
    default:
      break;  // the monitor scans floating tensors only
  }
}

}  // namespace

void monitor_scan(const ScanLaunch& l) {
  if (l.count == 0) return;
  DeviceGuard guard(l.device);
  const dim3 grid = multi_tensor_grid(l.numel, l.count, kThreads);
  scan_kernel<<<grid, kThreads, 0, current_stream(l.device)>>>(l);
  GB_CUDA_CHECK(cudaGetLastError());
}

ScanSlot* scan_slots_alloc(int device, int n) {
  DeviceGuard guard(device);
  void* p = nullptr;
  GB_CUDA_CHECK(cudaMalloc(&p, sizeof(ScanSlot) * size_t(n)));
  // Zeroed on the caller's stream, and waited for: the scans run on whichever stream is current where the monitor
  // checks (pool streams are non-blocking, so a cudaMemset on the legacy stream could land after the first scans,
  // or a backward node's stream could scan before a memset queued on the caller's).
  const cudaStream_t s = current_stream(device);
  const cudaError_t zeroed = cudaMemsetAsync(p, 0, sizeof(ScanSlot) * size_t(n), s);
  const cudaError_t waited = zeroed == cudaSuccess ? cudaStreamSynchronize(s) : zeroed;
  if (waited != cudaSuccess) (void)cuda_ok_or_clear(cudaFree(p));
  GB_CUDA_CHECK(waited);
  return static_cast<ScanSlot*>(p);
}

void scan_slots_free(int device, ScanSlot* slots) noexcept {
  if (!slots) return;
  DeviceGuard guard(device, std::nothrow);
  (void)cuda_ok_or_clear(cudaFree(slots));
}

void scan_slots_read(int device, ScanSlot* slots, int n, ScanSlot* host) {
  if (n <= 0) return;
  DeviceGuard guard(device);
  // every stream the scans were launched on (the monitor's one wait per step)
  GB_CUDA_CHECK(cudaDeviceSynchronize());
  GB_CUDA_CHECK(cudaMemcpy(host, slots, sizeof(ScanSlot) * size_t(n), cudaMemcpyDeviceToHost));
  // zeroed before the host goes on: cudaMemset on device memory may return first, and the scans' streams are
  // non-blocking ones that would not wait for it
  GB_CUDA_CHECK(cudaMemsetAsync(slots, 0, sizeof(ScanSlot) * size_t(n), nullptr));
  GB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  // a kernel's bad index (cuda/device_error.h) stays recorded for the program's next synchronization: the monitor
  // must not swallow it
}

}  // namespace gb::cuda_kernels
