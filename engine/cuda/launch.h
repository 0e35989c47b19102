// engine/cuda/launch.h — the Tensor side of the CUDA kernels (internal): what an op entry calls where its CPU loop
// would run when its output is on cuda:N. The entry has already checked devices, shapes and dtypes, made its output
// and converted its inputs to the compute dtype, exactly as for the CPU; these only turn tensors into the plain
// launch records of cuda/kernels.h (strides in bytes, inputs broadcast to the output's shape) and launch.
#pragma once

#include <initializer_list>

#include "cuda/kernels.h"
#include "glassbox/core/tensor.h"

namespace gb::detail {

// The CUDA kernel an elementwise op entry runs on cuda, next to the lambda it runs on the CPU. The default (none)
// means the kernel of the op's name (pw_for_name), or a clear error when it has none; ops with scalar parameters
// (add's alpha, clamp's bounds) name theirs.
struct CudaOp {
  cuda_kernels::Pw op = cuda_kernels::Pw::none;
  double p0 = 0, p1 = 0;
};

// The parameterless kernel computing the op of that name as its CPU entry does ("exp", "mul", "lt", ...), or none.
cuda_kernels::Pw pw_for_name(const char* op);

// Throws "<op>: no CUDA kernel in this build yet ..." (the op's inputs are on cuda and it has only a CPU kernel).
[[noreturn]] void throw_no_cuda_kernel(const char* op);

// out = cop(inputs...) elementwise, each input broadcast to out's shape; `values` is the dtype the op computes in
// (out's, or the compared inputs' when out is bool). All tensors on out's cuda device.
void cuda_pointwise(const char* op, CudaOp cop, const Tensor& out, std::initializer_list<const Tensor*> inputs,
                    ScalarType values);
// dst = src (same shape, any strides and dtypes), both on one cuda device or across host and device.
void cuda_copy(const Tensor& dst, const Tensor& src, bool non_blocking = false);
// Every element of t (on cuda) = v.
void cuda_fill(const Tensor& t, double v);
// The sum (or mean, max, min) of a over the dims in mask, into a new tensor of the accumulation dtype (double for
// double, int64 for integers and bool, float otherwise) shaped as the CPU's reduction shapes it (keepdim or not).
Tensor cuda_reduce(const Tensor& a, const std::vector<bool>& mask, bool keepdim, cuda_kernels::ReduceOp op);

// How cuda_reduce lays out a reduction of a over the dims in mask without copying: a contiguous a whose reduced dims
// (size-1 dims aside) form one run is [outer, len, inner] (len the run's elements), reduced by columns when inner > 1.
// inner == 0: not that shape (the input is permuted to rows and copied). A plain function so the cpu tests check it.
struct ColumnShape {
  int64_t outer = 0, len = 0, inner = 0;
};
ColumnShape column_shape(const Tensor& a, const std::vector<bool>& mask);

}  // namespace gb::detail
