// engine/autograd/views.cpp — view tracking, CopySlices and regenerated view grad_fns (the design is in views.h).
#include "autograd/views.h"

#include <optional>

#include "autograd/record.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"

namespace gb::autograd {

namespace {

// Stands in for an in-place op whose recorded node does not take the view as its input 0 (a composite op):
// the whole new value of the view is then "input 1", its history the result's.
struct InplaceResultBackward final : Node {
  explicit InplaceResultBackward(edge_list edges) : Node(std::move(edges), 1) {}
  std::string name() const override { return "InplaceResultBackward"; }
  variable_list apply(variable_list&& grads) override { return {Tensor(), std::move(grads[0])}; }
};

}  // namespace

StridedGeometry geometry_of(const Tensor& base, const Tensor& view) {
  return StridedGeometry{base.sizes().vec(), base.strides().vec(), view.sizes().vec(), view.strides().vec(),
                         view.storage_offset() - base.storage_offset()};
}

Tensor strided_embed(const Tensor& g, const StridedGeometry& geo) {
  // A stride-0 dim (expand) sends all its elements to one place: their gradients add up there.
  auto sizes = geo.sizes;
  std::vector<int64_t> expanded;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (geo.strides[d] == 0 && sizes[d] != 1) {
      expanded.push_back(int64_t(d));
      sizes[d] = 1;
    }
  Tensor gs = expanded.empty() ? g : g.sum(expanded, /*keepdim=*/true);
  Tensor out = empty_strided(geo.base_sizes, geo.base_strides, g.options());
  {
    NoGradGuard ng;
    out.zero_();
  }
  out.as_strided(sizes, geo.strides, out.storage_offset() + geo.offset).copy_(gs);  // CopySlices under create_graph
  return out;
}

void track_view(const Tensor& view, const Tensor& input) {
  TensorImpl* v = view.unsafe_impl();
  const TensorImpl* in = input.unsafe_impl();
  v->view_base = in->view_base ? in->view_base : input.impl_ptr();
  if (const auto& m = v->view_base->autograd) v->view_base_fn = m->grad_fn;
  v->view_made_in_no_grad = !GradMode::is_enabled() || in->view_made_in_no_grad;
}

void regenerate_view_grad_fn(const Tensor& view) {
  TensorImpl* impl = view.unsafe_impl();
  Tensor base(impl->view_base);  // the root: never a view itself, so no recursion here
  impl->view_base_fn = base.grad_fn();
  if (!base.requires_grad()) {
    if (impl->autograd) {
      impl->autograd->grad_fn.reset();
      impl->autograd->output_nr = 0;
    }
    return;
  }
  // Its own op (as_strided of the base): regeneration happens wherever a stale view's grad_fn is first read, inside
  // another op (whose own node must keep that op's span) or outside any.
  gb::detail::OpScope op_scope("as_strided", {base});
  Tensor v = view;
  record("AsStridedBackward0", edge_list{gradient_edge(base)}, {&v}, {},
         [geo = geometry_of(base, view)](BackwardContext& c) { return variable_list{strided_embed(c.grad(), geo)}; });
}

void check_inplace_view(const Tensor& view, bool grad_needed) {
  const TensorImpl* impl = view.unsafe_impl();
  if (!grad_needed || !impl->view_base) return;
  GB_CHECK(!impl->view_made_in_no_grad,
           "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
           "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
           "and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or "
           "both outside (if you want the inplace to be tracked).");
  Tensor base(impl->view_base);
  GB_CHECK(!(base.is_leaf() && base.requires_grad()),
           "a view of a leaf Variable that requires grad is being used in an in-place operation. (The view has shape ",
           view.sizes(), ", its base ", base.sizes(),
           "; modify the leaf under gb::NoGradGuard if this is an update, "
           "or clone it first: y = x.clone(); y.select(...).mul_(...).)");
}

void rebase_view_history(const Tensor& view, const std::shared_ptr<Node>& fn, const Edge& stand_in_edge,
                         const Tensor& result) {
  Tensor base(view.unsafe_impl()->view_base);
  // CopySlices belongs to the in-place op the user called (apply_inplace and the random fills open its scope);
  // "copy_slices" only if some caller has none.
  std::optional<gb::detail::OpScope> own_scope;
  if (!gb::detail::OpScope::current()) own_scope.emplace("copy_slices", gb::detail::OpScope::Inputs{view, result});
  std::shared_ptr<Node> f = fn;
  if (f && !f->next_edges().empty()) {
    const Edge& e0 = f->next_edge(0);
    bool view_is_input0 = stand_in_edge.is_valid()
                              ? e0.function == stand_in_edge.function && e0.input_nr == stand_in_edge.input_nr
                              : !e0.is_valid();
    if (!view_is_input0) f = std::make_shared<InplaceResultBackward>(edge_list{Edge{}, gradient_edge(result)});
  }
  edge_list edges{gradient_edge(base)};
  if (f)
    for (size_t i = 1; i < f->next_edges().size(); ++i) edges.push_back(f->next_edge(i));
  auto copy_slices = std::make_shared<CopySlices>(std::move(edges), geometry_of(base, view), std::move(f));
  set_history(base, copy_slices, 0);
  link_to_op(*copy_slices, &view);
  // the in-place op's own node (run by CopySlices, never by the engine) when it had none recorded in a nested op
  if (const auto& inner = copy_slices->fn(); inner && inner->forward_span_id == 0)
    inner->forward_span_id = copy_slices->forward_span_id;
  regenerate_view_grad_fn(view);
}

variable_list CopySlices::apply(variable_list&& grads) {
  variable_list out(num_outputs());
  const Tensor& g = grads[0];
  if (!g.defined()) return out;
  // result: the base's gradient, laid out like the base so that the view's geometry picks the view's part.
  Tensor result = empty_strided(geo_.base_sizes, geo_.base_strides, g.options());
  result.copy_(g);
  Tensor slice = result.as_strided(geo_.sizes, geo_.strides, result.storage_offset() + geo_.offset);
  variable_list res;
  if (fn_) res = fn_->apply(variable_list{slice.clone()});
  if (should_compute_output(0)) {
    if (!res.empty() && res[0].defined())
      slice.copy_(res[0]);
    else
      slice.zero_();
    out[0] = std::move(result);
  }
  for (size_t i = 1; i < out.size() && i < res.size(); ++i) out[i] = std::move(res[i]);
  return out;
}

}  // namespace gb::autograd
