// engine/autograd/record.h — how an op records its backward (internal).
//
// An op computes its result, then, if any input requires grad and grad mode is on, records one node whose
// backward is a lambda written right under the forward, in terms of differentiable gb ops (so create_graph
// gives higher-order gradients for free):
//
//   Tensor mul(const Tensor& a, const Tensor& b) {
//     detail::OpScope op_scope("mul", {a, b});  // the op's span; the node recorded inside it links to it
//     Tensor out = mul_kernel(a, b);
//     if (autograd::needs_grad(a, b))
//       autograd::record("MulBackward0", {a, b}, out, {autograd::input(a), autograd::input(b)},
//         [as = a.sizes().vec(), bs = b.sizes().vec()](autograd::BackwardContext& c) -> variable_list {
//           return {c.needs(0) ? sum_to(c.grad() * c.saved(1), as) : Tensor(),
//                   c.needs(1) ? sum_to(c.grad() * c.saved(0), bs) : Tensor()};
//         });
//     return out;
//   }
//
// Tensors the backward needs go through `saved` (SavedVariable: version-checked, freed after backward);
// everything else (sizes, flags) is captured by value in the lambda.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/autograd/node.h"
#include "glassbox/core/tensor.h"

namespace gb::autograd {

struct BackwardContext {
  variable_list grads;       // one per forward output (undefined where no gradient arrived)
  variable_list saved_list;  // unpacked saved tensors, in the order recorded
  const Node* node;
  const Tensor& grad(size_t i = 0) const { return grads[i]; }
  const Tensor& saved(size_t i) const { return saved_list[i]; }
  bool needs(size_t i) const { return node->should_compute_output(i); }
};

template <class F>
struct LambdaNode final : Node {
  LambdaNode(const char* name, edge_list edges, uint32_t num_inputs, F fn)
      : Node(std::move(edges), num_inputs), name_(name), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  const char* static_name() const override { return name_; }
  int64_t saved_bytes() const override {
    int64_t n = 0;
    for (const auto& s : saved_) n += s.nbytes();
    return n;
  }
  variable_list apply(variable_list&& grads) override {
    BackwardContext ctx{std::move(grads), {}, this};
    if (!saved_.empty()) {
      auto self = shared_from_this();
      ctx.saved_list.reserve(saved_.size());
      for (const auto& s : saved_) ctx.saved_list.push_back(s.unpack(self));
    }
    return fn_(ctx);
  }
  void release_variables() override {
    for (auto& s : saved_) s.reset_data();
  }

  const char* name_;
  std::vector<SavedVariable> saved_;
  F fn_;
};

// What to save: an op's input, or one of its outputs (saved without history to avoid a reference cycle).
struct Save {
  const Tensor* tensor;
  bool is_output;
};
inline Save input(const Tensor& t) { return Save{&t, false}; }
inline Save output(const Tensor& t) { return Save{&t, true}; }

template <typename... Ts>
bool needs_grad(const Ts&... ts) {
  if (!GradMode::is_enabled()) return false;
  return ((ts.defined() && ts.requires_grad()) || ...);
}
inline bool needs_grad_list(TensorList ts) {
  if (!GradMode::is_enabled()) return false;
  for (const auto& t : ts)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

// Links a node just recorded to the op that recorded it (detail::OpScope, engine/core/op_scope.h): the op span's
// seq and the node's forward span and module; the first output becomes the op's result.
void link_to_op(Node& node, const Tensor* first_output);

// Makes `out` the output_nr-th output of node: its grad_fn.
void set_history(Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr = 0);
edge_list collect_edges(std::initializer_list<std::reference_wrapper<const Tensor>> inputs);
edge_list collect_edges(TensorList inputs);

// Records a node with backward `fn` for `outputs` (differentiable outputs, in order) of an op on `inputs`.
template <class F>
std::shared_ptr<Node> record(const char* name, edge_list edges, std::initializer_list<Tensor*> outputs,
                             std::initializer_list<Save> saved, F&& fn) {
  auto node = std::make_shared<LambdaNode<std::decay_t<F>>>(name, std::move(edges), uint32_t(outputs.size()),
                                                            std::forward<F>(fn));
  uint32_t nr = 0;
  for (Tensor* o : outputs) set_history(*o, node, nr++);
  node->saved_.reserve(saved.size());
  for (const Save& s : saved) node->saved_.emplace_back(*s.tensor, s.is_output);
  link_to_op(*node, outputs.size() ? *outputs.begin() : nullptr);
  return node;
}

template <class F>
std::shared_ptr<Node> record(const char* name, std::initializer_list<std::reference_wrapper<const Tensor>> inputs,
                             Tensor& out, std::initializer_list<Save> saved, F&& fn) {
  return record(name, collect_edges(inputs), {&out}, saved, std::forward<F>(fn));
}

}  // namespace gb::autograd
