// engine/cuda/linalg_ops.cpp — the matrix products' CUDA half (cuda/ops.h): one cuBLAS strided-batched GEMM, or
// cuBLASLt's bias (+ activation) epilogue. The operands' layout as cuBLAS reads them is ops/cuda_gemm.h's (it shares
// the CPU GEMM's layout rules); the copies it makes stay alive until the launch is queued.
#include "core/make.h"
#include "cuda/ops.h"
#include "ops/cuda_gemm.h"

namespace gb::cuda_ops {

void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const detail::CudaGemm g = detail::cuda_gemm(out, a, b, alpha, beta);
  cuda_kernels::gemm(g.launch);
}

bool gemm_and_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                   cuda_kernels::GemmEpilogue epilogue) {
  const ScalarType t = out.scalar_type();
  if (!(t == kFloat || t == kHalf || t == kBFloat16) || a.size(1) == 0) return false;
  // cuBLASLt's scratch, from the caching allocator (the memory panel sees it): 32 MiB on Hopper and later, 4 MiB
  // before (cuda_kernels::lt_workspace_bytes says why)
  const int64_t workspace = int64_t(cuda_kernels::lt_workspace_bytes(int(out.device().index())));
  Tensor ws = detail::make_empty({workspace}, kUInt8, out.device());
  Tensor bc = detail::shallow_alias(bias).contiguous();
  const detail::CudaGemm g = detail::cuda_gemm(out, a, b, 1.0, 0.0);  // every buffer here outlives the launch
  return cuda_kernels::gemm_and_bias(g.launch, static_cast<const char*>(bc.data_ptr()), ws.data_ptr(),
                                     size_t(workspace), epilogue);
}

}  // namespace gb::cuda_ops
