// engine/cuda/conv_cudnn.h — conv2d's kernels on cuda, through cuDNN (internal; conv.cpp calls them for operands on
// cuda, after its own checks). See glassbox/core/cudnn.h for the user's switches.
//
// Each call describes its operands to cuDNN (NCHW tensors, an OIHW filter, a cross-correlation with the geometry's
// padding, stride, dilation and groups; float32 accumulation for float16 and bfloat16, float64 for float64),
// picks the algorithm cached for that geometry (found on its first call), takes a workspace of the size the
// algorithm needs from the caching allocator (a memory snapshot shows it as a cudnn_workspace tensor), and launches
// on the current stream of the operands' device without waiting. A batch whose input or output exceeds cuDNN's
// 32-bit indexing (2^31 - 1 elements) runs as parts of the batch, one call each; a single sample that large throws.
#pragma once

#include <cstdint>

#include "glassbox/core/tensor.h"
#include "ops/conv_geom.h"

namespace gb::detail {

// Whether this build has cuDNN.
bool cudnn_built();

// y (N,O,Ho,Wo) = conv(x (N,C,H,W), w (O,C/groups,kH,kW)) + b (O; undefined: none). All contiguous, one floating
// dtype, on one cuda device. Throws gb::Error naming what is missing in a build without cuDNN.
void cudnn_conv_forward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y);

// From gy (N,O,Ho,Wo): gx (N,C,H,W), the input gradient, and gw (O,C/groups,kH,kW), the weight gradient (either
// undefined when not wanted; x is read only for gw). Same contract as cudnn_conv_forward.
void cudnn_conv_backward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& gy, const Tensor& gx,
                         const Tensor& gw);

// How many (geometry, direction) algorithm choices the process has cached, and how many of them were found by
// timing (benchmark on): for tests and `glassbox env`-style questions.
struct CudnnCacheStats {
  int64_t cached = 0, timed = 0;
};
CudnnCacheStats cudnn_cache_stats();

}  // namespace gb::detail
