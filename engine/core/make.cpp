// engine/core/make.cpp — making tensors and views, dim wrapping, and the shared argument checks.
#include "core/make.h"

#include <sstream>

#include "cuda/launch.h"
#include "glassbox/core/cuda.h"
#include "glassbox/core/cuda_stream.h"

namespace gb {

void TensorImpl::refresh() {
  numel = 1;
  for (int64_t s : sizes) numel *= s;
  contiguous = true;
  int64_t expected = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) {
      contiguous = false;
      break;
    }
    expected *= sizes[d];
  }
}

namespace detail {

DimVector broadcast_dims(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(str_cat(op, ": The size of tensor a (", da, ") must match the size of tensor b (", db,
                          ") at non-singleton dimension ", i, " (shapes ", a, " and ", b,
                          "). Broadcasting aligns shapes from the right; reshape or unsqueeze one operand."));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size(), 0);
  int64_t s = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    st[d] = s;
    GB_CHECK(!__builtin_mul_overflow(s, std::max<int64_t>(sizes[d], 1), &s), "a tensor of shape ", sizes,
             ": the product of its sizes overflows int64 (no tensor can have that many elements); check the sizes");
  }
  return st;
}

int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

Tensor make_empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  for (int64_t s : sizes)
    GB_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes, ". Every size must be >= 0.");
  if (device.is_cuda()) {  // a clear error before any allocation; "cuda" means the current device, as in PyTorch
    cuda::check_device_index(device.index());
    if (!device.has_index()) device = Device(kCUDA, cuda::current_device());
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->sizes = sizes;
  impl->strides = contiguous_strides(sizes);
  impl->numel = numel_of(sizes);
  impl->dtype = dtype;
  impl->device = device;
  impl->contiguous = true;
  impl->storage = new_storage(impl->numel * element_size(dtype), device);
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, DimVector sizes, DimVector strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.scalar_type();
  impl->device = base.device();
  impl->is_view = true;
  impl->refresh();
  return Tensor(std::move(impl));
}

Tensor shallow_alias(const Tensor& t) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl* src = t.unsafe_impl();
  impl->storage = src->storage;
  impl->sizes = src->sizes;
  impl->strides = src->strides;
  impl->offset = src->offset;
  impl->numel = src->numel;
  impl->dtype = src->dtype;
  impl->device = src->device;
  impl->contiguous = src->contiguous;
  impl->is_view = src->is_view;
  return Tensor(std::move(impl));
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dim 0 and -1, like PyTorch
  if (dim < -n || dim >= n)
    throw IndexError(str_cat(op ? op : "", op ? ": " : "", "Dimension out of range (expected to be in range of [", -n,
                             ", ", n - 1, "], but got ", dim, ")"));
  return dim < 0 ? dim + n : dim;
}

std::vector<bool> dim_mask(IntArrayRef dims, int64_t ndim, const char* op) {
  std::vector<bool> mask(size_t(std::max<int64_t>(ndim, 0)), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    if (ndim == 0) continue;
    GB_CHECK(!mask[w], op, ": dim ", w, " appears multiple times in the list of dims ", dims);
    mask[w] = true;
  }
  return mask;
}

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream os;
  os << sizes;
  return os.str();
}

void check_defined(const Tensor& t, const char* op, const char* arg) {
  GB_CHECK(t.defined(), op, ": argument '", arg, "' is an undefined tensor; pass a tensor made by a factory or op");
}

void check_cpu_meta_device(const Tensor& t, const char* op, const char* arg) {
  check_defined(t, op, arg);
  if (t.device().is_cpu() || t.is_meta()) return;
  throw_no_cuda_kernel(op);
}

void check_device(const Tensor& t, const char* op, const char* arg) { check_defined(t, op, arg); }

void check_device(const Tensor& t, const char* op, const char* arg, const Tensor& first) {
  check_defined(t, op, arg);
  check_same_device(first, t, op);
}

void check_cpu_meta_device(const Tensor& t, const char* op, const char* arg, const Tensor& first) {
  check_cpu_meta_device(t, op, arg);
  check_same_device(first, t, op);
}

void check_has_data(const Tensor& t, const char* op, const char* why) {
  if (!t.is_meta()) return;
  throw Error(str_cat(op, ": Cannot read the values of a meta tensor (shape ", t.sizes(), "); no data! A meta tensor ",
                      "has a shape and an allocation but no values", why ? "; " : "", why ? why : "",
                      ". Run this part on the cpu, or keep it out of a meta (planning) run"));
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  GB_CHECK(a.device() == b.device(), op,
           ": Expected all tensors to be on the same device, but found at least two devices, ", a.device().str(),
           " and ", b.device().str(), "!");
}

}  // namespace detail
}  // namespace gb
