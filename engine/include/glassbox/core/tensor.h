// glassbox/core/tensor.h — gb::Tensor, the handle every op takes and returns (libtorch's torch::Tensor).
//
// A Tensor is a shared handle to a TensorImpl: sizes, strides and an offset into a shared Storage (views share
// it), a dtype, a device, and autograd metadata (requires_grad, grad, grad_fn, hooks). Copying a Tensor copies
// the handle, never the data; `clone()` copies data. Methods mirror libtorch name for name:
//
//   auto x = gb::randn({N, D}, gb::requires_grad());
//   auto y = x.mul(2).sum({1}, /*keepdim=*/true);    // y is (N,1), y.grad_fn()->name() == "SumBackward1"
//   y.sum().backward();                              // x.grad() is (N,D), all 2
//
// Ops that produce new tensors live in glassbox/ops/*.h as free functions; the methods here forward to them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "glassbox/core/array_ref.h"
#include "glassbox/core/device.h"
#include "glassbox/core/dim_vector.h"
#include "glassbox/core/dtype.h"
#include "glassbox/core/error.h"
#include "glassbox/core/scalar.h"
#include "glassbox/core/storage.h"
#include "glassbox/core/tensor_accessor.h"
#include "glassbox/core/tensor_options.h"

namespace gb {
namespace cuda {
class CUDAStream;
}  // namespace cuda

class Tensor;
struct TensorImpl;
using TensorList = ArrayRef<Tensor>;
using variable_list = std::vector<Tensor>;

namespace autograd {
struct Node;
}

namespace indexing {
struct Slice;
class TensorIndex;
}  // namespace indexing

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;
  // A named tensor is a handle: `a = b` makes a refer to b's tensor. A temporary is a place, as in libtorch:
  // `x[0] = y` and `x.select(1, 2) = 0` write into x (copy_ / fill_), with autograd as for copy_.
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  Tensor& operator=(const Tensor& rhs) && { return copy_(rhs); }
  Tensor& operator=(Tensor&& rhs) && { return copy_(rhs); }
  Tensor& operator=(const Scalar& v) && { return fill_(v); }

  // ---- identity and layout ----
  bool defined() const { return impl_ != nullptr; }
  TensorImpl* unsafe_impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }

  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t dim() const;
  int64_t ndimension() const { return dim(); }
  int64_t numel() const;
  int64_t storage_offset() const;
  bool is_contiguous() const;
  ScalarType scalar_type() const;
  ScalarType dtype() const { return scalar_type(); }
  Device device() const;
  TensorOptions options() const;
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_meta() const { return device().is_meta(); }
  bool is_floating_point() const { return gb::is_floating_point(scalar_type()); }
  int64_t element_size() const { return gb::element_size(scalar_type()); }
  int64_t nbytes() const { return numel() * element_size(); }
  const std::shared_ptr<StorageImpl>& storage() const;
  bool is_view() const;  // shares storage with the tensor it was viewed from
  Tensor _base() const;  // a view made by a view op: the root tensor it views (PyTorch's ._base); else undefined

  void* data_ptr() const;  // the first element (storage + offset)
  template <typename T>
  T* data_ptr() const;  // checks that T matches dtype()
  // a[i][j]... over a CPU tensor of dtype T and N dims (tensor_accessor.h); not on a temporary.
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() const&;
  template <typename T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;
  template <typename T>
  T item() const;  // the value of a one-element tensor, converted to T
  Scalar item() const;
  std::string toString() const;  // "CPUFloatType" (libtorch)

  // ---- autograd ----
  bool requires_grad() const;
  const Tensor& requires_grad_(bool r = true) const;  // leaves only, like PyTorch
  const Tensor& set_requires_grad(bool r) const { return requires_grad_(r); }
  const Tensor& grad() const;  // undefined until a backward accumulates into this leaf
  Tensor& mutable_grad();
  void set_grad(const Tensor& g);
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  uint32_t output_nr() const;
  uint32_t _version() const;
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                const variable_list& inputs = {}) const;
  Tensor detach() const;  // same storage and version counter, no history
  Tensor data() const;    // libtorch's .data(): this tensor without history, as detach() (same storage)
  // New tensors of this one's dtype and device unless options say otherwise (libtorch's new_* methods).
  Tensor new_empty(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_zeros(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_ones(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options = {}) const;
  Tensor& detach_() const;
  void retain_grad() const;  // keep .grad() on a non-leaf
  bool retains_grad() const;
  // Hooks run on this tensor's gradient during backward; one returning a Tensor replaces the gradient.
  unsigned register_hook(std::function<Tensor(const Tensor&)> hook) const;
  template <typename F, std::enable_if_t<std::is_void_v<std::invoke_result_t<F, const Tensor&>>, int> = 0>
  unsigned register_hook(F hook) const {
    return register_hook(std::function<Tensor(const Tensor&)>([hook](const Tensor& g) {
      hook(g);
      return Tensor();
    }));
  }
  void remove_hook(unsigned handle) const;
  // Leaves: runs after the gradient has been accumulated into .grad().
  unsigned register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) const;
  const std::string& name() const;  // an optional label shown in traces and errors
  Tensor& set_name(const std::string& n);

  // ---- conversion and copies ----
  // memory_format: Contiguous makes the result contiguous, Preserve (and none) keeps what .to() does; channels-last
  // formats are refused (glassbox tensors are row-major).
  Tensor to(ScalarType t, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device d, ScalarType t, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device d) const;
  Tensor to(DeviceType t) const { return to(Device(t)); }  // x.to(gb::kCUDA): exact, not ambiguous with TensorOptions
  // This cuda tensor is also used by work on `stream`: its memory is not reused until that work has run (the
  // caching allocator waits on an event; torch's Tensor.record_stream).
  void record_stream(const cuda::CUDAStream& stream) const;
  Tensor to(const TensorOptions& o, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor clone() const;
  Tensor contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor& fill_(const Scalar& v) const;
  Tensor& zero_() const;

  // ---- views (share storage) ----
  Tensor view(IntArrayRef shape) const;
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor reshape(IntArrayRef shape) const;
  Tensor reshape_as(const Tensor& o) const { return reshape(o.sizes()); }
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt) const;
  // x.index({Slice(1, 3), 0}), x.index({mask}), x.index({Slice(), idx}). Integers, slices, None and "..." give a
  // view; with a tensor among the indices (an integer tensor, or a bool/uint8 mask standing for its true positions)
  // the result is a copy, shaped by PyTorch's advanced-indexing rules (engine/ops/advanced_index.h).
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  // x.index_put_({Slice(1, 3), 0}, v), x.index_put_({mask}, 0): writes v (broadcast to what index() would return)
  // or a number into those positions, in place, with autograd as for copy_. With tensor indices, a position named
  // twice keeps the last value, or (accumulate) the sum of all of them added to the old value.
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& rhs) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& v) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& values, bool accumulate) const;
  // The same into a copy (libtorch's functional index_put): this tensor is unchanged.
  Tensor index_put(ArrayRef<indexing::TensorIndex> indices, const Tensor& rhs) const;
  Tensor index_put(ArrayRef<indexing::TensorIndex> indices, const Scalar& v) const;
  Tensor index_put(ArrayRef<indexing::TensorIndex> indices, const Tensor& values, bool accumulate) const;
  Tensor operator[](int64_t i) const { return select(0, i); }
  // libtorch's print(): "[CPUFloatType [2, 3]]" and a newline, to stdout.
  void print() const;
  // x[t] with a 0-dim integer tensor t is x[t.item()] (libtorch's; use index({t}) to index with a tensor).
  Tensor operator[](const Tensor& i) const;
  // The positions of the nonzero elements: (n, dim()) int64, row-major order (glassbox/ops/shape.h).
  Tensor nonzero() const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor flip(IntArrayRef dims) const;        // a copy (glassbox/ops/shape.h)
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;  // a copy
  Tensor triu(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor repeat(IntArrayRef repeats) const;   // a copy

  // ---- pointwise ----
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(const Scalar& o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(const Scalar& o) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor erf() const;
  Tensor bernoulli() const;  // self holds the probabilities
  Tensor multinomial(int64_t num_samples, bool replacement = false) const;
  Tensor relu() const;
  Tensor square() const;
  Tensor reciprocal() const;
  Tensor sign() const;
  Tensor round() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor trunc() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const { return clamp(min, std::nullopt); }
  Tensor clamp_max(const Scalar& max) const { return clamp(std::nullopt, max); }
  Tensor eq(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(const Scalar& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(const Scalar& o) const;
  Tensor logical_not() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;  // condition ? self : other

  // in place (bump the version counter; autograd-aware)
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor& add_(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor& sub_(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor& mul_(const Tensor& o) const;
  Tensor& mul_(const Scalar& o) const;
  Tensor& div_(const Tensor& o) const;
  Tensor& div_(const Scalar& o) const;
  Tensor& pow_(const Scalar& exponent) const;
  Tensor& neg_() const;
  Tensor& exp_() const;
  Tensor& log_() const;
  Tensor& sqrt_() const;
  Tensor& tanh_() const;
  Tensor& sigmoid_() const;
  Tensor& relu_() const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight) const;
  Tensor& uniform_(double from = 0, double to = 1) const;
  Tensor& normal_(double mean = 0, double std = 1) const;
  Tensor& bernoulli_(double p = 0.5) const;

  // ---- reductions (dims may be negative; keepdim keeps them as size 1) ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;  // values, indices
  Tensor max(const Tensor& other) const;                                    // elementwise maximum
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor min(const Tensor& other) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor var(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  // As in libtorch (gh-40287): int -> bool beats int -> IntArrayRef, so without these x.var(1) and x.var({1})
  // would silently mean var(unbiased=true) over all elements instead of over dim 1.
  Tensor var(int dim) const {
    int64_t d = dim;
    return var(IntArrayRef(d));
  }
  Tensor std(int dim) const {
    int64_t d = dim;
    return std(IntArrayRef(d));
  }
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const Scalar& p, IntArrayRef dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor any() const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  // sorting (glassbox/ops/sort.h): (values, indices)
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;

  // ---- linear algebra, softmax, indexing ----
  Tensor matmul(const Tensor& o) const;
  Tensor mm(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor masked_select(const Tensor& mask) const;

  // ---- operators (elementwise, broadcasting) ----
  Tensor operator-() const { return neg(); }
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);

// Prints like PyTorch's repr: tensor([[ 1.0000, -2.0000]], dtype=float64, requires_grad=True).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---------------------------------------------------------------------------------------------------------------
// The implementation record behind a Tensor. Engine code reads it directly; user code goes through Tensor.

struct AutogradMeta {
  bool requires_grad = false;  // set on leaves; a non-leaf requires grad because it has a grad_fn
  bool retains_grad = false;
  uint32_t output_nr = 0;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;  // leaves: the AccumulateGrad node, made on first use
  std::vector<std::pair<unsigned, std::function<Tensor(const Tensor&)>>> leaf_hooks;
  std::vector<std::pair<unsigned, std::function<void(Tensor&)>>> post_accumulate_hooks;
  std::string name;
  // The monitor (engine/monitor/): the .grad an optimizer step last used and its version then, so a backward that
  // accumulates into that same unchanged buffer is known to have missed a zero_grad. A weak reference, not an
  // address: after zero_grad(set_to_none) frees the buffer, a new .grad may be allocated at the same address.
  std::weak_ptr<TensorImpl> grad_used_impl;
  uint32_t grad_used_version = 0;
  int64_t grad_used_step = -1;
};

struct TensorImpl {
  std::shared_ptr<StorageImpl> storage;
  DimVector sizes;               // up to 5 dims without a heap allocation (glassbox/core/dim_vector.h)
  DimVector strides;             // in elements
  int64_t offset = 0;            // in elements
  int64_t numel = 1;
  ScalarType dtype = kFloat;
  Device device{DeviceType::CPU};
  bool contiguous = true;
  bool is_view = false;
  std::unique_ptr<AutogradMeta> autograd;
  // Views made by view ops (select, narrow, view, transpose, ...; not detach): the ROOT tensor they view (a view
  // of a view points at the root), so that an in-place op on the view can rewrite the base's history
  // (CopySlices, engine/autograd/views.h). view_base_fn is the base's grad_fn this view's own grad_fn was
  // built against: when the base's history moves on (an in-place op on it or on another view), the view's
  // grad_fn is regenerated as an AsStridedBackward0 of the base's new history the next time it is read.
  std::shared_ptr<TensorImpl> view_base;
  std::weak_ptr<autograd::Node> view_base_fn;
  bool view_made_in_no_grad = false;  // PyTorch forbids tracked in-place ops on such views

  // Recomputes numel and the contiguity flag after sizes/strides change.
  void refresh();
  AutogradMeta& meta() {
    if (!autograd) autograd = std::make_unique<AutogradMeta>();
    return *autograd;
  }
  char* data() const { return static_cast<char*>(storage->data()) + offset * element_size(dtype); }
};

inline IntArrayRef Tensor::sizes() const { return impl_->sizes; }
inline IntArrayRef Tensor::strides() const { return impl_->strides; }
inline int64_t Tensor::dim() const { return int64_t(impl_->sizes.size()); }
inline int64_t Tensor::numel() const { return impl_->numel; }
inline int64_t Tensor::storage_offset() const { return impl_->offset; }
inline bool Tensor::is_contiguous() const { return impl_->contiguous; }
inline ScalarType Tensor::scalar_type() const { return impl_->dtype; }
inline Device Tensor::device() const { return impl_->device; }
inline const std::shared_ptr<StorageImpl>& Tensor::storage() const { return impl_->storage; }
inline void* Tensor::data_ptr() const { return impl_->data(); }
inline bool Tensor::is_view() const { return impl_->is_view; }

namespace detail {
[[noreturn]] void throw_data_ptr_mismatch(ScalarType want, ScalarType have);
}

template <typename T>
T* Tensor::data_ptr() const {
  if (scalar_type_of<T>::value != scalar_type())
    detail::throw_data_ptr_mismatch(scalar_type_of<T>::value, scalar_type());
  return reinterpret_cast<T*>(impl_->data());
}

template <typename T>
T Tensor::item() const {
  return item().to<T>();
}

template <typename T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
  GB_CHECK(dim() == int64_t(N), "TensorAccessor expected ", N, " dims but tensor has ", dim());
  GB_CHECK(device().is_cpu(), "accessor reads host memory, but the tensor is on ", device().str(),
           "; copy it to the cpu first (.cpu())");
  return TensorAccessor<T, N>(data_ptr<T>(), sizes().data(), strides().data());
}

}  // namespace gb
