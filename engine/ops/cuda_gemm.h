// engine/ops/cuda_gemm.h — the operands of a matrix product on cuda:N as cuBLAS reads them (internal; defined in
// ops/linalg.cpp next to the CPU's GEMM, whose layout rules it shares).
//
// An operand that is neither row- nor column-major is copied to a contiguous tensor first. The launch record holds
// only raw pointers, so the copies live in this struct: the caller keeps it until the GEMM has been queued on the
// stream. (Freed before, a copy's block could go to another thread allocating on the same stream, whose writes
// would then be queued before the GEMM that reads it.)
#pragma once

#include "cuda/kernels.h"
#include "glassbox/core/tensor.h"

namespace gb::detail {

struct CudaGemm {
  Tensor a_copy, b_copy;  // the contiguous copies the launch reads (undefined: the operand is read as it is)
  cuda_kernels::GemmLaunch launch;
};

// out (B,N,M) contiguous = alpha * a (B,N,K) @ b (B,K,M) + beta * out, or the same as 2-D matrices. Reads only
// sizes, strides and addresses, so it runs on any device (the tests make one on the cpu).
CudaGemm cuda_gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta);

}  // namespace gb::detail
