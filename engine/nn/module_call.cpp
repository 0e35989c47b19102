// engine/nn/module_call.cpp — what happens around one module call: the module scope (memory attribution and
// the trace's module span and modules/params rows) and PyTorch's full backward hooks.
#include <atomic>
#include <sstream>

#include "autograd/record.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/memory/category.h"
#include "glassbox/nn/module.h"
#include "instrument/probe.h"
#include "monitor/monitor.h"

namespace gb::nn {
namespace {

thread_local const Module* t_current = nullptr;
std::atomic<int64_t> g_next_param_id{1};

// The trace's dtype numbers are ScalarType's (asserted in records.h's users: monitor/grad_stats.cpp).
trace::DType trace_dtype(ScalarType t) { return static_cast<trace::DType>(static_cast<int>(t)); }

}  // namespace

void Module::trace_register() const {
  // Once per process, by one thread: the trace registry keeps modules and params rows and writes them into every
  // session's file (as it does the string table).
  if (!trace::enabled() || traced_.exchange(true)) return;
  trace::ModuleRecord rec;
  rec.id = id_;
  rec.path = path();
  rec.type = name();
  if (parent_) {
    parent_->trace_register();
    rec.parent_id = parent_->id_;
  }
  monitor::detail::note_module(id_, rec.path, rec.type);
  trace::emit(rec);
  if (!parent_)  // the root: every parameter's path, for submodules that never run (names only, no rows)
    for (const auto& p : named_parameters(/*recurse=*/true))
      if (p.value().defined()) monitor::detail::note_param_label(p.value().unsafe_impl(), p.key());
  for (const auto& p : parameters_) {
    if (!p.value().defined()) continue;
    trace::ParamRecord pr;
    pr.id = g_next_param_id.fetch_add(1);
    pr.module_id = id_;
    pr.name = p.key();
    std::ostringstream shape;
    shape << p.value().sizes();
    pr.shape = shape.str();
    pr.numel = p.value().numel();
    pr.dtype = trace_dtype(p.value().scalar_type());
    monitor::detail::note_param(p.value().unsafe_impl(), pr.id, id_, pr.name);
    trace::emit(pr);
  }
}

namespace detail {

ModuleCallScope::ModuleCallScope(const Module& m) {
  if (t_current == &m) return;  // the holder opened it; the built-in forward finds it open
  opened_ = true;
  prev_ = t_current;
  t_current = &m;
  memory_.emplace(m.path_name_id());
  if (trace::enabled()) [[unlikely]] {
    m.trace_register();
    module_.emplace(m.id());
    span_.emplace(m.span_location());
  } else if (trace::nvtx_on()) [[unlikely]] {
    span_.emplace(m.span_location());  // an NVTX range only (probe.h)
  }
}

ModuleCallScope::~ModuleCallScope() {
  if (!opened_) return;
  span_.reset();  // ends inside the module scope: the span row carries the module id
  module_.reset();
  memory_.reset();
  t_current = prev_;
}

void replace_from(const std::vector<Tensor*>& refs, const variable_list& values, const char* what, const Module& m) {
  GB_CHECK(values.size() == refs.size(), m.name(), " ", what, " returned ", values.size(), " tensors for ", refs.size(),
           "; return one per tensor (or std::nullopt to keep them)");
  for (size_t i = 0; i < refs.size(); ++i) *refs[i] = values[i];
}

// --- full backward hooks (PyTorch's torch.utils.hooks.BackwardHook) ----------------------------------------
//
// Forward: the tensor inputs pass through one identity node (InputsNode), the outputs through another
// (OutputsNode). Backward reaches OutputsNode first: it records grad_output. When every input that needs a
// gradient has its gradient, InputsNode runs the hooks with (grad_input, grad_output) and passes on what they
// return. With no input needing a gradient, the hooks run at OutputsNode with grad_input all undefined.

class BackwardHookState {
 public:
  Module* module = nullptr;
  std::weak_ptr<Module> keep;
  variable_list grad_outputs;
  size_t n_inputs = 0;
  bool inputs_wrapped = false;

  variable_list run(variable_list grad_inputs) {
    for (auto& [id, hook] : module->backward_hooks())
      if (auto r = hook(*module, grad_inputs, grad_outputs)) {
        GB_CHECK(r->size() == grad_inputs.size(), module->name(), " full backward hook returned ", r->size(),
                 " gradients for ", grad_inputs.size(), " inputs; return one per input (or std::nullopt)");
        grad_inputs = std::move(*r);
      }
    return grad_inputs;
  }
};

namespace {

struct InputsNode final : autograd::Node {
  explicit InputsNode(std::shared_ptr<BackwardHookState> s) : Node({}, 0), state(std::move(s)) {}
  std::string name() const override { return "BackwardHookFunctionBackward"; }
  variable_list apply(variable_list&& grads) override { return state->run(std::move(grads)); }
  void set_inputs(uint32_t n) { num_inputs_ = n; }
  std::shared_ptr<BackwardHookState> state;
};

struct OutputsNode final : autograd::Node {
  explicit OutputsNode(std::shared_ptr<BackwardHookState> s) : Node({}, 0), state(std::move(s)) {}
  std::string name() const override { return "BackwardHookFunctionBackward"; }
  variable_list apply(variable_list&& grads) override {
    state->grad_outputs = grads;
    if (!state->inputs_wrapped) state->run(variable_list(state->n_inputs));
    return std::move(grads);
  }
  void set_inputs(uint32_t n) { num_inputs_ = n; }
  std::shared_ptr<BackwardHookState> state;
};

const Tensor& nth(const variable_list& ts, size_t i) {
  static const Tensor none;
  return i < ts.size() ? ts[i] : none;
}

// Routes each tensor that requires grad through a new node N (identity forward; the gradient passes through apply).
// The node is made and linked inside an op of its own, "backward_hook", like any op that records a node.
template <typename N>
bool wrap(const std::shared_ptr<BackwardHookState>& state, variable_list& tensors) {
  if (!GradMode::is_enabled()) return false;
  autograd::edge_list edges;
  bool any = false;
  for (const auto& t : tensors) {
    autograd::Edge e = t.defined() ? autograd::gradient_edge(t) : autograd::Edge{};
    any = any || e.is_valid();
    edges.push_back(std::move(e));
  }
  if (!any) return false;
  // inputs: the tensors as passed (an identity: each is replaced below by an alias of itself, same shape and dtype)
  gb::detail::OpScope op_scope("backward_hook", {nth(tensors, 0), nth(tensors, 1), nth(tensors, 2), nth(tensors, 3),
                                                 nth(tensors, 4), nth(tensors, 5)});
  auto node = std::make_shared<N>(state);
  node->mutable_next_edges() = std::move(edges);
  node->set_inputs(uint32_t(tensors.size()));
  const Tensor* first = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    Tensor& t = tensors[i];
    if (!t.defined() || !node->next_edges()[i].is_valid()) continue;
    t = gb::detail::shallow_alias(t);
    autograd::set_history(t, node, uint32_t(i));
    if (!first) first = &t;
  }
  autograd::link_to_op(*node, first);
  return true;
}

}  // namespace

std::shared_ptr<BackwardHookState> backward_hooks_begin(Module& m, variable_list& inputs) {
  auto state = std::make_shared<BackwardHookState>();
  state->module = &m;
  state->n_inputs = inputs.size();
  state->inputs_wrapped = wrap<InputsNode>(state, inputs);
  return state;
}

void backward_hooks_end(const std::shared_ptr<BackwardHookState>& state, variable_list& outputs) {
  wrap<OutputsNode>(state, outputs);
}

}  // namespace detail
}  // namespace gb::nn
