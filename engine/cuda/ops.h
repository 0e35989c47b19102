// engine/cuda/ops.h — the CUDA halves of the op families (internal): what an op entry in engine/ops/ hands to
// core/device_kernel.h's run_kernel (or run_op) for tensors on cuda:N. The entry has done the device-independent half
// already (checks, shapes, dtypes, the outputs and the contiguous copies a cpu run makes too); each function here
// turns tensors into the launch records of cuda/*_kernels.h and launches on the current stream, allocating its own
// device-only scratch from the caching allocator. Elementwise families need no entry here: theirs is
// detail::cuda_pointwise (cuda/launch.h). Compiled by g++ in every build; without nvcc the launches they reach throw
// (core/cuda_fallback.cpp), and no cuda tensor can exist to reach them.
#pragma once

#include <cstdint>

#include "cuda/kernels.h"
#include "glassbox/core/tensor.h"
#include "ops/pool_geom.h"

namespace gb::cuda_ops {

// ---- cumsum (cuda/cumsum_ops.cpp) ----
// out = running sums of src along the middle dim of (outer, n, inner), both contiguous, out's dtype.
void cumsum(const Tensor& src, const Tensor& out, int64_t outer, int64_t n, int64_t inner);

// ---- dropout (cuda/dropout_ops.cpp) ----
// mask (contiguous, x's dtype) = 1 where an element is kept (probability 1 - p), else 0, from the device's generator.
void dropout_mask(const Tensor& mask, double p);
// The same mask, and out = x * mask / (1 - p), in one kernel.
void dropout(const Tensor& x, double p, const Tensor& mask, const Tensor& out);

// ---- index_select, embedding, gather, scatter_add (cuda/index_ops.cpp) ----
// out[o, i, :] = ac[o, index[i], :] along dim (ac contiguous; a 0-d ac is indexed along 0).
void index_select(const Tensor& ac, int64_t dim, const Tensor& index, const Tensor& out, const char* op);
// zeros(sizes) with g's rows added at index along dim, rows whose index is `skip` left out (atomic adds in float32,
// float64 for float64): index_select's and embedding's backward.
Tensor index_add_zeros(const Tensor& g, int64_t dim, const Tensor& index, IntArrayRef sizes, int64_t skip,
                       const char* op);
// out = a gathered along dim by index (out has index's shape).
void gather(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& out);
// out[.., index[p], ..] += src[p] along dim, for every p of index (src cut to index's shape).
void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
// Checks idx (int64, contiguous) against [-size, size) on the device: the first outside is op's IndexError, raised at
// the next synchronization (cuda/device_error.h). No wait.
void check_index_range(const Tensor& idx, int64_t size, int64_t dim, const char* op);

// ---- max_pool2d, avg_pool2d, adaptive_avg_pool2d (cuda/pool_ops.cpp) ----
// Every tensor contiguous, in out's dtype (the compute type: float or double) but idx (int64, flat h * W + w in
// the plane); planes of d.H x d.W in, d.Ho x d.Wo out, as many as out holds.
// out, idx = each window's first maximum (its last NaN if any) and where it is.
void max_pool2d(const Tensor& in, const detail::PlaneDims& d, const Tensor& out, const Tensor& idx);
// out (H x W planes) = the sum of the gradients g whose idx names each element: max pooling's backward.
void max_pool2d_backward(const Tensor& g, const Tensor& idx, const detail::PlaneDims& d, const Tensor& out);
// out (Ho x Wo planes) = src at idx: max pooling at known indices (its double backward).
void max_pool2d_gather(const Tensor& src, const Tensor& idx, const detail::PlaneDims& d, const Tensor& out);
// out = each window's mean under rule (Ho x Wo planes); adjoint: in is the gradient of those means and out (H x W
// planes) the gradient of their input.
void window_mean(const Tensor& in, const detail::PlaneDims& d, const detail::MeanRule& rule, const Tensor& out,
                 bool adjoint);

// ---- layer_norm, group_norm (cuda/norm_ops.cpp) ----
// The forward over `rows` rows of len elements of xc (contiguous, in the compute type): each row's mean and rstd =
// 1/sqrt(biased var + eps) into mean and rstd (rows elements each), out = (x - mean) * rstd * weight + bias (either
// undefined: none). groups 0: layer_norm, weight and bias along the row; groups G: group_norm, row r is group r % G
// of its sample, weight and bias per channel of S elements.
void row_norm(const Tensor& xc, const Tensor& weight, const Tensor& bias, int64_t rows, int64_t len, int64_t groups,
              int64_t S, double eps, const Tensor& mean, const Tensor& rstd, const Tensor& out);

// ---- nll_loss (cuda/loss_ops.cpp) ----
// nll_loss's targets on the device, the input seen as (B, C, S): target int64 contiguous (B * S), weight C class
// weights contiguous in the compute type or undefined (all 1). A target outside [0, C) and not ignore_index is an
// IndexError raised at the next synchronization.
struct NllTargets {
  Tensor target, weight;
  int64_t B = 1, C = 1, S = 1, ignore_index = -100;
};
// loss (B * S, xc's dtype) = -w_t * xc[b, t, s], w (B * S) = w_t; both 0 where ignored. xc (B, C, S) contiguous.
void nll_forward(const NllTargets& t, const Tensor& xc, const Tensor& loss, const Tensor& w);
// gx (zeroed, contiguous: the input's shape, or B * S values when compact) gets -w_t * g / divisor at each target:
// g has B * S values (one when g_scalar), divisor is a 0-dim tensor (the mean's total weight) or undefined (1).
void nll_backward(const NllTargets& t, const Tensor& gc, bool g_scalar, const Tensor& divisor, const Tensor& gx,
                  bool compact);

// ---- softmax, log_softmax (cuda/softmax_ops.cpp) ----
// softmax (log: log_softmax) of in along dim, a new tensor of in's dtype.
Tensor softmax(const Tensor& in, int64_t dim, bool log);
// out = the backward of (log_)softmax along the last dim from g and the saved result y (same shape and dtype), in
// one kernel. onehot_target defined: g is cross_entropy's compact gradient (one entry per row, at that column).
void softmax_backward(const Tensor& g, const Tensor& y, const Tensor& out, bool log, const Tensor& onehot_target = {});

// ---- matrix products (cuda/linalg_ops.cpp) ----
// out (B,N,M) contiguous = alpha * a @ b + beta * out (or all three 2-D), a and b of out's dtype, any strides, K > 0.
void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta);
// out = a @ b + bias through cuBLASLt's epilogue (with relu or tanh-GELU when `epilogue` says), no pass that copies
// the bias into out first: a, b 2-D of out's dtype, bias 1-D of out's columns. false: not taken (float64, K = 0;
// nothing written), the caller then runs addmm.
bool gemm_and_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                   cuda_kernels::GemmEpilogue epilogue = cuda_kernels::GemmEpilogue::bias);

// ---- sort, topk (cuda/sort_ops.cpp) ----
// The first k of each line of a along dim in stable order (descending or not) into values and indices (a's shape with
// dim = k); by_position: those k in their order along dim instead.
void sort(const Tensor& a, int64_t dim, int64_t k, bool descending, bool by_position, const Tensor& values,
          const Tensor& indices);

}  // namespace gb::cuda_ops
