// engine/autograd/backward_phases.cpp — discovery and execution of one backward (autograd/backward_phases.h).
#include "autograd/backward_phases.h"

#include <optional>

#include "core/observer.h"
#include "core/op_scope.h"
#include "glassbox/core/error.h"
#include "glassbox/memory/category.h"
#include "glassbox/ops/pointwise.h"
#include "instrument/clock.h"
#include "instrument/probe.h"

namespace gb::autograd {
namespace {

// The backward_node span's name: cached by the node's literal name when it has one (no string per node).
const trace::SourceLocation* node_location(const Node& node) {
  const char* literal = node.static_name();
  if (!literal) return trace::location(node.name(), trace::SpanKind::backward_node);
  thread_local std::unordered_map<const char*, const trace::SourceLocation*> cache;
  auto [it, fresh] = cache.try_emplace(literal, nullptr);
  if (fresh) it->second = trace::location(literal, trace::SpanKind::backward_node);
  return it->second;
}

void accumulate(Tensor& slot, Tensor&& g) {
  if (!slot.defined())
    slot = std::move(g);
  else
    slot = slot + g;
}

}  // namespace

BackwardGraph discover(const edge_list& roots, const std::vector<Capture>& captures) {
  BackwardGraph graph;
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const auto& e : roots) {
    if (e.function && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    graph.order.push_back(n);
    for (const auto& e : n->next_edges()) {
      if (!e.function) continue;
      ++graph.deps[e.function.get()];
      if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }
  graph.filtered = !captures.empty();
  if (!graph.filtered) return graph;
  for (const auto& c : captures) {
    graph.captures_at[c.node].push_back(&c);
    graph.needed.insert(c.node);
  }
  // A node is needed when one of its children is: iterate to a fixed point over the discovered nodes.
  bool changed = true;
  while (changed) {
    changed = false;
    for (Node* n : graph.order) {
      if (graph.needed.count(n)) continue;
      for (const auto& e : n->next_edges())
        if (e.function && graph.needed.count(e.function.get())) {
          graph.needed.insert(n);
          changed = true;
          break;
        }
    }
  }
  return graph;
}

Execution::Execution(BackwardGraph& graph, const BackwardOptions& options,
                     const std::vector<std::unique_ptr<detail::BackwardObserver>>& observers)
    : graph_(graph), options_(options), observers_(observers), captured_(options.n_captures) {}

// g, sent by `from` (nullptr: the caller's root gradient), into slot of `to`'s buffer: on a cuda device, on to's
// stream after it waited for the sender's
void Execution::hand_over(const Node* from, const Node& to, Tensor& slot, Tensor&& g) {
  std::optional<cuda::CUDAStream> dst = g.is_cuda() ? streams_.stream_of(to, g) : std::nullopt;
  if (!dst) return accumulate(slot, std::move(g));
  on_cuda_ = true;
  const cuda::CUDAStream src = from ? *streams_.stream_of(*from, g) : cuda::getCurrentCUDAStream(g.device().index());
  streams_.wait(*dst, src);
  streams_.used(*dst);
  streams_.used(src);
  // g's block belongs to the sender's stream: not handed out again there before the receiver's use is done
  // (PyTorch's InputBuffer does the same)
  if (*dst != src) g.record_stream(*dst);
  cuda::CUDAStreamGuard on_dst(*dst);
  accumulate(slot, std::move(g));
}

void Execution::seed(const edge_list& roots, variable_list root_grads) {
  for (size_t i = 0; i < roots.size(); ++i) {
    const auto& e = roots[i];
    if (!e.function) continue;
    auto& buf = buffers_[e.function.get()];
    if (buf.size() < e.function->num_inputs()) buf.resize(e.function->num_inputs());
    hand_over(nullptr, *e.function, buf[e.input_nr], std::move(root_grads[i]));
    owners_[e.function.get()] = e.function;
  }
  for (const auto& [node, owner] : owners_)
    if (graph_.deps[node] == 0) ready_.push(node);
}

bool Execution::next(ReadyNode& ready) {
  if (ready_.empty()) return false;
  Node* node = ready_.top();
  ready_.pop();
  ready.node = std::move(owners_[node]);
  owners_.erase(node);
  ready.grads = std::move(buffers_[node]);
  buffers_.erase(node);
  if (ready.grads.size() < node->num_inputs()) ready.grads.resize(node->num_inputs());
  return true;
}

void Execution::pick_up_captures(Node& node, const variable_list& grads) {
  auto it = graph_.captures_at.find(&node);
  if (it == graph_.captures_at.end()) return;
  const bool is_acc = node.is_accumulate_grad();
  for (const Capture* c : it->second) {
    if (c->input_nr >= grads.size() || !grads[c->input_nr].defined()) continue;
    const Tensor& g = grads[c->input_nr];
    if (!options_.accumulate_captures_into) {
      Tensor copy = g;
      accumulate(captured_[c->slot], std::move(copy));
    } else if (!is_acc) {  // backward(inputs=[non-leaf]): accumulate into its .grad
      Tensor& slot = (*options_.capture_tensors)[c->slot].unsafe_impl()->meta().grad;
      memory::CategoryGuard grad_category(memory::Category::gradient);
      if (!slot.defined())
        slot = options_.create_graph ? g : g.detach().clone();
      else
        slot = slot + g;
    }
  }
}

bool Execution::run_node(ReadyNode& ready, variable_list& out) {
  Node* node = ready.node.get();
  variable_list& grads = ready.grads;
  out.clear();
  if (graph_.filtered && !needed(node)) return false;

  if (node->has_tensor_pre_hooks()) node->run_tensor_pre_hooks(grads);
  if (graph_.filtered) {
    pick_up_captures(*node, grads);
    // Leaves accumulate normally under backward(inputs=...); grad() never touches .grad.
    bool run = false;
    if (node->is_accumulate_grad())
      run = options_.accumulate_captures_into;
    else
      for (const auto& e : node->next_edges())
        if (e.function && needed(e.function.get())) run = true;
    if (!run) return false;
  }

  // A node that no gradient reached (every input undefined) is not run, but still releases its children.
  bool any_grad = false;
  for (const auto& g : grads) any_grad = any_grad || g.defined();
  if (any_grad) {
    ++nodes_executed_;
    trace::Span span(trace::spans_on() ? node_location(*node) : nullptr,
                     node->is_accumulate_grad() ? -1 : static_cast<int64_t>(node->sequence_nr()));
    {
      gb::detail::NodeScope formula;
      std::optional<cuda::CUDAStreamGuard> on_stream;  // where its forward ran (streams.h)
      if (node->stream_device >= 0) {
        const cuda::CUDAStream s = *BackwardStreams::forward_stream(*node);
        on_stream.emplace(s);
        streams_.used(s);
        on_cuda_ = true;
      }
      out = node->apply(std::move(grads));
    }
    for (const auto& o : observers_) o->node_done(node, out);
  }
  if (!options_.keep_graph) {
    const int64_t r0 = trace::ticks();
    node->release_variables();
    release_ticks_ += trace::ticks() - r0;
  }
  return true;
}

void Execution::deliver(Node& node, variable_list&& out) {
  const auto& edges = node.next_edges();
  GB_CHECK(out.size() <= edges.size() || edges.empty(), "function ", node.name(),
           " returned an incorrect number of gradients (expected ", edges.size(), ", got ", out.size(), ")");
  for (size_t i = 0; i < edges.size(); ++i) {
    const Edge& e = edges[i];
    if (!e.function) continue;
    Node* next = e.function.get();
    if (i < out.size() && out[i].defined()) {
      Tensor g = std::move(out[i]);
      if (g.scalar_type() != e.dtype && is_floating_point(e.dtype)) {
        std::optional<cuda::CUDAStreamGuard> on_stream;  // the cast on the sender's stream
        if (g.is_cuda() && node.stream_device == g.device().index())
          on_stream.emplace(*BackwardStreams::forward_stream(node));
        g = g.to(e.dtype);
      }
      auto& buf = buffers_[next];
      if (buf.size() < next->num_inputs()) buf.resize(next->num_inputs());
      hand_over(&node, *next, buf[e.input_nr], std::move(g));
    }
    if (!owners_.count(next)) owners_[next] = e.function;
    if (--graph_.deps[next] == 0) ready_.push(next);
  }
}

variable_list Execution::finish() {
  if (on_cuda_) streams_.finish();  // the caller's streams wait for the ones backward used
  return std::move(captured_);
}

void Execution::release() {
  buffers_.clear();
  owners_.clear();
}

}  // namespace gb::autograd
