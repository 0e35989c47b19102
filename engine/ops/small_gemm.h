// engine/ops/small_gemm.h — small matrix products on libxsmm's JIT kernels (Debian's libxsmm-dev).
//
// A GEMM of up to a few million multiply-adds (a tiny MLP's 32x64x64, one attention head of a short sequence) runs
// on one thread (ops/linalg.cpp) and spends much of OpenBLAS's time packing its operands into panels and in per-call
// set-up. libxsmm generates a kernel for the exact shape and this CPU's widest vectors at the first call and runs it
// straight on the operands: 2.0-2.3x faster than OpenBLAS here (bench/bench_matmul.cpp), where OPENBLAS_CORETYPE
// holds OpenBLAS to its AVX2 kernels, and 1.0-1.25x faster than OpenBLAS's own AVX-512 ones. Products of more than
// 4M multiply-adds are OpenBLAS's, on every thread.
//
// The kernel's sums run in another order than OpenBLAS's: results agree to float rounding, not bit for bit. A given
// shape, layout and CPU always takes the same path, so a program's results repeat run to run.
#pragma once

#include <cstdint>
#include <string>

namespace gb::detail {

// C (n x m, row-major, leading dimension ldc) = op(A) (n x k) * op(B) (k x m) + beta * C, the arguments as
// cblas_?gemm(CblasRowMajor, ...) takes them (op: transposed when trans_*). Runs it on libxsmm and returns true, or
// does nothing and returns false, leaving it to OpenBLAS, when small_gemm_fits() is false or libxsmm cannot generate
// the kernel. T is float or double.
template <typename T>
bool small_gemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// Whether small_gemm would take the product: libxsmm built in, n*m*k at most 4M, alpha 1, beta 0 or 1, and the CPU
// kernels at this CPU's widest instruction set (a narrower GLASSBOX_CPU_CAPABILITY keeps products on OpenBLAS). A
// transposed B (a linear layer's x W^T; libxsmm 1.17 generates no kernel for it) is first copied transposed into a
// per-thread scratch matrix, when it has at most 8K elements and A at least 4 rows (else the copy outweighs the gain).
bool small_gemm_fits(bool trans_b, int64_t n, int64_t m, int64_t k, double alpha, double beta);

// "libxsmm 1.17 (cpx)" — the library and the instruction set its kernels target — or why there is none
// ("off: built without libxsmm (apt-get install libxsmm-dev)"). A trace's meta `small_gemm` holds it.
std::string small_gemm_backend();

// libxsmm's one-time set-up, aimed at the instruction set glassbox's kernels run (blocked_gemm.cpp shares it).
// Only in builds with libxsmm.
void xsmm_start();

}  // namespace gb::detail
