// engine/core/make.h — internal helpers for making tensors and views and for checking dims (not public API).
#pragma once

#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::detail {

std::vector<int64_t> contiguous_strides(IntArrayRef sizes);
int64_t numel_of(IntArrayRef sizes);

// A new contiguous tensor (uninitialized) on device, its storage from the device's allocator.
Tensor make_empty(IntArrayRef sizes, ScalarType dtype, Device device = Device(kCPU));
inline Tensor make_empty_like(const Tensor& t) { return make_empty(t.sizes(), t.scalar_type(), t.device()); }
// A view of base's storage with new sizes/strides/offset; no autograd history (callers record it).
Tensor make_view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset);
// A handle to the same storage, sizes and strides but no autograd metadata (like tensor.detach()).
Tensor shallow_alias(const Tensor& t);

// Wraps a possibly negative dim into [0, ndim); throws gb::IndexError in PyTorch's words otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op = nullptr);
// Wraps and de-duplicates a dim list; empty = all dims.
std::vector<bool> dim_mask(IntArrayRef dims, int64_t ndim, const char* op);

// "[2, 3]"
std::string shape_str(IntArrayRef sizes);

// Throws naming op when t is not on the CPU (the only device with kernels in this build) or is undefined.
void check_cpu(const Tensor& t, const char* op, const char* arg = "input");
void check_defined(const Tensor& t, const char* op, const char* arg = "input");
// Throws naming both tensors when their devices differ.
void check_same_device(const Tensor& a, const Tensor& b, const char* op);

// Bumps the version counter of t's storage after an in-place write.
inline void bump_version(const Tensor& t) { ++t.storage()->version; }

}  // namespace gb::detail
