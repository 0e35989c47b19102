// engine/cuda/blas.cu — matrix products through cuBLAS (cuda/kernels.h's gemm): one cublasGemmStridedBatchedEx per
// call, row-major operands passed as the column-major transposes cuBLAS expects (out^T = b^T a^T), one handle per
// thread and device, on the current stream.
#include <cublas_v2.h>

#include "cuda/check.h"
#include "cuda/kernels.h"

namespace gb::cuda_kernels {
namespace {

constexpr int kMaxDevices = 64;

const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "an unknown cuBLAS status";
  }
}

void check_cublas(cublasStatus_t s, const char* call, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw Error(detail::str_cat(call, " failed at ", __FILE__, ":", line, ": ", status_name(s), " (", int(s), ")"));
}
#define GB_CUBLAS_CHECK(expr) check_cublas((expr), #expr, __LINE__)

// Handles are made on first use per thread and device and kept for the thread's life (cuBLAS handles are not
// thread safe; destroying them at thread exit could run after the driver has shut down, so they are not).
cublasHandle_t handle_for(int device) {
  thread_local cublasHandle_t handles[kMaxDevices] = {};
  if (!handles[device]) GB_CUBLAS_CHECK(cublasCreate(&handles[device]));
  return handles[device];
}

}  // namespace

void gemm(const GemmLaunch& l) {
  if (l.batch == 0 || l.n == 0 || l.m == 0) return;
  GB_CHECK(l.n <= INT32_MAX && l.m <= INT32_MAX && l.k <= INT32_MAX && l.lda <= INT32_MAX && l.ldb <= INT32_MAX &&
               l.batch <= INT32_MAX,
           "matmul on cuda: a matrix dim (", l.n, "x", l.k, " @ ", l.k, "x", l.m, ") exceeds what cuBLAS indexes (2^31 - 1)");
  DeviceGuard g(l.device);
  cublasHandle_t h = handle_for(l.device);
  GB_CUBLAS_CHECK(cublasSetStream(h, current_stream(l.device)));
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = l.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  switch (l.dtype) {
    case ScalarType::Float: break;
    case ScalarType::Double: type = CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; break;
    case ScalarType::Half: type = CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; break;
    case ScalarType::BFloat16: type = CUDA_R_16BF; compute = CUBLAS_COMPUTE_32F; break;
    default:
      throw Error(detail::str_cat("matmul on cuda: \"addmm_cuda\" not implemented for '", to_string(l.dtype),
                                  "' (cuBLAS multiplies floating matrices; convert with .to(gb::kFloat))"));
  }
  const float alpha_f = float(l.alpha), beta_f = float(l.beta);
  const double alpha_d = l.alpha, beta_d = l.beta;
  const void* alpha = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&beta_d) : &beta_f;
  // Row-major out (n x m) is column-major out^T (m x n) = b^T (m x k) a^T (k x n). A row-major operand is its
  // transpose in column-major with the same leading dimension, so it goes in untransposed; a column-major one
  // (trans_*) goes in transposed.
  const cublasOperation_t op_b = l.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = l.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  GB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, op_b, op_a, int(l.m), int(l.n), int(l.k), alpha, l.b, type,
                                             int(l.ldb), l.stride_b, l.a, type, int(l.lda), l.stride_a, beta, l.out,
                                             type, int(l.m), l.n * l.m, int(l.batch), compute,
                                             CUBLAS_GEMM_DEFAULT));
}

}  // namespace gb::cuda_kernels
