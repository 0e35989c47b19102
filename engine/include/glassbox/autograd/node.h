// glassbox/autograd/node.h — the recorded graph: Nodes (backward functions), Edges, and SavedVariables.
//
// An op that needs a gradient creates one Node whose next_edges point at the grad_fn (or AccumulateGrad node)
// of each input. Node::apply receives one gradient per forward output and returns one per forward input
// (undefined = no gradient). Sequence numbers grow as ops run; the engine executes higher numbers first.
// SavedVariable keeps what backward needs and remembers the storage version it saw, so an in-place write in
// between is caught with PyTorch's message instead of silently producing a wrong gradient.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::detail {
class ActivationMark;
}

namespace gb::autograd {

struct Node;
struct SavedTensorHookPair;

struct Edge {
  std::shared_ptr<Node> function;  // null = this input needs no gradient
  uint32_t input_nr = 0;           // which of function's gradient inputs this edge feeds
  ScalarType dtype = kFloat;       // the input's dtype: gradients are cast back to it
  bool is_valid() const { return function != nullptr; }
};
using edge_list = std::vector<Edge>;

// The next sequence number on this thread (and advance it).
uint64_t next_sequence_nr();

struct Node : std::enable_shared_from_this<Node> {
  explicit Node(edge_list next_edges = {}, uint32_t num_inputs = 1);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;  // "MulBackward0", as PyTorch names it
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual void release_variables() {}                // drop saved tensors (after backward without retain_graph)
  virtual int64_t saved_bytes() const { return 0; }  // bytes of the tensors it holds for backward (0 once released)
  // The name as a string literal when it has one (cheap for the tracer; nullptr: use name()).
  virtual const char* static_name() const { return nullptr; }
  virtual bool is_accumulate_grad() const { return false; }

  uint64_t sequence_nr() const { return sequence_nr_; }
  const edge_list& next_edges() const { return next_edges_; }
  edge_list& mutable_next_edges() { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  // Python's grad_fn.next_functions: (node or null, input_nr) per forward input.
  std::vector<std::pair<std::shared_ptr<Node>, uint32_t>> next_functions() const;
  uint32_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return next_edges_.size(); }
  bool should_compute_output(size_t i) const { return i < next_edges_.size() && next_edges_[i].is_valid(); }

  // Hooks on the gradient arriving at input `input_nr` (register_hook on a non-leaf output). A hook returning
  // a defined Tensor replaces the gradient.
  using TensorHook = std::function<Tensor(const Tensor&)>;
  void add_tensor_pre_hook(unsigned id, uint32_t input_nr, TensorHook hook);
  bool remove_tensor_pre_hook(unsigned id);
  void run_tensor_pre_hooks(variable_list& grads) const;
  bool has_tensor_pre_hooks() const { return !pre_hooks_.empty(); }

  // Where the forward op was recorded in a trace (set by the instrument layer; 0 = unknown).
  uint64_t forward_span_id = 0;
  int32_t forward_module_id = -1;    // modules.id of the module the forward op ran in (-1 = none)
  const char* forward_op = nullptr;  // the name of the op that recorded it (a literal; nullptr = unknown)
  // cuda: the stream its forward op ran on (the current stream of its first cuda output's device when that output
  // was attached; a cudaStream_t), which backward runs it on; stream_device -1: none (a cpu op).
  int32_t stream_device = -1;
  void* stream = nullptr;

 protected:
  edge_list next_edges_;
  uint32_t num_inputs_;
  uint64_t sequence_nr_;

 private:
  struct PreHook {
    unsigned id;
    uint32_t input_nr;
    TensorHook fn;
  };
  std::vector<PreHook> pre_hooks_;
};

// What backward needs from the forward pass. An op output is stored without its history (no reference cycle
// through its own grad_fn); unpack(node) re-attaches it so double backward sees the right graph. Under saved-tensor
// hooks (glassbox/autograd/saved_tensor_hooks.h) only the packed value is kept, and unpack calls the unpack hook.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);

  // Throws PyTorch's errors when the graph was already freed, or when the tensor was modified in place.
  Tensor unpack(const std::shared_ptr<Node>& saved_for = nullptr) const;
  void reset_data();
  bool was_defined() const { return was_defined_; }
  int64_t nbytes() const;  // bytes of the tensor it holds (0 when released, undefined, or packed by hooks)

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool was_defined_ = false;
  bool released_ = false;
  bool requires_grad_ = false;
  bool is_leaf_ = false;
  std::weak_ptr<Node> weak_grad_fn_;  // for outputs: the node that produced it (for the error message)
  std::string grad_fn_name_;
  // With hooks: what pack returned, the hooks, and the original storage (weak: its version, while it lives).
  std::any packed_;
  std::shared_ptr<const SavedTensorHookPair> hooks_;
  std::weak_ptr<StorageImpl> storage_;
  // Tags data_'s block as an activation while held (memory categories); declared last, so released first.
  std::shared_ptr<gb::detail::ActivationMark> mark_;
};

// Adds gradients to a leaf's .grad(): `grad += g`, never overwrite; runs leaf hooks before and
// post-accumulate-grad hooks after.
struct AccumulateGrad final : Node {
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override;
  bool is_accumulate_grad() const override { return true; }
  Tensor variable;
};

// The edge a gradient for t flows along: its grad_fn, its AccumulateGrad (a leaf that requires grad), or none.
Edge gradient_edge(const Tensor& t);
// The AccumulateGrad node of a leaf, created on first use and shared afterwards.
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);

}  // namespace gb::autograd
