// engine/ops/inplace.h — how in-place ops (add_, mul_, relu_, ...) keep autograd right (internal).
//
// Without autograd, the kernel writes into self and bumps the version counter. With autograd, an in-place op
// f_(self, ...) is recorded as self = f(self_before, ...): f runs out of place on a stand-in for self that
// carries self's history (sharing storage when f does not save self, a copy when it does), the result is
// written into self, and self's grad_fn becomes f's node. Any other node that saved self sees the version bump
// and raises PyTorch's "modified by an inplace operation" error instead of using the overwritten values.
// When self is a view (made by a view op), the history that changes is its base's: the base's grad_fn becomes
// CopySlices(f's node) and self's grad_fn a view of that (autograd/views.h, PyTorch's rebase_history).
//
// apply_inplace opens the in-place op's scope (detail::OpScope, named like the method: "add_", "relu_"), so the raw
// kernel, the out-of-place f (whose own scope, nested, links f's node) and the CopySlices of a view (linked to this
// scope) all run inside it.
#pragma once

#include "autograd/record.h"
#include "autograd/views.h"
#include "core/make.h"
#include "core/op_scope.h"

namespace gb::detail {

// Raw copy of src (broadcast to dst's shape, converted to dst's dtype) into dst; no autograd, no version bump.
void copy_into(const Tensor& dst, const Tensor& src);

// Throws PyTorch's errors when an in-place op on self would break autograd: a leaf that requires grad, a view of
// one, a view made in no-grad mode.
void check_inplace(const Tensor& self, bool grad_needed, const char* op);

// out_of_place(stand_in) computes the op's result with autograd; raw(self) computes it in place without. `others`
// are the op's other tensor inputs (at most two; for the op's span), `op` a string literal.
template <typename OutOfPlace, typename Raw>
Tensor& apply_inplace(Tensor& self, OpScope::Inputs others, bool others_require_grad, bool saves_self, const char* op,
                      const OutOfPlace& out_of_place, const Raw& raw) {
  const Tensor none;
  const Tensor& other0 = others.size() > 0 ? others.begin()[0].get() : none;
  const Tensor& other1 = others.size() > 1 ? others.begin()[1].get() : none;
  OpScope op_scope(op, {self, other0, other1});
  bool grad_needed = GradMode::is_enabled() && (self.requires_grad() || others_require_grad);
  check_inplace(self, grad_needed, op);
  if (!grad_needed) {
    raw(self);
    bump_version(self);
    op_scope.set_output(self);
    return self;
  }
  Tensor stand_in = saves_self ? shallow_alias(self).clone() : shallow_alias(self);
  if (self.requires_grad()) {
    auto& m = stand_in.unsafe_impl()->meta();
    if (self.grad_fn()) {
      m.grad_fn = self.grad_fn();
      m.output_nr = self.output_nr();
    } else {
      m.requires_grad = true;  // unreachable for leaves (check_inplace), kept for completeness
    }
  }
  Tensor result = out_of_place(stand_in);
  {
    NoGradGuard ng;
    copy_into(self, result);
  }
  bump_version(self);
  op_scope.set_output(self);
  if (self.unsafe_impl()->view_base) {
    autograd::rebase_view_history(self, result.grad_fn(), autograd::gradient_edge(stand_in), result);
    return self;
  }
  auto& m = self.unsafe_impl()->meta();
  m.grad_fn = result.grad_fn();
  m.output_nr = result.output_nr();
  return self;
}

}  // namespace gb::detail
