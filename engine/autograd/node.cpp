// engine/autograd/node.cpp — Nodes, saved variables (with PyTorch's two famous errors), and leaf accumulation.
#include "glassbox/autograd/node.h"

#include <atomic>

#include "autograd/memory_roles.h"
#include "autograd/record.h"
#include "autograd/views.h"
#include "core/make.h"
#include "core/observer.h"
#include "core/op_scope.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/autograd/saved_tensor_hooks.h"
#include "glassbox/core/cuda_stream.h"
#include "glassbox/ops/pointwise.h"

namespace gb::autograd {

namespace {
std::atomic<uint64_t> g_sequence_nr{0};
}
uint64_t next_sequence_nr() { return g_sequence_nr.fetch_add(1, std::memory_order_relaxed); }

Node::Node(edge_list next_edges, uint32_t num_inputs)
    : next_edges_(std::move(next_edges)), num_inputs_(num_inputs), sequence_nr_(next_sequence_nr()) {}

std::vector<std::pair<std::shared_ptr<Node>, uint32_t>> Node::next_functions() const {
  std::vector<std::pair<std::shared_ptr<Node>, uint32_t>> out;
  out.reserve(next_edges_.size());
  for (const auto& e : next_edges_) out.emplace_back(e.function, e.input_nr);
  return out;
}

void Node::add_tensor_pre_hook(unsigned id, uint32_t input_nr, TensorHook hook) {
  pre_hooks_.push_back(PreHook{id, input_nr, std::move(hook)});
}

bool Node::remove_tensor_pre_hook(unsigned id) {
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it)
    if (it->id == id && id != 0) {
      pre_hooks_.erase(it);
      return true;
    }
  return false;
}

void Node::run_tensor_pre_hooks(variable_list& grads) const {
  for (const auto& h : pre_hooks_) {
    if (h.input_nr >= grads.size() || !grads[h.input_nr].defined()) continue;
    Tensor r = h.fn(grads[h.input_nr]);
    if (r.defined()) grads[h.input_nr] = std::move(r);
  }
}

// ---- SavedVariable ----

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t._version();
  requires_grad_ = t.requires_grad();
  is_leaf_ = t.is_leaf();
  output_nr_ = t.output_nr();
  Tensor data;
  if (is_output && t.grad_fn()) {
    data = detail::shallow_alias(t);  // no grad_fn: no cycle node -> saved -> tensor -> node
    weak_grad_fn_ = t.grad_fn();
    grad_fn_name_ = t.grad_fn()->name();
  } else {
    data = t;
    if (t.grad_fn()) grad_fn_name_ = t.grad_fn()->name();
  }
  if (auto hooks = current_saved_tensor_hooks()) {
    storage_ = t.storage();
    hooks_ = std::move(hooks);
    packed_ = hooks_->pack(data);  // what the hook keeps is all this SavedVariable holds
    return;
  }
  data_ = std::move(data);
  mark_ = std::make_shared<gb::detail::ActivationMark>(data_);
}

void SavedVariable::reset_data() {
  if (was_defined_) released_ = true;
  mark_.reset();
  data_ = Tensor();
  packed_.reset();
  hooks_.reset();
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  if (!was_defined_) return Tensor();
  if (released_ || (!data_.defined() && !hooks_))
    throw Error(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
        "you need to access saved tensors after calling backward.");
  Tensor data = data_;
  uint32_t now = saved_version_;
  if (hooks_) {
    data = hooks_->unpack(packed_);
    GB_CHECK(data.defined(),
             "saved_tensors_hooks: the unpack hook returned an undefined tensor; it must return "
             "the tensor pack was given (or one equal to it)");
    if (auto s = storage_.lock()) now = s->version;  // freed storage: nobody can have written to it
  } else {
    now = data_._version();
  }
  if (now != saved_version_) {
    std::string who;
    if (!grad_fn_name_.empty())
      who = detail::str_cat(", which is output ", output_nr_, " of ", grad_fn_name_, ",");
    else if (is_leaf_ && requires_grad_)
      who = ", which is a leaf tensor that requires grad,";
    throw Error(detail::str_cat(
        "one of the variables needed for gradient computation has been modified by an inplace operation: [",
        tensor_type_name(data.scalar_type()), " ", data.sizes(), "]", who, " is at version ", now,
        "; expected version ", saved_version_,
        " instead. Hint: the backtrace further above shows the operation that failed to compute its gradient. "
        "The variable in question was changed in there or anywhere later. Use an out-of-place op (y = y.mul(2) "
        "instead of y.mul_(2)) or .clone() the tensor before modifying it."));
  }
  if (is_output_ && requires_grad_ && saved_for && GradMode::is_enabled()) {
    // Re-attach the output to its node so that a create_graph backward differentiates through it.
    Tensor t = detail::shallow_alias(data);
    auto& m = t.unsafe_impl()->meta();
    m.grad_fn = saved_for;
    m.output_nr = output_nr_;
    return t;
  }
  return data;
}

int64_t SavedVariable::nbytes() const {
  if (!data_.defined()) return 0;
  return data_.numel() * static_cast<int64_t>(element_size(data_.scalar_type()));
}

// ---- leaves ----

AccumulateGrad::AccumulateGrad(Tensor v) : Node({}, 1), variable(std::move(v)) {
  sequence_nr_ = UINT64_MAX;  // runs as soon as ready, like PyTorch
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  auto& meta = variable.unsafe_impl()->meta();
  for (const auto& [id, hook] : meta.leaf_hooks) {
    Tensor r = hook(g);
    if (r.defined()) g = std::move(r);
  }
  if (g.scalar_type() != variable.scalar_type()) {
    AutoGradMode mode(GradMode::is_enabled());
    g = g.to(variable.scalar_type());
  }
  Tensor& grad = meta.grad;
  if (grad.defined())  // traced: a .grad a step used, not zeroed since?
    gb::detail::notify([&](gb::detail::EngineObserver& o) { o.on_accumulate(variable); });
  memory::CategoryGuard category(memory::Category::gradient);    // a new .grad buffer is a gradient
  if (!grad.defined()) {
    if (!GradMode::is_enabled()) {
      // Steal the buffer when nobody else can see it (PyTorch does the same); copy otherwise, so that .grad never
      // aliases another tensor's gradient.
      bool unique =
          g.use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous() && g.sizes() == variable.sizes();
      grad = unique ? g.detach() : g.detach().clone();
      if (unique) gb::detail::tag_storage(grad, memory::Category::gradient);  // the engine's buffer, now the .grad
    } else {
      grad = g.sizes() == variable.sizes() ? g.clone() : g.expand(variable.sizes()).clone();
    }
  } else if (!GradMode::is_enabled()) {
    grad.add_(g);  // grad += g, in place: never overwrite
  } else {
    grad = grad + g;  // create_graph: keep the graph of the gradient itself
  }
  for (auto& [id, hook] : meta.post_accumulate_hooks) hook(variable);
  return {};
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return Edge{};
  refresh_view(t);
  const auto& m = t.unsafe_impl()->autograd;
  if (!m) return Edge{};
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr, t.scalar_type()};
  if (m->requires_grad) return Edge{grad_accumulator(t), 0, t.scalar_type()};
  return Edge{};
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  auto& m = leaf.unsafe_impl()->meta();
  if (auto acc = m.grad_accumulator.lock()) return acc;
  auto acc = std::make_shared<AccumulateGrad>(leaf);
  m.grad_accumulator = acc;
  return acc;
}

// ---- recording helpers (record.h) ----

void link_to_op(Node& node, const Tensor* first_output) {
  gb::detail::OpScope* op = gb::detail::OpScope::current();
  if (!op) return;
  op->set_node(node);
  if (first_output) op->set_output(*first_output);
}

void set_history(Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  if (node->stream_device < 0 && out.is_cuda()) {  // backward runs the node where its forward ran (streams.h)
    const cuda::CUDAStream s = cuda::getCurrentCUDAStream(out.device().index());
    node->stream_device = s.device_index();
    node->stream = s.stream();
  }
  auto& m = out.unsafe_impl()->meta();
  m.grad_fn = node;
  m.output_nr = output_nr;
}

edge_list collect_edges(std::initializer_list<std::reference_wrapper<const Tensor>> inputs) {
  edge_list edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
  return edges;
}

edge_list collect_edges(TensorList inputs) {
  edge_list edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
  return edges;
}

}  // namespace gb::autograd
