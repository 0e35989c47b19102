// engine/ops/random.cpp — in-place random fills: uniform_, normal_, bernoulli_ (from the default generator).
//
// Draws are serial, so a seed gives the same numbers whatever the thread count. Like PyTorch, these are
// in-place writes that autograd treats as a fresh value (no gradient flows to what was there before).
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/core/generator.h"
#include "glassbox/ops/factory.h"
#include "ops/inplace.h"

namespace gb {
namespace {

template <typename Draw>
Tensor& fill_random(Tensor& self, const char* op, const Draw& draw) {
  detail::OpScope op_scope(op, {self});
  detail::check_device(self, op, "self");
  bool grad_needed = GradMode::is_enabled() && self.requires_grad();
  detail::check_inplace(self, grad_needed, op);
  Tensor target = self.is_contiguous() ? self : detail::make_empty(self.sizes(), self.scalar_type(), self.device());
  if (!detail::skip_kernel(target))
    detail::dispatch_floating(self.scalar_type(), op, [&](auto tag) {  // meta: no draws
      using T = typename decltype(tag)::type;
      T* p = reinterpret_cast<T*>(target.data_ptr());
      Generator& g = default_generator();
      for (int64_t i = 0; i < target.numel(); ++i) p[i] = T(opmath_t<T>(draw(g)));
    });
  if (!target.is_same(self)) detail::copy_into(self, target);
  detail::bump_version(self);
  op_scope.set_output(self);
  // A fresh value: on a view, the base's history gets a CopySlices that sends no gradient to the old values.
  if (grad_needed && self.unsafe_impl()->view_base) autograd::rebase_view_history(self, nullptr, {}, Tensor());
  return self;
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  return fill_random(self, "uniform_", [&](Generator& g) { return from + (to - from) * g.uniform_double(); });
}

Tensor& Tensor::normal_(double mean, double std) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return fill_random(self, "normal_", [&](Generator& g) { return mean + std * g.normal(); });
}

Tensor& Tensor::bernoulli_(double p) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return fill_random(self, "bernoulli_", [&](Generator& g) { return g.uniform_double() < p ? 1.0 : 0.0; });
}

}  // namespace gb
