// engine/cuda/cudnn_util.h — what the cuDNN callers share (internal; included only where GLASSBOX_WITH_CUDNN is
// set): every call checked (GB_CUDNN_CHECK throws gb::Error naming the call, its line and cuDNN's message), one
// handle per thread and device (cuDNN handles are not thread safe) set to the current stream, cuDNN's data type of
// a dtype, and dims checked against cuDNN's int indexing.
#pragma once

#include <cudnn.h>

#include <climits>

#include "cuda/check.h"
#include "glassbox/core/dtype.h"
#include "glassbox/core/error.h"

namespace gb::cuda_kernels {

inline void check_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  throw Error(detail::str_cat(call, " failed at ", file, ":", line, ": ", cudnnGetErrorString(s), " (", int(s), ")"));
}
#define GB_CUDNN_CHECK(expr) ::gb::cuda_kernels::check_cudnn((expr), #expr, __FILE__, __LINE__)

// The calling thread's handle for `device`, on the thread's current stream there. Handles live as long as the
// thread (destroying them at thread exit could run after the driver has shut down).
inline cudnnHandle_t cudnn_handle(int device, const char* op) {
  constexpr int kMaxDevices = 64;
  thread_local cudnnHandle_t handles[kMaxDevices] = {};
  GB_CHECK(device >= 0 && device < kMaxDevices, op, " on cuda: device index ", device, " is out of range");
  if (!handles[device]) GB_CUDNN_CHECK(cudnnCreate(&handles[device]));
  GB_CUDNN_CHECK(cudnnSetStream(handles[device], current_stream(device)));
  return handles[device];
}

inline cudnnDataType_t cudnn_type(ScalarType t, const char* op) {
  switch (t) {
    case ScalarType::Float:
      return CUDNN_DATA_FLOAT;
    case ScalarType::Double:
      return CUDNN_DATA_DOUBLE;
    case ScalarType::Half:
      return CUDNN_DATA_HALF;
    case ScalarType::BFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      throw TypeError(detail::str_cat(op, " on cuda: cuDNN takes float32, float64, float16 and bfloat16, not ",
                                      to_string(t), "; convert with .to(gb::kFloat)"));
  }
}

// v as cuDNN's int, or an error naming the op and the tensor it describes.
inline int cudnn_int(int64_t v, const char* op, const char* what) {
  GB_CHECK(v >= 0 && v <= INT_MAX, op, " on cuda: ", what, " has a dimension of ", v,
           ", more than cuDNN indexes (2^31 - 1)");
  return int(v);
}

// A 4-d NCHW tensor descriptor, destroyed with the object.
struct CudnnTensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  CudnnTensorDesc(cudnnDataType_t t, int64_t n, int64_t c, int64_t h, int64_t w, const char* op, const char* what) {
    GB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d));
    GB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, t, cudnn_int(n, op, what), cudnn_int(c, op, what),
                                              cudnn_int(h, op, what), cudnn_int(w, op, what)));
  }
  ~CudnnTensorDesc() { cudnnDestroyTensorDescriptor(d); }
  CudnnTensorDesc(const CudnnTensorDesc&) = delete;
  CudnnTensorDesc& operator=(const CudnnTensorDesc&) = delete;
};

// alpha/beta constants 0 and 1 in the type cuDNN reads for `t` (double for float64, float otherwise).
inline const void* cudnn_scalar(ScalarType t, int v) {
  static const double d[2] = {0.0, 1.0};
  static const float f[2] = {0.0f, 1.0f};
  return t == ScalarType::Double ? static_cast<const void*>(&d[v]) : static_cast<const void*>(&f[v]);
}

}  // namespace gb::cuda_kernels
