// engine/cuda/kernels.h — the CUDA kernels as the CPU-side ops call them (internal; plain C++17 with no CUDA types,
// so the g++-compiled ops include it).
//
// engine/cuda/*.cu define these functions; a build without nvcc defines them in engine/core/cuda_fallback.cpp to
// throw (no cuda tensor can exist there to reach them). The op entries (ops/*.cpp) keep every check, shape rule,
// dtype promotion and autograd record, and call one of these where the CPU op runs its loop: see cuda/launch.h
// (detail::cuda_pointwise and friends) for the Tensor-taking side. Every function launches on the current stream
// of `device` (glassbox/core/cuda_stream.h) and returns without waiting, except where it says it waits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/offset_calc.h"
#include "cuda/pointwise_ops.h"
#include "glassbox/core/dtype.h"

namespace gb::cuda_kernels {

// One elementwise launch: operand 0 is the output; all share numel and calc (strides in bytes).
struct PointwiseLaunch {
  int device = 0;
  PwArgs args;
  ScalarType dtype = ScalarType::Float;  // the values' dtype (the inputs' for a comparison, whose output is bool)
  int64_t numel = 0;
  OffsetCalc calc;
  char* data[kMaxOperands] = {};
};
void pointwise(const PointwiseLaunch& l);

// dst = src element by element, converting dtype (both on `device`, same numel, any strides in bytes in calc with
// operand 0 dst and 1 src).
struct CopyLaunch {
  int device = 0;
  ScalarType dst_dtype = ScalarType::Float, src_dtype = ScalarType::Float;
  int64_t numel = 0;
  OffsetCalc calc;
  char* dst = nullptr;
  const char* src = nullptr;
};
void copy(const CopyLaunch& l);

// Bytes between host and device or device and device (cudaMemcpyAsync / cudaMemcpyPeerAsync on the current stream
// of the device side; of dst's device for device to device). `wait`: the host waits for the copy (a copy from or to
// pageable memory, or a blocking one); otherwise it returns at once (pinned host memory, non_blocking=true).
enum class CopyKind { host_to_device, device_to_host, device_to_device };
void memcpy(void* dst, int dst_device, const void* src, int src_device, size_t nbytes, CopyKind kind, bool wait);

// Row reductions: in is contiguous [rows, len] of in_dtype, out is contiguous [rows] of the accumulation type (double
// for double, int64 for integers and bool, float otherwise), each row reduced with `op` and divided by len for mean. Empty rows give the op's identity (0 for sum, NaN for mean; max/min refuse them in the op entry).
enum class ReduceOp { sum, mean, max, min, prod };
struct ReduceLaunch {
  int device = 0;
  ReduceOp op = ReduceOp::sum;
  ScalarType in_dtype = ScalarType::Float;  // out is in the accumulation type (the caller converts after)
  int64_t rows = 0, len = 0;
  const char* in = nullptr;
  char* out = nullptr;
  char* scratch = nullptr;  // reduce_scratch_bytes(rows, len) bytes on the device, from the caching allocator
};
// A few long rows are split over many blocks: each row into reduce_chunks pieces reduced into scratch first.
inline int64_t reduce_chunks(int64_t rows, int64_t len) {
  constexpr int64_t kChunk = 16384;
  if (rows >= 256 || len <= 2 * kChunk) return 1;
  const int64_t c = (len + kChunk - 1) / kChunk;
  return c < 1024 ? c : 1024;
}
inline int64_t reduce_scratch_bytes(int64_t rows, int64_t len) {
  const int64_t c = reduce_chunks(rows, len);
  return c == 1 ? 0 : rows * c * 8;
}
void reduce_rows(const ReduceLaunch& l);

// Column reductions: in is contiguous [outer, len, inner] of in_dtype, out contiguous [outer, inner] of the
// accumulation type: out[o, j] reduces in[o, :, j]. What a reduction over leading dims is (a Linear's bias gradient
// sums (batch, features) over dim 0) without first copying the input to rows: each warp's lanes own adjacent
// columns, so every load is coalesced; the threads of a block share each column's len, and when the columns are too
// few to fill the device the len is also split over several blocks into partials (scratch) reduced again.
struct ColumnReduceLaunch {
  int device = 0;
  ReduceOp op = ReduceOp::sum;
  ScalarType in_dtype = ScalarType::Float;
  int64_t outer = 1, len = 0, inner = 1;
  const char* in = nullptr;
  char* out = nullptr;
  char* scratch = nullptr;  // column_reduce_scratch_bytes(outer, len, inner) bytes on the device
};
// How many pieces each column's len is split into: enough blocks for a device of ~128 SMs, pieces of >= 64 rows.
inline int64_t column_reduce_chunks(int64_t outer, int64_t len, int64_t inner) {
  const int64_t col_blocks = outer * ((inner + 31) / 32);
  if (col_blocks >= 256 || len < 128) return 1;
  int64_t c = 256 / col_blocks;
  if (c > len / 64) c = len / 64;
  return c < 1 ? 1 : c > 1024 ? 1024 : c;
}
inline int64_t column_reduce_scratch_bytes(int64_t outer, int64_t len, int64_t inner) {
  const int64_t c = column_reduce_chunks(outer, len, inner);
  return c == 1 ? 0 : outer * c * inner * 8;
}
void reduce_columns(const ColumnReduceLaunch& l);

// out[b] = alpha * op(a[b]) @ op(b[b]) + beta * out[b] for b < batch through cuBLAS, row-major as the CPU's GEMM:
// a is n x k, b is k x m, out n x m contiguous. trans_a / trans_b: the operand is stored column-major (a transposed
// row-major matrix); lda / ldb its leading dimension; stride_a / stride_b elements between batches (0 broadcasts).
// float32 uses TF32 tensor cores only when allow_tf32 (torch.backends.cuda.matmul.allow_tf32, off by default);
// float16 and bfloat16 accumulate in float32.
struct GemmLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t batch = 1, n = 0, m = 0, k = 0;
  bool trans_a = false, trans_b = false;
  int64_t lda = 0, ldb = 0, stride_a = 0, stride_b = 0;
  const char* a = nullptr;
  const char* b = nullptr;
  char* out = nullptr;
  double alpha = 1, beta = 0;
  bool allow_tf32 = false;
};
void gemm(const GemmLaunch& l);
// out = a @ b + bias for one product (batch 1, alpha 1, beta 0) of float32/float16/bfloat16 through cuBLASLt's bias
// epilogue: bias holds m values of out's dtype, contiguous, one per column of the row-major out (PyTorch's
// gemm_and_bias, what addmm with a 1-D bias takes on cuda); relu_bias and gelu_bias apply relu or GELU (its tanh
// form, cuBLASLt's) to the sum in the same kernel (_addmm_activation). workspace: workspace_bytes the caller
// allocated from the caching allocator. Returns false, having launched nothing, when cuBLASLt offers no algorithm for
// the case or the bias is not 16-byte aligned (the caller then takes the copy + gemm path).
enum class GemmEpilogue { bias, relu_bias, gelu_bias };
bool gemm_and_bias(const GemmLaunch& l, const char* bias, void* workspace, size_t workspace_bytes,
                   GemmEpilogue epilogue = GemmEpilogue::bias);
// The cuBLASLt workspace gemm_and_bias is given on `device`: 32 MiB on compute capability 9.0 and later, 4 MiB
// before. Hopper's kernels (TMA, warp-specialized, split-K reducing through the workspace) need more scratch than
// Ampere's; with 4 MiB the heuristic leaves out those that need more and offers slower ones. PyTorch's default is
// the same ("32MiB for Hopper", CublasHandlePool.cpp's getChosenWorkspaceSize, 4096 * 8 * 1024 on major 9 and later).
// blas.cu's per-stream cuBLAS workspaces take this size too.
size_t lt_workspace_bytes(int device);

// 2-d pooling over the last two dims of contiguous planes (planes = every leading dim), in the ops' compute types
// (float or double: the entries convert 16-bit inputs first, as on the CPU). Each kernel reproduces the CPU's
// arithmetic order, so float results are the CPU's bits; the backward ones gather per input element (no atomics:
// deterministic).
struct MaxPoolLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t planes = 0, H = 0, W = 0, Ho = 0, Wo = 0;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1;
  const char* in = nullptr;
  char* out = nullptr;
  int64_t* idx = nullptr;  // flat h * W + w in the plane
};
// in (planes, H, W) -> out, idx (planes, Ho, Wo): each window's first maximum, row by row; its last NaN if any.
void max_pool2d_forward(const MaxPoolLaunch& l);
// in = the gradient (planes, Ho, Wo), idx -> out (planes, H, W): each input element the sum of the gradients whose
// index names it, in output order.
void max_pool2d_backward(const MaxPoolLaunch& l);
// in (planes, H, W), idx -> out (planes, Ho, Wo) = in at idx (max pooling at known indices: the double backward).
void max_pool2d_gather(const MaxPoolLaunch& l);

// Window means: avg_pool2d's windows (kernel, stride, padding; count_include_pad; divisor_override, 0: none) or
// adaptive_avg_pool2d's (start floor(o * in / out), end ceil((o + 1) * in / out)), the CPU's Windows exactly.
struct WindowMeanLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t planes = 0, H = 0, W = 0, Ho = 0, Wo = 0;
  bool adaptive = false;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0;
  bool count_include_pad = true;
  int64_t divisor_override = 0;
  const char* in = nullptr;
  char* out = nullptr;
};
// in (planes, H, W) -> out (planes, Ho, Wo) = each window's sum / its divisor.
void window_mean_forward(const WindowMeanLaunch& l);
// in = the gradient (planes, Ho, Wo) -> out (planes, H, W): each input element the sum of g / divisor over the
// windows holding it.
void window_mean_backward(const WindowMeanLaunch& l);

// Row normalization forward (layer_norm, group_norm): x contiguous [rows, len] in the compute type (float or
// double); each row's mean and biased variance accumulated in double (as the CPU), mean[r] and rstd[r] =
// 1/sqrt(var + eps) written, then y = (x - mean) * rstd * w + b. groups == 0: layer_norm, w and b (either null)
// indexed by the position in the row; groups > 0: group_norm, row r is group r % groups of a sample, w and b per
// channel, channel (r % groups) * (len / S) + i / S for element i of the row, S elements per channel.
struct RowNormLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t rows = 0, len = 0;
  int64_t groups = 0, S = 1;
  double eps = 1e-5;
  const char* x = nullptr;
  const char* w = nullptr;
  const char* b = nullptr;
  char* y = nullptr;
  char* mean = nullptr;
  char* rstd = nullptr;
};
void row_norm_forward(const RowNormLaunch& l);

// Dropout on cuda: x contiguous, n elements of a floating dtype; mask[i] = 1 where kept (uniform < keep), else 0,
// in x's dtype; out[i] = x[i] * mask[i] * scale (out null: the mask only). Element i takes number i % 4 of
// Philox4x32-10's uniform4 at (seed, subsequence i / 4, offset): the same mask for any launch configuration; the op
// reserves kDropoutOffsetIncrement numbers per subsequence (cuda/philox.h) for each call.
constexpr uint64_t kDropoutOffsetIncrement = 4;
struct DropoutLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int64_t n = 0;
  double keep = 1, scale = 1;
  uint64_t seed = 0, offset = 0;
  const char* x = nullptr;
  char* mask = nullptr;
  char* out = nullptr;
};
void dropout(const DropoutLaunch& l);

// GradScaler's unscale on cuda, for up to kMaxUnscaleTensors contiguous gradients of one floating dtype on one
// device per launch: every element multiplied by inv_scale in place, and *found_inf (a float on the device) set to 1
// when any element was not finite (never cleared: the caller zeroes it once per check). One kernel for the list.
constexpr int kMaxUnscaleTensors = 64;
struct UnscaleLaunch {
  int device = 0;
  ScalarType dtype = ScalarType::Float;
  int count = 0;
  double inv_scale = 1;
  char* data[kMaxUnscaleTensors] = {};
  int64_t numel[kMaxUnscaleTensors] = {};
  float* found_inf = nullptr;
};
void non_finite_check_and_unscale(const UnscaleLaunch& l);

}  // namespace gb::cuda_kernels
