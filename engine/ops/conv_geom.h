// engine/ops/conv_geom.h — the geometry of one 2-D convolution, shared by conv2d's kernels (im2col + GEMM in
// conv.cpp, oneDNN's in conv_onednn.cpp); internal. conv_transpose2d describes itself as the conv2d whose input
// gradient it is, so the same geometry serves both.
#pragma once

#include <cstdint>

namespace gb::detail {

struct ConvGeom {
  int64_t N, C, H, W;  // input
  int64_t O, kH, kW;   // weight (O, C/groups, kH, kW)
  int64_t Ho, Wo;      // output
  int64_t sH, sW, pH, pW, dH, dW, groups;
  int64_t Cg() const { return C / groups; }
  int64_t Og() const { return O / groups; }
  int64_t K() const { return Cg() * kH * kW; }  // rows of one group's column matrix
  int64_t P() const { return Ho * Wo; }         // columns: output positions
  bool is_pointwise() const { return kH == 1 && kW == 1 && sH == 1 && sW == 1 && pH == 0 && pW == 0; }
};

}  // namespace gb::detail
