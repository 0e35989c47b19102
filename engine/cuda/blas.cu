// engine/cuda/blas.cu — matrix products through cuBLAS (cuda/kernels.h's gemm): one cublasGemmStridedBatchedEx per
// call, row-major operands passed as the column-major transposes cuBLAS expects (out^T = b^T a^T), one handle per
// thread and device, on the current stream with a workspace of that stream's own; a product plus a bias vector
// (addmm's, linear's) through cuBLASLt's bias epilogue (gemm_and_bias).
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <mutex>
#include <vector>

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

// cuBLAS's workspace per (thread, device, stream), kept for the process as the handles are. cublasSetStream resets a
// handle's workspace to its default pool, which the handle's one stream at a time is meant to use: a thread that
// queues GEMMs on two streams with its one handle would have kernels of both streams in that pool at once. Each
// stream gets its own buffer, bound after every cublasSetStream (PyTorch's getCurrentCUDABlasHandle keeps one per
// (handle, stream) for the same reason). The size is the cuBLASLt one (lt_workspace_bytes); the buffers come from
// cudaMalloc, outside the caching allocator, and are never freed, as the handles are not (per-stream scratch that
// lives as long as the streams, like the CUDA context's own memory).
void* workspace_for(int device, cudaStream_t stream, size_t bytes) {
  struct Entry {
    int device;
    cudaStream_t stream;
    void* buffer;
  };
  thread_local std::vector<Entry> entries;
  for (const Entry& e : entries)
    if (e.device == device && e.stream == stream) return e.buffer;
  void* p = nullptr;
  GB_CUDA_CHECK(cudaMalloc(&p, bytes));
  entries.push_back({device, stream, p});
  return p;
}

cublasLtHandle_t lt_handle_for(int device) {
  thread_local cublasLtHandle_t handles[kMaxDevices] = {};
  if (!handles[device]) GB_CUBLAS_CHECK(cublasLtCreate(&handles[device]));
  return handles[device];
}

// The largest power of two (up to 256, cuBLASLt's default assumption) that divides a buffer's address: the heuristic
// must not pick a kernel that needs more.
uint32_t alignment_of(const void* p) {
  uint32_t a = 256;
  while (a > 1 && reinterpret_cast<uintptr_t>(p) % a != 0) a /= 2;
  return a;
}

// cuBLASLt's descriptors, destroyed with the call.
struct LtCall {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtCall() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
  template <typename V>
  void set(cublasLtMatmulDescAttributes_t attr, const V& v) {
    GB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &v, sizeof v));
  }
  template <typename V>
  void prefer(cublasLtMatmulPreferenceAttributes_t attr, const V& v) {
    GB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &v, sizeof v));
  }
};

}  // namespace

bool gemm_and_bias(const GemmLaunch& l, const char* bias, void* workspace, size_t workspace_bytes,
                   GemmEpilogue epilogue) {
  if (l.batch != 1 || l.alpha != 1 || l.beta != 0 || l.n == 0 || l.m == 0 || l.k == 0) return false;
  if (l.n > INT32_MAX || l.m > INT32_MAX || l.k > INT32_MAX) return false;
  // cuBLASLt is told the matrices' alignment but not the bias's, and its kernels may load the bias 16 bytes at a time
  // (a "misaligned address" fault poisons the context): a bias view off a 16-byte boundary takes the copy + GEMM path
  if (reinterpret_cast<uintptr_t>(bias) % 16 != 0) return false;
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = l.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  switch (l.dtype) {
    case ScalarType::Float: break;
    case ScalarType::Half: type = CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; break;
    case ScalarType::BFloat16: type = CUDA_R_16BF; compute = CUBLAS_COMPUTE_32F; break;
    default: return false;
  }
  DeviceGuard g(l.device);
  cublasLtHandle_t h = lt_handle_for(l.device);
  LtCall c;
  GB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&c.desc, compute, CUDA_R_32F));
  // as gemm: column-major out^T (m x n) = op(b) (m x k) op(a) (k x n), cuBLASLt's A being our b
  const int32_t op_b = l.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = l.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.set(CUBLASLT_MATMUL_DESC_TRANSA, op_b);
  c.set(CUBLASLT_MATMUL_DESC_TRANSB, op_a);
  // the bias: one value per row of the column-major out^T, i.e. per column of our row-major out
  const cublasLtEpilogue_t kind = epilogue == GemmEpilogue::relu_bias   ? CUBLASLT_EPILOGUE_RELU_BIAS
                                  : epilogue == GemmEpilogue::gelu_bias ? CUBLASLT_EPILOGUE_GELU_BIAS
                                                                        : CUBLASLT_EPILOGUE_BIAS;
  c.set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(kind));
  c.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias));
  // stored (before op) shapes, column-major
  GB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c.a, type, l.trans_b ? l.k : l.m, l.trans_b ? l.m : l.k, l.ldb));
  GB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c.b, type, l.trans_a ? l.n : l.k, l.trans_a ? l.k : l.n, l.lda));
  GB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c.d, type, l.m, l.n, l.m));
  GB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&c.pref));
  c.prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(workspace_bytes));
  c.prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(l.b));
  c.prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(l.a));
  c.prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(l.out));
  c.prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(l.out));
  cublasLtMatmulHeuristicResult_t found = {};
  int count = 0;
  if (cublasLtMatmulAlgoGetHeuristic(h, c.desc, c.a, c.b, c.d, c.d, c.pref, 1, &found, &count) !=
          CUBLAS_STATUS_SUCCESS ||
      count == 0 || found.state != CUBLAS_STATUS_SUCCESS)
    return false;
  const float alpha = 1.0f, beta = 0.0f;
  const cublasStatus_t st = cublasLtMatmul(h, c.desc, &alpha, l.b, c.a, l.a, c.b, &beta, l.out, c.d, l.out, c.d,
                                           &found.algo, workspace, workspace_bytes, current_stream(l.device));
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return false;  // nothing launched: the caller's path
  check_cublas(st, "cublasLtMatmul", __LINE__);
  return true;
}

size_t lt_workspace_bytes(int device) {
  static int major[kMaxDevices] = {};  // compute capability major per device, asked once (0: not yet)
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (major[device] == 0)
    GB_CUDA_CHECK(cudaDeviceGetAttribute(&major[device], cudaDevAttrComputeCapabilityMajor, device));
  return major[device] >= 9 ? size_t(32) << 20 : size_t(4) << 20;
}

void gemm(const GemmLaunch& l) {
  if (l.batch == 0 || l.n == 0 || l.m == 0) return;
  GB_CHECK(l.n <= INT32_MAX && l.m <= INT32_MAX && l.k <= INT32_MAX && l.lda <= INT32_MAX && l.ldb <= INT32_MAX &&
               l.batch <= INT32_MAX,
           "matmul on cuda: a matrix dim (", l.n, "x", l.k, " @ ", l.k, "x", l.m, ") exceeds what cuBLAS indexes (2^31 - 1)");
  DeviceGuard g(l.device);
  cublasHandle_t h = handle_for(l.device);
  cudaStream_t stream = current_stream(l.device);
  GB_CUBLAS_CHECK(cublasSetStream(h, stream));
  const size_t ws = lt_workspace_bytes(l.device);
  GB_CUBLAS_CHECK(cublasSetWorkspace(h, workspace_for(l.device, stream, ws), ws));
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
