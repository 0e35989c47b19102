// glassbox/ops/linalg.h — matrix products through OpenBLAS (sgemm/dgemm; 16-bit floats go through float).
//
//   mm:     (N,K) @ (K,M) -> (N,M)
//   bmm:    (B,N,K) @ (B,K,M) -> (B,N,M)
//   matmul: NumPy semantics — 1-D vectors are promoted and the added dim removed; batch dims broadcast.
//   linear: x (*,in) @ weight(out,in)^T + bias(out) -> (*,out), as torch::nn::functional::linear.
//   _addmm_activation: relu (or GELU) of addmm in one op, as at::_addmm_activation (bias + activation fused on cuda
//                      by cuBLASLt's epilogue; GELU exact on the cpu, its tanh form on cuda; not differentiable).
#pragma once

#include <optional>
#include <string_view>

#include "glassbox/core/tensor.h"

namespace gb {

Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor _addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
                         const Scalar& alpha = 1, bool use_gelu = false);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
// Einstein summation, as libtorch's: "bhqd,bhkd->bhqk", "ij,jk" (implicit output: the letters used once, in order),
// "...ij,...jk->...ik" (the "..." dims broadcast), "ii->i" (a diagonal), "ii" (a trace). Composed of views, sums and
// one bmm per pair of operands, contracted left to right (path is accepted and not used); differentiable.
Tensor einsum(std::string_view equation, TensorList tensors, std::optional<IntArrayRef> path = std::nullopt);

}  // namespace gb
