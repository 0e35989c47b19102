// engine/ops/conv_onednn.h — conv2d's float32 kernels on oneDNN; internal (conv.cpp calls them first).
//
// Each call reorders the plain NCHW / OIHW operands into the blocked layouts oneDNN's kernels read, runs one
// convolution primitive and reorders the result back; the reorders' buffers and the primitive's scratchpad come
// from the caching allocator (memory snapshots name them onednn_reorder / onednn_convolution_*), and each step is an
// op span of its own in a trace. Primitives are built once per geometry (the JIT compiles then) and cached.
// Threads: an OpenMP team of gb::get_num_threads() (one inside a parallel_for body).
//
// `device` is the operands': cpu, or meta, where nothing is read, written or run, but the buffers a cpu call makes
// are made and freed in the same order, so that a model planned on meta has the cpu run's memory exactly.
#pragma once

#include "glassbox/core/device.h"
#include "ops/conv_geom.h"

namespace gb::detail {

// y (N,O,Ho,Wo) = conv(x (N,C,H,W), w (O,C/groups,kH,kW)) + b (O; null: none). All contiguous float32. Returns false,
// having done nothing, when oneDNN is not built, gb::backends::mkldnn::enabled is off, g has an empty dimension, or
// oneDNN has no kernel for g: the caller then computes it itself.
bool onednn_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b, float* y, Device device);

// From gy (N,O,Ho,Wo): gx (N,C,H,W), the input gradient, and gw (O,C/groups,kH,kW), the weight gradient (either
// null when not wanted; x is read only for gw). Same contract as onednn_conv_forward.
bool onednn_conv_backward(const ConvGeom& g, const float* x, const float* w, const float* gy, float* gx, float* gw,
                          Device device);

}  // namespace gb::detail
