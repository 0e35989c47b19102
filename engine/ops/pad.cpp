// engine/ops/pad.cpp — padding: constant_pad_nd (a fill, then the input copied inside; negative pads crop) with its
// backward under it, and pad's other modes (reflect, replicate, circular) as one index_select per padded dim,
// whose backward accumulates the gradients of the repeated elements.
#include <algorithm>
#include <string>
#include <vector>

#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb {
namespace {

void check_pad_length(const Tensor& x, IntArrayRef pad, const char* op) {
  GB_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size(), " (", op, " got ", pad,
           "); give (left, right) pairs, the last dim's first");
  GB_CHECK(int64_t(pad.size()) / 2 <= x.dim(),
           "Length of pad should be no more than twice the number of dimensions "
           "of the input. Pad length is ",
           pad.size(), " while the input has ", x.dim(), " dimensions.");
}

// The dim the i-th (left, right) pair pads: the last dim first.
int64_t padded_dim(const Tensor& x, size_t pair) { return x.dim() - 1 - int64_t(pair); }

}  // namespace

Tensor constant_pad_nd(const Tensor& x, IntArrayRef pad, const Scalar& value) {
  detail::OpScope op_scope("constant_pad_nd", {x});
  detail::check_device(x, "constant_pad_nd");
  check_pad_length(x, pad, "constant_pad_nd");
  std::vector<int64_t> shape = x.sizes().vec();
  Tensor src = detail::shallow_alias(x);
  bool empty = false;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = padded_dim(x, i), l = pad[2 * i], r = pad[2 * i + 1];
    shape[size_t(d)] = x.size(d) + l + r;
    GB_CHECK(shape[size_t(d)] >= 0, "The input size ", x.size(d), ", plus negative padding ", l, " and ", r,
             " resulted in a negative output size, which is invalid. Check dimension ", d, " of your input.");
    const int64_t keep = x.size(d) - std::max<int64_t>(-l, 0) - std::max<int64_t>(-r, 0);
    if (keep <= 0) {
      empty = true;
      continue;
    }
    src = src.narrow(d, std::max<int64_t>(-l, 0), keep);  // negative pads crop
  }
  Tensor out = full(shape, value, TensorOptions().dtype(x.scalar_type()).device(x.device()));
  if (!empty && src.numel() > 0) {
    Tensor dst = out;
    for (size_t i = 0; i < pad.size() / 2; ++i) {
      const int64_t d = padded_dim(x, i);
      dst = dst.narrow(d, std::max<int64_t>(pad[2 * i], 0), src.size(d));
    }
    detail::copy_into(detail::shallow_alias(dst), src);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(x))
    autograd::record("ConstantPadNdBackward0", {x}, out, {}, [pad = pad.vec()](autograd::BackwardContext& c) {
      std::vector<int64_t> back(pad.size());
      for (size_t i = 0; i < pad.size(); ++i) back[i] = -pad[i];  // crop what was added, pad what was cropped
      return variable_list{constant_pad_nd(c.grad(), back, 0)};
    });
  return out;
}

Tensor pad(const Tensor& x, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  if (mode == "constant") return constant_pad_nd(x, pad, value.value_or(0.0));
  detail::OpScope op_scope("pad", {x});
  detail::check_device(x, "pad");  // an index_select per padded dim: on cuda too
  const std::string m(mode);
  GB_CHECK(m == "reflect" || m == "replicate" || m == "circular", "pad: unrecognised padding mode \"", m,
           "\"; use \"constant\", \"reflect\", \"replicate\" or \"circular\"");
  GB_CHECK(!value.has_value() || *value == 0, "Padding mode \"", m,
           "\" doesn't take in value argument; drop the "
           "value, or use mode \"constant\"");
  check_pad_length(x, pad, "pad");
  const int64_t k = int64_t(pad.size()) / 2;
  GB_CHECK(k >= 1 && k <= 3 && (x.dim() == k + 1 || x.dim() == k + 2),
           "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now (pad of length ", pad.size(),
           " in mode \"", m, "\" on an input of shape ", x.sizes(),
           "): pad the last 1, 2 or 3 dims of an input "
           "with 1 or 2 more dims (an optional batch, then channels)");
  Tensor y = x;
  bool padded = false;
  for (size_t i = 0; i < size_t(k); ++i) {
    const int64_t d = padded_dim(x, i), n = x.size(d), l = pad[2 * i], r = pad[2 * i + 1];
    GB_CHECK(l >= 0 && r >= 0, "pad: negative padding (", l, ", ", r, ") at dimension ", d,
             " is only supported in "
             "mode \"constant\"; crop with narrow() first");
    if (m == "reflect")
      GB_CHECK(l < n && r < n,
               "Argument #4: Padding size should be less than the corresponding input dimension, "
               "but got: padding (",
               l, ", ", r, ") at dimension ", d, " of input ", x.sizes());
    if (m == "replicate")
      GB_CHECK(n > 0 || (l == 0 && r == 0), "pad: mode \"replicate\" needs a non-empty dimension ", d, " of input ",
               x.sizes(), " to repeat its edge");
    if (m == "circular")
      GB_CHECK(l <= n && r <= n, "Padding value causes wrapping around more than once (padding (", l, ", ", r,
               ") at dimension ", d, " of input ", x.sizes(), "); pad by at most the size of the dimension");
    if (l == 0 && r == 0) continue;
    std::vector<int64_t> idx(size_t(n + l + r));
    for (int64_t j = 0; j < n + l + r; ++j) {
      int64_t s = j - l;
      if (m == "reflect")
        s = s < 0 ? -s : s >= n ? 2 * (n - 1) - s : s;
      else if (m == "replicate")
        s = std::clamp<int64_t>(s, 0, n - 1);
      else
        s = ((s % n) + n) % n;
      idx[size_t(j)] = s;
    }
    Tensor index = detail::values_on(ArrayRef<int64_t>(idx), kInt64, x.device());
    y = y.index_select(d, index);
    padded = true;
  }
  if (!padded) y = x.clone();  // a new tensor, as with any padding
  op_scope.set_output(y);
  return y;
}

}  // namespace gb
