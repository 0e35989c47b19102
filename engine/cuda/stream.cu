// engine/cuda/stream.cu — streams, events and the current device (glassbox/core/cuda_stream.h) and
// gb::cuda::synchronize. Compiled only when the build found nvcc (core/cuda_fallback.cpp answers otherwise).
#include <atomic>
#include <mutex>
#include <ostream>
#include <string>

#include "cuda/check.h"
#include "cuda/device_error.h"
#include "cuda/used_devices.h"
#include "glassbox/core/cuda.h"
#include "glassbox/core/cuda_stream.h"

namespace gb::cuda {
namespace {

constexpr int kMaxDevices = 64;
constexpr int kPoolSize = 32;  // per device and priority, as c10's kStreamsPerPool

struct StreamPool {
  std::once_flag made;
  cudaStream_t low[kPoolSize] = {}, high[kPoolSize] = {};
  std::atomic<uint32_t> next_low{0}, next_high{0};
};
StreamPool g_pools[kMaxDevices];

// nullptr is the device's default (legacy) stream; a thread starts there on every device.
thread_local cudaStream_t t_current[kMaxDevices] = {};

int resolve(int index) {
  if (index < 0) return current_device();
  check_device_index(index);
  return index;
}

void make_pool(int device, StreamPool& p) {
  cuda_kernels::DeviceGuard g(device);
  int least = 0, greatest = 0;  // "greatest" priority is the numerically lowest
  GB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (int i = 0; i < kPoolSize; ++i) {
    GB_CUDA_CHECK(cudaStreamCreateWithPriority(&p.low[i], cudaStreamNonBlocking, least));
    GB_CUDA_CHECK(cudaStreamCreateWithPriority(&p.high[i], cudaStreamNonBlocking, greatest));
  }
}

}  // namespace

void check_device_index(int64_t index) {
  if (!is_available())
    throw Error(detail::str_cat("cannot use cuda", index >= 0 ? ":" : "", index >= 0 ? std::to_string(index) : "",
                                ": CUDA is not available: ", unavailable_reason()));
  const int64_t n = device_count();
  if (index >= n)
    throw Error(detail::str_cat("cannot use cuda:", index, ": this machine has ", n,
                                " CUDA device(s) (cuda:0 to cuda:", n - 1,
                                "); check CUDA_VISIBLE_DEVICES, or use gb::cuda::device_count()"));
}

int current_device() {
  check_device_index(-1);
  int d = 0;
  GB_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device_index) {
  check_device_index(device_index);
  GB_CUDA_CHECK(cudaSetDevice(device_index));
}

void synchronize(int64_t device_index) {
  cuda_kernels::wait_device(resolve(int(device_index)));
  cuda_kernels::raise_device_errors();  // what the kernels found in their indices
}

bool CUDAStream::query() const {
  cuda_kernels::DeviceGuard g(device_.index());
  const cudaError_t err = cudaStreamQuery(stream_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  GB_CUDA_CHECK(err);
  return true;
}

void CUDAStream::synchronize() const {
  cuda_kernels::DeviceGuard g(device_.index());
  GB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  cuda_kernels::raise_device_errors();
}

std::ostream& operator<<(std::ostream& os, const CUDAStream& s) {
  return os << "stream " << s.id() << " on device " << s.device();
}

CUDAStream getDefaultCUDAStream(int device_index) {
  const int d = resolve(device_index);
  return CUDAStream(Device(kCUDA, d), nullptr);
}

CUDAStream getCurrentCUDAStream(int device_index) {
  const int d = resolve(device_index);
  return CUDAStream(Device(kCUDA, d), t_current[d]);
}

CUDAStream getStreamFromPool(bool isHighPriority, int device_index) {
  const int d = resolve(device_index);
  StreamPool& p = g_pools[d];
  std::call_once(p.made, [&] { make_pool(d, p); });
  const uint32_t i = (isHighPriority ? p.next_high : p.next_low).fetch_add(1) % kPoolSize;
  return CUDAStream(Device(kCUDA, d), isHighPriority ? p.high[i] : p.low[i]);
}

void setCurrentCUDAStream(CUDAStream stream) {
  GB_CHECK(stream.device().is_cuda() && stream.device_index() >= 0, "setCurrentCUDAStream: the stream's device ",
           stream.device(), " is not a cuda:N device; get streams from getStreamFromPool or getCurrentCUDAStream");
  check_device_index(stream.device_index());
  t_current[stream.device_index()] = stream.stream();
}

CUDAStreamGuard::CUDAStreamGuard(CUDAStream stream)
    : original_(getCurrentCUDAStream(stream.device_index())), current_(stream), original_device_(current_device()) {
  set_device(stream.device_index());
  setCurrentCUDAStream(stream);
}

CUDAStreamGuard::~CUDAStreamGuard() {
  t_current[original_.device_index()] = original_.stream();
  (void)cuda_kernels::cuda_ok_or_clear(cudaSetDevice(original_device_));
}

// ---- events ----

CUDAEvent::~CUDAEvent() {
  if (event_) {  // never throws (a destructor): a context in error only leaks the event
    cuda_kernels::DeviceGuard g(device_, std::nothrow);
    (void)cuda_kernels::cuda_ok_or_clear(cudaEventDestroy(static_cast<cudaEvent_t>(event_)));
  }
}

CUDAEvent::CUDAEvent(CUDAEvent&& o) noexcept : event_(o.event_), device_(o.device_), timing_(o.timing_) {
  o.event_ = nullptr;
}

CUDAEvent& CUDAEvent::operator=(CUDAEvent&& o) noexcept {
  if (this != &o) {
    this->~CUDAEvent();
    event_ = o.event_;
    device_ = o.device_;
    timing_ = o.timing_;
    o.event_ = nullptr;
  }
  return *this;
}

void CUDAEvent::record() { record(getCurrentCUDAStream()); }

void CUDAEvent::record(const CUDAStream& stream) {
  cuda_kernels::DeviceGuard g(stream.device_index());
  if (!event_) {
    cudaEvent_t e = nullptr;
    GB_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming));
    event_ = e;
    device_ = stream.device_index();
  }
  GB_CHECK(device_ == stream.device_index(), "CUDAEvent::record: the event belongs to cuda:", device_,
           " and cannot be recorded on a stream of cuda:", stream.device_index(), "; use one event per device");
  GB_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_), stream.stream()));
}

void CUDAEvent::block(const CUDAStream& stream) {
  if (!event_) return;
  cuda_kernels::DeviceGuard g(stream.device_index());
  GB_CUDA_CHECK(cudaStreamWaitEvent(stream.stream(), static_cast<cudaEvent_t>(event_), 0));
}

bool CUDAEvent::query() const {
  if (!event_) return true;
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  GB_CUDA_CHECK(err);
  return true;
}

void CUDAEvent::synchronize() const {
  if (event_) GB_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
  cuda_kernels::raise_device_errors();
}

float CUDAEvent::elapsed_time(const CUDAEvent& end) const {
  GB_CHECK(timing_ && end.timing_, "CUDAEvent::elapsed_time: both events must be made with enable_timing=true");
  GB_CHECK(event_ && end.event_, "CUDAEvent::elapsed_time: both events must be recorded first");
  float ms = 0;
  GB_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(event_), static_cast<cudaEvent_t>(end.event_)));
  return ms;
}

}  // namespace gb::cuda

namespace gb::cuda_kernels {
namespace {
std::atomic<std::uint64_t> g_used{0};  // bit d: cuda:d has had work queued
}  // namespace

std::uint64_t used_devices() { return g_used.load(std::memory_order_acquire); }

void wait_device(int device) {
  DeviceGuard g(device);
  GB_CUDA_CHECK(cudaDeviceSynchronize());
}

cudaStream_t current_stream(int device) {
  const std::uint64_t bit = std::uint64_t(1) << device;
  if (!(g_used.load(std::memory_order_relaxed) & bit) && !(g_used.fetch_or(bit, std::memory_order_acq_rel) & bit))
    sync_devices_at_trace_end();  // the first work on this device: a trace's end waits for it (trace_sync.cpp)
  return gb::cuda::getCurrentCUDAStream(device).stream();
}
}  // namespace gb::cuda_kernels
