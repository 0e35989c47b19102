// engine/autograd/views.h — autograd for in-place ops on views: view tracking, CopySlices, regenerated view
// grad_fns (internal). PyTorch's mechanism, built the same way:
//
//   auto y = x * 1;             // y: non-leaf base
//   auto v = y.select(0, 1);    // v.view_base == y (the ROOT base: a view of a view points at y too)
//   v.mul_(2);                  // MulBackward0 `fn` runs on a stand-in for v, the result is written into v, then
//                               // y.grad_fn = CopySlices{edge 0: y's old history, edges 1..: fn's other inputs}
//                               // v.grad_fn = AsStridedBackward0(CopySlices): v is again a view of y's history
//
// CopySlices backward: result = grad (y-shaped); g_v = result's slice at v's geometry; result's slice = fn's
// gradient for its input 0 (zeros if none); return {result, fn's other gradients}. Every step is a
// differentiable gb op, so create_graph works through it.
//
// Views made before the in-place op (or before an in-place op on the base itself) are stale: their grad_fn was
// built against the base's old history. TensorImpl::view_base_fn remembers which base grad_fn a view was built
// against; whoever reads a view's grad_fn (Tensor::grad_fn, requires_grad, output_nr, gradient_edge) first calls
// refresh_view, which regenerates a stale one as AsStridedBackward0 of the base's current history.
//
// Not done here: views that overlap themselves other than by stride-0 (expand) dims; as_strided views reaching
// outside their input's memory.
#pragma once

#include <memory>
#include <vector>

#include "glassbox/autograd/node.h"
#include "glassbox/core/tensor.h"

namespace gb::autograd {

// Where a view lies in its base: the base's sizes and strides, the view's sizes and strides, and the view's
// storage offset minus the base's.
struct StridedGeometry {
  std::vector<int64_t> base_sizes, base_strides, sizes, strides;
  int64_t offset = 0;
};
StridedGeometry geometry_of(const Tensor& base, const Tensor& view);

// The gradient of an as_strided view (AsStridedBackward0): zeros laid out like the base, with g written at the
// view's place (summed over stride-0 dims first). Differentiable in g.
Tensor strided_embed(const Tensor& g, const StridedGeometry& geo);

// View ops call this on the view they made from `input`: records the root base and the base's current grad_fn.
void track_view(const Tensor& view, const Tensor& input);

void regenerate_view_grad_fn(const Tensor& view);
// A view whose base's grad_fn moved on since its own grad_fn was built gets a fresh AsStridedBackward0.
inline void refresh_view(const Tensor& t) {
  TensorImpl* impl = t.unsafe_impl();
  if (!impl->view_base) return;
  const auto& m = impl->view_base->autograd;
  static const std::shared_ptr<Node> none;
  const std::shared_ptr<Node>& now = m ? m->grad_fn : none;
  const auto& seen = impl->view_base_fn;
  if (seen.owner_before(now) || now.owner_before(seen)) regenerate_view_grad_fn(t);
}

// apply_inplace on a view: PyTorch's leaf-view and no-grad-view errors.
void check_inplace_view(const Tensor& view, bool grad_needed);
// apply_inplace on a view, after the op's result (whose grad_fn is `fn`, computed on a stand-in carrying the
// view's history `stand_in_edge`) was written into the view: the base's history becomes CopySlices(fn) and the
// view's grad_fn a view of it.
void rebase_view_history(const Tensor& view, const std::shared_ptr<Node>& fn, const Edge& stand_in_edge,
                         const Tensor& result);

// The node that replaces a base's history after an in-place op on one of its views.
struct CopySlices final : Node {
  CopySlices(edge_list edges, StridedGeometry geo, std::shared_ptr<Node> fn)
      : Node(std::move(edges), 1), geo_(std::move(geo)), fn_(std::move(fn)) {}
  std::string name() const override { return "CopySlices"; }
  variable_list apply(variable_list&& grads) override;
  void release_variables() override {
    if (fn_) fn_->release_variables();
  }
  const std::shared_ptr<Node>& fn() const { return fn_; }

 private:
  StridedGeometry geo_;
  std::shared_ptr<Node> fn_;  // the in-place op's out-of-place node; its input 0 is the view
};

}  // namespace gb::autograd
