// engine/memory/cuda_allocator.cu — cuda:N's raw allocator: cudaMalloc/cudaFree, with the context measured by
// cudaMemGetInfo when it is made. Compiled only when the build found nvcc (cuda_allocator_fallback.cpp otherwise).
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <string>

#include "glassbox/core/error.h"
#include "glassbox/memory/raw_allocator.h"

namespace gb::memory {
namespace {

void check(cudaError_t err, const char* call, int index) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(detail::str_cat(call, " on cuda:", index, " failed: ", cudaGetErrorString(err), " (",
                              cudaGetErrorName(err), ")"));
}

// Makes `index` current for the caller's scope and restores the previous device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index) {
    check(cudaGetDevice(&prev_), "cudaGetDevice", index);
    if (prev_ != index) check(cudaSetDevice(index), "cudaSetDevice", index);
  }
  ~DeviceGuard() {
    if (cudaSetDevice(prev_) != cudaSuccess) (void)cudaGetLastError();  // not left for the next launch check
  }

 private:
  int prev_ = 0;
};

class CudaRawAllocator final : public RawAllocator {
 public:
  explicit CudaRawAllocator(int index) : index_(index) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    if (index < 0 || index >= n)
      throw Error(detail::str_cat("cannot allocate on cuda:", index, ": this machine has ", n,
                                  " CUDA device(s) visible. Use gb::cuda::device_count() to check, or gb::kCPU / gb::kMeta"));
    DeviceGuard g(index_);
    check(cudaFree(nullptr), "cudaFree(0) (context creation)", index_);
    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo", index_);
    total_ = int64_t(total);
    context_ = int64_t(total - free);  // the context, plus whatever other processes hold
  }

  void* allocate(size_t nbytes) override {
    DeviceGuard g(index_);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    check(err, "cudaMalloc", index_);
    return p;
  }
  void deallocate(void* ptr, size_t) override {
    DeviceGuard g(index_);
    check(cudaFree(ptr), "cudaFree", index_);
  }
  Device device() const override { return Device(kCUDA, index_); }

  // record_stream's events: the stream id is the cudaStream_t's address (0: the default stream). Called from a
  // storage's deleter (CachingAllocator::free), so it never throws: without an event it waits for the stream (the
  // block is then free at once: nullptr), and when even that fails (a context in error, where no kernel runs any
  // more) it says so and answers nullptr too.
  void* record_event(int64_t stream) noexcept override {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    try {
      DeviceGuard g(index_);
      cudaEvent_t ev = nullptr;
      if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess) {
        if (cudaEventRecord(ev, s) == cudaSuccess) return ev;
        (void)cudaEventDestroy(ev);
      }
      (void)cudaGetLastError();  // the failures above, cleared; the wait below is checked
      check(cudaStreamSynchronize(s), "cudaStreamSynchronize (no event could be recorded)", index_);
    } catch (const std::exception& e) {  // check() has cleared the error
      std::fprintf(stderr, "glassbox: warning: cuda:%d: freeing a block used on another stream: %s\n", index_,
                   e.what());
    }
    return nullptr;
  }
  bool event_done(void* event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err, "cudaEventQuery", index_);
    return true;
  }
  void wait_event(void* event) override {
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize", index_);
  }
  void destroy_event(void* event) override {
    DeviceGuard g(index_);
    check(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy", index_);
  }
  int64_t total_bytes() const override { return total_; }
  int64_t context_bytes() const override { return context_; }
  void set_context_bytes(int64_t) override {
    throw Error(detail::str_cat("set_context_bytes: cuda:", index_,
                                "'s context is measured with cudaMemGetInfo, not set; it applies to cpu and meta"));
  }

 private:
  int index_;
  int64_t total_ = 0, context_ = 0;
};

}  // namespace

std::unique_ptr<RawAllocator> make_cuda_raw_allocator(int index) { return std::make_unique<CudaRawAllocator>(index); }

}  // namespace gb::memory
