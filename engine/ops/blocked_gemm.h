// engine/ops/blocked_gemm.h — large float matrix products on libxsmm's AVX-512 kernels, blocked for the caches and
// split over glassbox's pool.
//
// Past small_gemm's 4M multiply-adds (ops/small_gemm.h) a product needs what OpenBLAS does around its kernels:
// blocks of B packed contiguous (a linear layer's W^T copied transposed a block at a time, never the whole matrix),
// a block of A kept in L2 across them, and threads. This does that around libxsmm's kernels: for every KB-deep slice
// of k and RB rows of A, each column block of B (NB wide) is packed into a per-thread buffer and one generated kernel
// multiplies it into C. C is cut into RB x NB tiles on a grid fixed by its shape, the threads take disjoint runs of
// tiles, and each element is summed by the same kernel in the same order whatever the thread count: a product's
// bits do not depend on the number of threads (tested). Measured on this project's VM (AMD EPYC, AVX-512; bench_matmul,
// the MLP's five large products, 2 threads): 190-212 GFLOP/s against OpenBLAS's own AVX-512 kernels' 145-188.
//
// On AVX2 CPUs libxsmm's kernels lose to OpenBLAS's at these sizes (0.7-0.9x its rate here with both held to AVX2),
// so large products stay OpenBLAS's there; doubles too (training runs in float; the f64 oracles keep OpenBLAS).
#pragma once

#include <cstdint>
#include <string>

namespace gb::detail {

// Whether blocked_gemm takes the product on `threads` threads: built with libxsmm, float, more than 4M
// multiply-adds (smaller ones are small_gemm's on its one thread) or more than 512K with more than one thread, every
// dim at least 16, alpha 1, beta 0 or 1, and glassbox's kernels at AVX-512 on a CPU that has it.
bool blocked_gemm_fits(int64_t n, int64_t m, int64_t k, double alpha, double beta, int threads);

// C (n x m, row-major, leading dimension ldc) = op(A) (n x k) * op(B) (k x m) + beta * C, the arguments as
// cblas_sgemm(CblasRowMajor, ...) takes them. Runs it and returns true, or does nothing and returns false (OpenBLAS's
// then) when blocked_gemm_fits(..., threads) is false or libxsmm generates no kernel. Splits the work over `threads`
// threads of glassbox's pool (1: on the calling thread).
bool blocked_gemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads);

// "libxsmm 1.17 (cpx), 64x256 blocks" — or why large products are OpenBLAS's ("off: needs AVX-512 (this CPU: avx2)").
// A trace's meta `large_gemm` holds it.
std::string blocked_gemm_backend();

}  // namespace gb::detail
