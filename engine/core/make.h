// engine/core/make.h — internal helpers for making tensors and views and for checking dims (not public API).
#pragma once

#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::detail {

DimVector contiguous_strides(IntArrayRef sizes);
// The shape a and b broadcast to (gb::broadcast_shapes without a heap allocation); throws naming op when they do not.
DimVector broadcast_dims(IntArrayRef a, IntArrayRef b, const char* op);
int64_t numel_of(IntArrayRef sizes);

// A new contiguous tensor (uninitialized) on device, its storage from the device's allocator. The device has no
// default on purpose: an op's temporaries live on its inputs' device (a meta run must allocate them on meta).
Tensor make_empty(IntArrayRef sizes, ScalarType dtype, Device device);
inline Tensor make_empty_like(const Tensor& t) { return make_empty(t.sizes(), t.scalar_type(), t.device()); }
// A view of base's storage with new sizes/strides/offset; no autograd history (callers record it).
Tensor make_view(const Tensor& base, DimVector sizes, DimVector strides, int64_t offset);
// A handle to the same storage, sizes and strides but no autograd metadata (like tensor.detach()).
Tensor shallow_alias(const Tensor& t);

// Wraps a possibly negative dim into [0, ndim); throws gb::IndexError in PyTorch's words otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op = nullptr);
// Wraps and de-duplicates a dim list; empty = all dims.
std::vector<bool> dim_mask(IntArrayRef dims, int64_t ndim, const char* op);

// "[2, 3]"
std::string shape_str(IntArrayRef sizes);

// The device checks of an op entry (core/device_kernel.h chooses the kernel half afterwards). check_cpu_meta_device,
// for a family with no CUDA half: cpu and meta; throws naming op when t is undefined or on cuda ("no CUDA kernel").
void check_cpu_meta_device(const Tensor& t, const char* op, const char* arg = "input");
// check_cpu_meta_device, and t must be on `first`'s device (PyTorch's "Expected all tensors to be on the same device").
void check_cpu_meta_device(const Tensor& t, const char* op, const char* arg, const Tensor& first);
// check_device, for a family with a CUDA half: cpu, meta and cuda:N are all accepted.
void check_device(const Tensor& t, const char* op, const char* arg = "input");
void check_device(const Tensor& t, const char* op, const char* arg, const Tensor& first);
void check_defined(const Tensor& t, const char* op, const char* arg = "input");
// Throws naming both tensors when their devices differ.
void check_same_device(const Tensor& a, const Tensor& b, const char* op);

// True when t's kernel must not run: a meta tensor has an address but no memory. Kernels test it after the op
// has made every tensor it needs (outputs, contiguous copies, dtype conversions) and right before they read or
// write elements, so a meta run allocates exactly what a cpu run does and computes nothing.
inline bool skip_kernel(const Tensor& t) { return t.is_meta(); }
// Throws for an op that must read values (item(), printing values, equal, data-dependent shapes) on meta.
void check_has_data(const Tensor& t, const char* op, const char* why = nullptr);

// Bumps the version counter of t's storage after an in-place write.
inline void bump_version(const Tensor& t) { ++t.storage()->version; }

}  // namespace gb::detail
