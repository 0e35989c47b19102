// glassbox/core/cuda_stream.h — CUDA streams as libtorch spells them (c10::cuda::CUDAStream and its functions, here
// in gb::cuda after the rename rule c10:: -> gb::).
//
// Each thread has a current stream per device, the device's default (legacy) stream until set. Kernels and copies
// glassbox launches go on the current stream of their tensors' device, and the caching allocator keys its free
// blocks by that stream (a block freed on stream s is handed out again only on s, so no event is needed while a
// tensor lives on the stream that made it):
//
//   gb::cuda::CUDAStream side = gb::cuda::getStreamFromPool();
//   {
//     gb::cuda::CUDAStreamGuard guard(side);   // this thread's current stream on side's device, until the scope ends
//     y = gb::matmul(a, b);                    // launched on `side`; y's memory belongs to side's pool
//   }
//   side.synchronize();
//
// Every function throws gb::Error naming the device when CUDA is not available (gb::cuda::unavailable_reason()).
#pragma once

#include <cstdint>
#include <ostream>

#include "glassbox/core/device.h"

// The runtime's own handle type, declared as cuda_runtime.h declares it, so this header needs no CUDA include.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;  // NOLINT(modernize-use-using): must match driver_types.h token for token

namespace gb::cuda {

class CUDAStream {
 public:
  CUDAStream(Device device, cudaStream_t stream) : device_(device), stream_(stream) {}

  Device device() const { return device_; }
  int device_index() const { return device_.index(); }
  cudaStream_t stream() const { return stream_; }
  operator cudaStream_t() const { return stream_; }  // NOLINT: implicit, as in libtorch
  // The id the caching allocator keys blocks by: 0 for the default stream, else the handle's address.
  int64_t id() const { return int64_t(reinterpret_cast<intptr_t>(stream_)); }
  // True when all work queued on the stream has finished (cudaStreamQuery).
  bool query() const;
  // Waits for all work queued on the stream (cudaStreamSynchronize).
  void synchronize() const;

  bool operator==(const CUDAStream& o) const { return device_ == o.device_ && stream_ == o.stream_; }
  bool operator!=(const CUDAStream& o) const { return !(*this == o); }

 private:
  Device device_;
  cudaStream_t stream_ = nullptr;
};

std::ostream& operator<<(std::ostream& os, const CUDAStream& s);

// device_index -1 means the current device (current_device()).
CUDAStream getDefaultCUDAStream(int device_index = -1);
CUDAStream getCurrentCUDAStream(int device_index = -1);
// One of a pool of streams made once per device (32 per priority, handed out round robin, never destroyed), as
// c10::cuda::getStreamFromPool. They do not synchronize with the default stream (cudaStreamNonBlocking).
CUDAStream getStreamFromPool(bool isHighPriority = false, int device_index = -1);
// Sets the calling thread's current stream on the stream's device.
void setCurrentCUDAStream(CUDAStream stream);

// Makes `stream` current on its device (and that device current) for the guard's scope, then restores both.
class CUDAStreamGuard {
 public:
  explicit CUDAStreamGuard(CUDAStream stream);
  ~CUDAStreamGuard();
  CUDAStreamGuard(const CUDAStreamGuard&) = delete;
  CUDAStreamGuard& operator=(const CUDAStreamGuard&) = delete;
  CUDAStream original_stream() const { return original_; }
  CUDAStream current_stream() const { return current_; }

 private:
  CUDAStream original_, current_;
  int original_device_ = 0;
};

// The calling thread's current device (cudaGetDevice) and setting it (cudaSetDevice), as torch.cuda does.
int current_device();
void set_device(int device_index);

// A CUDA event (at::cuda::CUDAEvent): record it on a stream, make another stream wait for it, time between two.
class CUDAEvent {
 public:
  explicit CUDAEvent(bool enable_timing = false) : timing_(enable_timing) {}
  ~CUDAEvent();
  CUDAEvent(const CUDAEvent&) = delete;
  CUDAEvent& operator=(const CUDAEvent&) = delete;
  CUDAEvent(CUDAEvent&& o) noexcept;
  CUDAEvent& operator=(CUDAEvent&& o) noexcept;

  void record();                           // on the current stream of the current device
  void record(const CUDAStream& stream);
  void block(const CUDAStream& stream);    // stream waits for this event (no host wait); nothing if never recorded
  bool query() const;                      // true when recorded work finished, or never recorded
  void synchronize() const;                // the host waits for it
  float elapsed_time(const CUDAEvent& end) const;  // milliseconds from this event to `end` (both with timing)
  bool isCreated() const { return event_ != nullptr; }

 private:
  void* event_ = nullptr;  // cudaEvent_t
  int device_ = -1;
  bool timing_ = false;
};

}  // namespace gb::cuda
