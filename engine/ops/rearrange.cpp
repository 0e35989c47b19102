// engine/ops/rearrange.cpp — flip, repeat and roll: copies that move elements without computing (PyTorch makes
// them copies too), each op's backward under it (roll's: the narrow and cat it is made of).
#include <cstdint>
#include <vector>

#include "autograd/record.h"
#include "core/composed.h"
#include "core/device_kernel.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb {
namespace {

// dst (contiguous, `sizes`) = src read with element strides `st` (negative along flipped dims) from `src`.
template <typename E>
void strided_gather(E* dst, const E* src, IntArrayRef sizes, IntArrayRef st, int64_t numel) {
  const int64_t nd = int64_t(sizes.size());
  if (nd == 0) {
    dst[0] = src[0];
    return;
  }
  std::vector<int64_t> cnt(size_t(nd), 0);
  const int64_t last = sizes[nd - 1], ls = st[size_t(nd - 1)];
  int64_t off = 0;
  for (int64_t o = 0; o < numel; o += last) {
    const E* s = src + off;
    for (int64_t i = 0; i < last; ++i) dst[o + i] = s[i * ls];
    for (int64_t d = nd - 2; d >= 0; --d) {  // next row: odometer over the outer dims
      off += st[size_t(d)];
      if (++cnt[size_t(d)] < sizes[d]) break;
      off -= st[size_t(d)] * sizes[d];
      cnt[size_t(d)] = 0;
    }
  }
}

void flip_kernel(const Tensor& a, const std::vector<bool>& flipped, const Tensor& out) {
  Tensor ac = detail::shallow_alias(a).contiguous();  // made on meta too: the same allocations as on cpu
  if (out.numel() == 0) return;
  detail::run_cpu_kernel("flip", out, [&] {
    DimVector st = detail::contiguous_strides(a.sizes());
    int64_t offset = 0;
    for (size_t d = 0; d < st.size(); ++d)
      if (flipped[d]) {
        offset += (a.size(int64_t(d)) - 1) * st[d];
        st[d] = -st[d];
      }
    auto run = [&](auto zero) {
      using E = decltype(zero);
      strided_gather(static_cast<E*>(out.data_ptr()), static_cast<const E*>(ac.data_ptr()) + offset, a.sizes(), st,
                     a.numel());
    };
    switch (a.element_size()) {
      case 1:
        return run(uint8_t{});
      case 2:
        return run(uint16_t{});
      case 4:
        return run(uint32_t{});
      default:
        return run(uint64_t{});
    }
  });
}

}  // namespace

Tensor flip(const Tensor& a, IntArrayRef dims) {
  detail::OpScope op_scope("flip", {a});
  detail::check_device(a, "flip");
  std::vector<bool> flipped(size_t(a.dim()), false);
  for (int64_t d : dims) {
    const int64_t w = detail::wrap_dim(d, a.dim(), "flip");
    if (a.dim() == 0) continue;
    GB_CHECK(!flipped[size_t(w)], "dim ", w, " appears multiple times in the list of dims (flip got dims ", dims,
             "); name each dim once");
    flipped[size_t(w)] = true;
  }
  Tensor out = detail::make_empty(a.sizes(), a.scalar_type(), a.device());
  if (detail::composed_path(a)) {  // one index_select with the reversed positions per flipped dim
    NoGradGuard ng;
    Tensor x = a;
    for (int64_t d = 0; d < a.dim(); ++d)
      if (flipped[size_t(d)] && a.size(d) > 1) {
        const int64_t n = a.size(d);
        x = x.index_select(d, arange(n, TensorOptions().dtype(kInt64).device(a.device())) * -1 + (n - 1));
      }
    detail::copy_into(out, x);
  } else {
    flip_kernel(a, flipped, out);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("FlipBackward0", {a}, out, {},
                     [dims = dims.vec()](autograd::BackwardContext& c) { return variable_list{c.grad().flip(dims)}; });
  return out;
}

Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims) {
  detail::OpScope op_scope("roll", {a});
  detail::check_device(a, "roll");
  if (dims.empty()) {  // over the flattened tensor
    GB_CHECK(shifts.size() == 1, "roll: without dims, give one shift (got ", shifts.size(), "); with dims, one per dim");
    Tensor out = roll(a.flatten(), shifts, {0}).view(a.sizes());
    op_scope.set_output(out);
    return out;
  }
  GB_CHECK(shifts.size() == dims.size(), "roll: shifts and dimensions must align. shifts: ", shifts.size(),
           ", dims: ", dims.size());
  Tensor out = a;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = detail::wrap_dim(dims[i], a.dim(), "roll");
    const int64_t n = a.dim() == 0 ? 1 : a.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);  // the last s elements come first
  }
  if (out.is_same(a)) out = a.clone();  // a copy, as PyTorch's
  op_scope.set_output(out);
  return out;
}

Tensor repeat(const Tensor& a, IntArrayRef repeats) {
  detail::OpScope op_scope("repeat", {a});
  detail::check_device(a, "repeat");
  const int64_t nd = int64_t(repeats.size());
  GB_CHECK(nd >= a.dim(),
           "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
           "tensor (repeat dims ",
           repeats, " for a tensor of shape ", a.sizes(),
           "); give one repeat per dim, 1 "
           "where it stays");
  for (int64_t r : repeats)
    GB_CHECK(r >= 0, "Trying to create tensor with negative dimension ", r, ": repeat got ", repeats,
             "; repeats must be >= 0");
  // a viewed as (1, s0, 1, s1, ...) and expanded to (r0, s0, r1, s1, ...) is the result, laid out as (r0 s0, ...)
  std::vector<int64_t> ones_sizes, expanded, out_shape, repeat_dims;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t s = d < nd - a.dim() ? 1 : a.size(d - (nd - a.dim()));
    ones_sizes.insert(ones_sizes.end(), {1, s});
    expanded.insert(expanded.end(), {repeats[d], s});
    out_shape.push_back(repeats[d] * s);
    repeat_dims.push_back(2 * d);
  }
  Tensor out = detail::make_empty(out_shape, a.scalar_type(), a.device());
  {
    NoGradGuard no_grad;
    if (out.numel() > 0)
      detail::copy_into(out.view(expanded), detail::shallow_alias(a).reshape(ones_sizes).expand(expanded));
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("RepeatBackward0", {a}, out, {},
                     [expanded, repeat_dims, s = a.sizes().vec()](autograd::BackwardContext& c) {
                       // each element of a received the sum of its copies' gradients
                       if (repeat_dims.empty()) return variable_list{c.grad()};
                       return variable_list{c.grad().reshape(expanded).sum(repeat_dims).reshape(s)};
                     });
  return out;
}

}  // namespace gb
