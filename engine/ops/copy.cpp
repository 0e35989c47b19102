// engine/ops/copy.cpp — dtype conversion, copies and fills: to, clone, contiguous, copy_, fill_, zero_. copy_ refuses
// the overlaps PyTorch's refuses (core/overlap.h); the ops' own copies read an overlapping source through a temporary.
#include <cstring>
#include <type_traits>

#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "core/overlap.h"
#include "cuda/launch.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "ops/inplace.h"
#include "ops/loops.h"

namespace gb {
namespace detail {

void fill_tensor(const Tensor& t, const Scalar& v);  // factory.cpp

namespace {

// dst (R,C) contiguous <- src (R,C) with a non-unit column stride (e.g. a .t() view), same dtype: copied in 64x64
// tiles so both sides stay in cache (the plain strided loop walks src a whole row apart per element).
template <typename U>
void tiled_copy(U* d, const U* s, int64_t R, int64_t C, int64_t sr, int64_t sc) {
  constexpr int64_t kTile = 64;
  parallel_for(0, (R + kTile - 1) / kTile, 4, [&](int64_t t0, int64_t t1) {
    for (int64_t i0 = t0 * kTile; i0 < std::min(R, t1 * kTile); i0 += kTile)
      for (int64_t j0 = 0; j0 < C; j0 += kTile)
        for (int64_t i = i0; i < std::min(R, i0 + kTile); ++i)
          for (int64_t j = j0; j < std::min(C, j0 + kTile); ++j) d[i * C + j] = s[i * sr + j * sc];
  });
}

bool try_tiled_copy(const Tensor& dst, const Tensor& src) {
  if (dst.scalar_type() != src.scalar_type() || !dst.is_contiguous() || src.dim() != 2 || dst.sizes() != src.sizes())
    return false;
  int64_t R = src.size(0), C = src.size(1), sr = src.stride(0), sc = src.stride(1);
  if (sc == 1 || sc == 0 || sr == 0 || R < 32 || C < 32) return false;
  switch (src.element_size()) {
    case 8:
      tiled_copy(static_cast<uint64_t*>(dst.data_ptr()), static_cast<const uint64_t*>(src.data_ptr()), R, C, sr, sc);
      return true;
    case 4:
      tiled_copy(static_cast<uint32_t*>(dst.data_ptr()), static_cast<const uint32_t*>(src.data_ptr()), R, C, sr, sc);
      return true;
    case 2:
      tiled_copy(static_cast<uint16_t*>(dst.data_ptr()), static_cast<const uint16_t*>(src.data_ptr()), R, C, sr, sc);
      return true;
    default:
      return false;
  }
}

// dst contiguous <- a contiguous src of the same dtype broadcast along dst's leading dims (addmm's and linear's bias
// into their output, a row repeated down a batch): one memcpy per repetition, split across the pool when large.
bool try_row_broadcast(const Tensor& dst, const Tensor& src) {
  if (dst.scalar_type() != src.scalar_type() || !dst.is_contiguous() || !src.is_contiguous() || src.dim() > dst.dim())
    return false;
  int64_t lead = 0;  // src's leading size-1 dims
  while (lead < src.dim() && src.size(lead) == 1) ++lead;
  const int64_t offset = dst.dim() - src.dim();
  for (int64_t d = lead; d < src.dim(); ++d)
    if (src.size(d) != dst.size(offset + d)) return false;
  const int64_t row = src.numel();
  if (row == 0 || row == dst.numel() || dst.numel() % row != 0) return false;
  char* d = static_cast<char*>(dst.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  const size_t bytes = size_t(row) * src.element_size();
  if (s < d + dst.nbytes() && d < s + bytes) return false;  // src inside dst: the general loop
  parallel_for(0, dst.numel() / row, std::max<int64_t>(1, kElementwiseGrain / row), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(d + size_t(i) * bytes, s, bytes);
  });
  return true;
}

}  // namespace

namespace {
// dst and src share bytes, yet a direct copy gives the right values: src is dst itself (same address, strides,
// shape and dtype), or the cpu's contiguous same-dtype copy, a memmove.
bool reads_safely_in_place(const Tensor& dst, const Tensor& src) {
  if (dst.scalar_type() != src.scalar_type() || dst.sizes() != src.sizes()) return false;
  if (dst.data_ptr() == src.data_ptr() && dst.strides() == src.strides()) return true;
  return dst.is_cpu() && dst.is_contiguous() && src.is_contiguous();
}

// src overlapping dst in one storage (x[1:] from x[:-1]): a copy that writes while it reads would read values it has
// already written (the cuda kernel's threads in any order, the cpu's strided loop in its own), so src is read into a
// temporary first and copied from there; true when it did so. The cpu's contiguous same-dtype copy is a memmove,
// which needs none.
bool copied_through_temp(const Tensor& dst, const Tensor& src) {
  if (!spans_intersect(dst, src) || reads_safely_in_place(dst, src)) return false;
  Tensor tmp = make_empty(src.sizes(), src.scalar_type(), src.device());
  copy_into(tmp, src);
  copy_into(dst, tmp);
  return true;
}

// The cpu half of copy_into: both on the cpu, src broadcast to dst's shape.
void copy_cpu(const Tensor& dst, const Tensor& src) {
  if (copied_through_temp(dst, src) || try_row_broadcast(dst, src)) return;
  if (dst.scalar_type() == src.scalar_type() && dst.sizes() == src.sizes() && dst.is_contiguous() &&
      src.is_contiguous()) {  // the same bytes: memcpy, split across the pool (contiguous(), clone(), to(dtype))
    char* d = static_cast<char*>(dst.data_ptr());
    const char* s = static_cast<const char*>(src.data_ptr());
    const int64_t bytes = dst.nbytes();
    if (d == s || bytes == 0) return;
    if (d < s + bytes && s < d + bytes) {  // overlapping views of one storage: one memmove
      std::memmove(d, s, size_t(bytes));
      return;
    }
    parallel_for(0, bytes, kElementwiseGrain * 4,
                 [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, size_t(e - b)); });
    return;
  }
  dispatch_all(dst.scalar_type(), "copy_", [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    dispatch_all(src.scalar_type(), "copy_", [&](auto stag) {
      using S = typename decltype(stag)::type;
      unary_loop<D, S>(dst, src, [](S x) {
        if constexpr (std::is_same_v<D, bool>)
          return bool(opmath_t<S>(x) != opmath_t<S>(0));
        else if constexpr (std::is_same_v<S, bool>)
          return D(float(x));
        else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>)
          return D(float(x));
        else
          return D(opmath_t<S>(x));
      });
    });
  });
}
}  // namespace

void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.is_cpu() && src.is_cpu() && try_tiled_copy(dst, src)) return;
  check_device(dst, "copy_", "self");
  check_device(src, "copy_", "src");
  auto shape = broadcast_shapes(dst.sizes(), src.sizes(), "copy_");
  GB_CHECK(IntArrayRef(shape) == dst.sizes(), "copy_: the source of shape ", src.sizes(),
           " cannot be broadcast to the destination shape ", dst.sizes());
  GB_CHECK(!src.is_meta() || dst.is_meta(), "copy_: Cannot copy out of meta tensor; no data! (source ", src.sizes(),
           " on meta, destination on ", dst.device().str(), "). Make the destination on meta too, or make the source ",
           "on ", dst.device().str());
  // into meta nothing is written (from cpu too, as PyTorch allows); between host and device the cuda end copies
  run_kernel(
      copy_side(dst, src), [&] { copy_cpu(dst, src); },
      [&] {
        if (copied_through_temp(dst, src)) return;
        cuda_copy(dst, src.sizes() == dst.sizes() ? src : shallow_alias(src).expand(dst.sizes()));
      });
}

void check_inplace(const Tensor& self, bool grad_needed, const char* op) {
  check_defined(self, op, "self");
  if (!grad_needed) return;
  GB_CHECK(!(self.is_leaf() && self.requires_grad()),
           "a leaf Variable that requires grad is being used in an in-place operation (", op, " on a tensor of shape ",
           self.sizes(),
           "). Wrap it in gb::NoGradGuard if this is an update (like an optimizer step), or use the "
           "out-of-place op.");
  autograd::check_inplace_view(self, grad_needed);
}

}  // namespace detail

namespace detail {
// cpu <-> cuda:N and cuda:N <-> cuda:M, differentiable (the gradient goes back to the source's device). With
// non_blocking and pinned host memory the host does not wait (cuda/launch.h's cuda_copy).
Tensor to_device(const Tensor& self, Device d, bool non_blocking) {
  if (d == self.device() || (d.type() == self.device().type() && d.index() < 0)) return self;
  OpScope op_scope("to", {self});
  Tensor out = make_empty(self.sizes(), self.scalar_type(), d);
  cuda_copy(out, self, non_blocking);
  op_scope.set_output(out);
  if (autograd::needs_grad(self))
    autograd::record("ToCopyBackward0", {self}, out, {},
                     [src = self.device()](autograd::BackwardContext& c) { return variable_list{c.grad().to(src)}; });
  return out;
}
}  // namespace detail

namespace {
// What .to(..., memory_format) and .contiguous(memory_format) do with the format: nothing for Preserve (and none),
// contiguous for Contiguous; the channels-last formats are refused (glassbox tensors are row-major).
Tensor with_format(const Tensor& t, std::optional<MemoryFormat> f, const char* op) {
  if (!f || *f == MemoryFormat::Preserve) return t;
  GB_CHECK(*f == MemoryFormat::Contiguous, op, ": memory_format ",
           *f == MemoryFormat::ChannelsLast ? "ChannelsLast" : "ChannelsLast3d",
           " is not supported: glassbox tensors are row-major (NCHW); leave memory_format out, or pass "
           "MemoryFormat::Contiguous");
  return t.contiguous();
}
}  // namespace

Tensor Tensor::to(ScalarType t, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) const {
  if (memory_format) return with_format(to(t, non_blocking, copy), memory_format, "to");
  detail::check_defined(*this, "to");
  if (t == scalar_type() && !copy) return *this;
  detail::OpScope op_scope("to", {*this});
  Tensor out = detail::make_empty(sizes(), t, device());
  detail::copy_into(out, *this);
  op_scope.set_output(out);
  if (autograd::needs_grad(*this) && is_floating_point() && gb::is_floating_point(t))
    autograd::record("ToCopyBackward0", {*this}, out, {},
                     [src = scalar_type()](autograd::BackwardContext& c) { return variable_list{c.grad().to(src)}; });
  return out;
}

Tensor Tensor::to(Device d) const {
  detail::check_defined(*this, "to");
  if (d == device() || (d.type() == device().type() && d.index() < 0)) return *this;
  GB_CHECK(!is_meta(), "to(", d.str(), "): Cannot copy out of meta tensor; no data! A meta tensor has a shape and an ",
           "allocation but no values; make the tensor on ", d.str(), " instead");
  if (d.is_meta()) {  // an allocation of the same shape on meta, no values and no autograd history (a new leaf)
    Tensor out = detail::make_empty(sizes(), scalar_type(), d);
    if (requires_grad()) out.requires_grad_(true);
    return out;
  }
  return detail::to_device(*this, d, false);
}
Tensor Tensor::to(Device d, ScalarType t, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) const {
  return with_format(detail::to_device(*this, d, non_blocking).to(t, non_blocking, copy), memory_format, "to");
}
Tensor Tensor::to(const TensorOptions& o, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) const {
  Tensor r = o.device().is_meta() ? to(o.device()) : detail::to_device(*this, o.device(), non_blocking);
  return with_format(o.has_dtype() ? r.to(o.dtype(), non_blocking, copy) : r, memory_format, "to");
}

Tensor Tensor::clone() const {
  detail::check_defined(*this, "clone");
  detail::OpScope op_scope("clone", {*this});
  Tensor out = detail::make_empty(sizes(), scalar_type(), device());
  detail::copy_into(out, *this);
  op_scope.set_output(out);
  if (autograd::needs_grad(*this))
    autograd::record("CloneBackward0", {*this}, out, {},
                     [](autograd::BackwardContext& c) { return variable_list{c.grad()}; });
  return out;
}

Tensor Tensor::contiguous(MemoryFormat memory_format) const {
  detail::check_defined(*this, "contiguous");
  if (memory_format != MemoryFormat::Contiguous) return with_format(*this, memory_format, "contiguous");
  return is_contiguous() ? *this : clone();
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  detail::check_defined(src, "copy_", "src");
  if (src.is_same(self)) return self;
  detail::check_no_internal_overlap(self, "copy_");  // PyTorch's TensorIterator checks, with its words
  detail::check_no_partial_overlap(self, src, "copy_");
  return detail::apply_inplace(
      self, {src}, autograd::needs_grad(src), false, "copy_",
      [&](const Tensor& self) {
        Tensor out = detail::make_empty(self.sizes(), self.scalar_type(), self.device());
        detail::copy_into(out, src);
        if (autograd::needs_grad(self, src))
          autograd::record("CopyBackwards", {self, src}, out, {},
                           [ss = src.sizes().vec(), st = src.scalar_type()](autograd::BackwardContext& c) {
                             Tensor gs = c.needs(1) ? sum_to(c.grad(), ss).to(st) : Tensor();
                             return variable_list{c.needs(0) ? zeros_like(c.grad()) : Tensor(), gs};
                           });
        return out;
      },
      [&](Tensor& self) { detail::copy_into(self, src); });
}

Tensor& Tensor::fill_(const Scalar& v) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  return detail::apply_inplace(
      self, {}, false, false, "fill_",
      [&](const Tensor& self) {
        Tensor out = full(self.sizes(), v, self.options());
        if (autograd::needs_grad(self))
          autograd::record("FillBackward0", {self}, out, {},
                           [](autograd::BackwardContext& c) { return variable_list{zeros_like(c.grad())}; });
        return out;
      },
      [&](Tensor& self) { detail::fill_tensor(self, v); });
}

Tensor& Tensor::zero_() const { return fill_(0); }

}  // namespace gb
