// engine/ops/masked_select.cpp — masked_select: the elements where a bool mask is true, as a 1-D tensor; its
// backward (a scatter back into the broadcast shape) under it. And nonzero: where they are. On cuda the mask (the
// input of nonzero) is read back, a wait for the device: the result's size depends on it (PyTorch waits there too);
// the gather and the scatter of the backward run on the device.
#include <vector>

#include "autograd/record.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "ops/inplace.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"

namespace gb {

Tensor masked_select(const Tensor& a, const Tensor& mask) {
  const char* op = "masked_select";
  detail::OpScope op_scope(op, {a, mask});
  detail::check_device(a, op);
  detail::check_device(mask, op, "mask", a);
  GB_CHECK_TYPE(mask.scalar_type() == kBool, "masked_select: expected BoolTensor for mask, but got ",
                to_string(mask.scalar_type()), ". Make the mask with a comparison (x > 0) or .to(gb::kBool).");
  detail::check_has_data(mask, op, "the result's size is the number of true elements of the mask");
  const std::vector<int64_t> shape = broadcast_shapes(a.sizes(), mask.sizes(), op);
  // the flat positions, in the broadcast shape, of the true elements
  Tensor mc = detail::shallow_alias(mask).expand(shape).contiguous().to(kCPU);
  std::vector<int64_t> pos;
  const bool* mp = mc.data_ptr<bool>();
  for (int64_t i = 0; i < mc.numel(); ++i)
    if (mp[i]) pos.push_back(i);
  Tensor idx = tensor(ArrayRef<int64_t>(pos), TensorOptions().dtype(kInt64)).to(a.device());
  Tensor out;
  {
    NoGradGuard no_grad;
    out = detail::shallow_alias(a).expand(shape).reshape({-1}).index_select(0, idx);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record(
        "MaskedSelectBackward0", {a}, out, {}, [idx, shape, s = a.sizes().vec()](autograd::BackwardContext& c) {
          const Tensor& g = c.grad();
          Tensor z = zeros({detail::numel_of(shape)}, TensorOptions().dtype(g.scalar_type()).device(g.device()));
          return variable_list{sum_to(z.scatter_add(0, idx, g).view(shape), s)};
        });
  return out;
}

Tensor nonzero(const Tensor& a) {
  const char* op = "nonzero";
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op);
  detail::check_has_data(a, op, "the result's size is the number of nonzero elements");
  Tensor c = detail::shallow_alias(a).to(kCPU).contiguous();
  std::vector<int64_t> coords;
  int64_t n = 0;
  const int64_t k = c.dim();
  std::vector<int64_t> at(size_t(k), 0);
  detail::dispatch_all(c.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = c.data_ptr<T>();
    for (int64_t i = 0; i < c.numel(); ++i) {
      if (p[i] != T(0)) {
        coords.insert(coords.end(), at.begin(), at.end());
        ++n;
      }
      for (int64_t j = k - 1; j >= 0; --j) {  // the next coordinate, row-major
        if (++at[size_t(j)] < c.size(j)) break;
        at[size_t(j)] = 0;
      }
    }
  });
  Tensor out = detail::make_empty({n, k}, kInt64, a.device());
  if (!coords.empty()) {
    Tensor host = tensor(ArrayRef<int64_t>(coords), TensorOptions().dtype(kInt64)).view({n, k});
    detail::copy_into(out, host);
  }
  op_scope.set_output(out);
  return out;
}

}  // namespace gb
