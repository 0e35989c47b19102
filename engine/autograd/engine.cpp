// engine/autograd/engine.cpp — the backward driver: discover, execute, release.
//
// 1. Discovery: walk the graph from the roots, counting for each node how many edges point at it.
//    With explicit inputs (grad(), backward(inputs=...)), mark the nodes on a path to them; skip the rest.
// 2. Execution: a ready queue ordered by sequence number (newest first, AccumulateGrad first of all); each node's
//    input buffer sums the gradients that arrive for it; a node runs when its count reaches zero.
// 3. Release: unless retain_graph, each node drops its saved tensors right after it runs (as PyTorch does, so the
//    peak memory of backward matches); the graph's bookkeeping is dropped at the end.
#include <chrono>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/streams.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/autograd/autograd.h"
#include "glassbox/memory/category.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "instrument/clock.h"
#include "instrument/probe.h"
#include "monitor/monitor.h"

namespace gb::autograd {
namespace {

thread_local BackwardStats t_stats;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Capture {  // grad(): where an input's gradient is picked up
  Node* node;
  uint32_t input_nr;
  size_t slot;
};

// The backward_node span's name: cached by the node's literal name when it has one (no string per node).
const trace::SourceLocation* node_location(const Node& node) {
  const char* literal = node.static_name();
  if (!literal) return trace::location(node.name(), trace::SpanKind::backward_node);
  thread_local std::unordered_map<const char*, const trace::SourceLocation*> cache;
  auto [it, fresh] = cache.try_emplace(literal, nullptr);
  if (fresh) it->second = trace::location(literal, trace::SpanKind::backward_node);
  return it->second;
}

struct ReadyCompare {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

void accumulate(Tensor& slot, Tensor&& g) {
  if (!slot.defined())
    slot = std::move(g);
  else
    slot = slot + g;
}

// Runs the graph below `roots` with `root_grads`. When captures is non-empty, only nodes leading to them run and
// the captured gradients are returned (AccumulateGrad of captured leaves does not run).
variable_list run_backward(const edge_list& roots, variable_list root_grads, bool keep_graph, bool create_graph,
                           const std::vector<Capture>& captures, size_t n_captures, bool accumulate_captures_into,
                           const variable_list& capture_tensors) {
  BackwardStats stats;
  int64_t t0 = now_ns();
  GB_TRACE_SPAN(trace::SpanKind::backward_phase, "backward");
  trace::PhaseScope phase_time(trace::Phase::backward);  // the step's backward_ns (the outermost backward counts)

  // ---- discovery ----
  std::optional<trace::Span> phase;
  static constexpr trace::SourceLocation kDiscovery{"discovery", __FILE__, __LINE__, trace::SpanKind::backward_phase};
  static constexpr trace::SourceLocation kExecution{"execution", __FILE__, __LINE__, trace::SpanKind::backward_phase};
  static constexpr trace::SourceLocation kRelease{"release", __FILE__, __LINE__, trace::SpanKind::backward_phase};
  phase.emplace(&kDiscovery);
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, std::shared_ptr<Node>> owners;  // keeps nodes alive while they wait in the queue
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const auto& e : roots) {
    if (e.function && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  std::vector<Node*> order;  // discovery order (for the "needed" pass)
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const auto& e : n->next_edges()) {
      if (!e.function) continue;
      ++deps[e.function.get()];
      if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }
  monitor::detail::BackwardWatch watch;  // traced: the graph, and the first node that makes a NaN/Inf gradient
  if (watch.on()) watch.discovered(order);
  std::unordered_set<Node*> needed;
  std::unordered_map<Node*, std::vector<const Capture*>> captures_at;
  const bool filtered = !captures.empty();
  if (filtered) {
    for (const auto& c : captures) {
      captures_at[c.node].push_back(&c);
      needed.insert(c.node);
    }
    // A node is needed when one of its children is: iterate to a fixed point over the discovered nodes.
    bool changed = true;
    while (changed) {
      changed = false;
      for (Node* n : order) {
        if (needed.count(n)) continue;
        for (const auto& e : n->next_edges())
          if (e.function && needed.count(e.function.get())) {
            needed.insert(n);
            changed = true;
            break;
          }
      }
    }
  }
  int64_t t1 = now_ns();

  // ---- execution ----
  phase.reset();
  phase.emplace(&kExecution);
  AutoGradMode grad_mode(create_graph);
  memory::CategoryGuard category(memory::Category::autograd_detail);  // gradient buffers, backward temporaries
  variable_list captured(n_captures);
  std::unordered_map<Node*, variable_list> buffers;
  std::priority_queue<Node*, std::vector<Node*>, ReadyCompare> ready;
  int64_t release_ticks = 0;  // the time-stamp counter (~10 ns a read, a clock read ~25): nanoseconds below
  const int64_t ticks0 = trace::ticks();

  BackwardStreams streams;  // cuda: each node on its forward stream (streams.h)
  bool on_cuda = false;
  // g, sent by `from` (nullptr: the caller's root gradient), into slot of `to`'s buffer: on a cuda device, on to's
  // stream after it waited for the sender's
  auto hand_over = [&](const Node* from, const Node& to, Tensor& slot, Tensor&& g) {
    std::optional<cuda::CUDAStream> dst = g.is_cuda() ? streams.stream_of(to, g) : std::nullopt;
    if (!dst) return accumulate(slot, std::move(g));
    on_cuda = true;
    const cuda::CUDAStream src = from ? *streams.stream_of(*from, g) : cuda::getCurrentCUDAStream(g.device().index());
    streams.wait(*dst, src);
    streams.used(*dst);
    streams.used(src);
    // g's block belongs to the sender's stream: not handed out again there before the receiver's use is done
    // (PyTorch's InputBuffer does the same)
    if (*dst != src) g.record_stream(*dst);
    cuda::CUDAStreamGuard on_dst(*dst);
    accumulate(slot, std::move(g));
  };
  for (size_t i = 0; i < roots.size(); ++i) {
    const auto& e = roots[i];
    if (!e.function) continue;
    auto& buf = buffers[e.function.get()];
    if (buf.size() < e.function->num_inputs()) buf.resize(e.function->num_inputs());
    hand_over(nullptr, *e.function, buf[e.input_nr], std::move(root_grads[i]));
    owners[e.function.get()] = e.function;
  }
  for (const auto& [node, owner] : owners)
    if (deps[node] == 0) ready.push(node);

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    std::shared_ptr<Node> keep = std::move(owners[node]);
    owners.erase(node);
    variable_list grads = std::move(buffers[node]);
    buffers.erase(node);
    if (grads.size() < node->num_inputs()) grads.resize(node->num_inputs());
    if (filtered && !needed.count(node)) continue;

    if (node->has_tensor_pre_hooks()) node->run_tensor_pre_hooks(grads);
    if (filtered) {
      const bool is_acc = node->is_accumulate_grad();
      auto it = captures_at.find(node);
      if (it != captures_at.end()) {
        for (const Capture* c : it->second) {
          if (c->input_nr >= grads.size() || !grads[c->input_nr].defined()) continue;
          const Tensor& g = grads[c->input_nr];
          if (!accumulate_captures_into) {
            Tensor copy = g;
            accumulate(captured[c->slot], std::move(copy));
          } else if (!is_acc) {  // backward(inputs=[non-leaf]): accumulate into its .grad
            Tensor& slot = capture_tensors[c->slot].unsafe_impl()->meta().grad;
            memory::CategoryGuard grad_category(memory::Category::gradient);
            if (!slot.defined())
              slot = create_graph ? g : g.detach().clone();
            else
              slot = slot + g;
          }
        }
      }
      // Leaves accumulate normally under backward(inputs=...); grad() never touches .grad.
      bool run = false;
      if (is_acc)
        run = accumulate_captures_into;
      else
        for (const auto& e : node->next_edges())
          if (e.function && needed.count(e.function.get())) run = true;
      if (!run) continue;
    }

    // A node that no gradient reached (every input undefined) is not run, but still releases its children.
    variable_list outputs;
    bool any_grad = false;
    for (const auto& g : grads) any_grad = any_grad || g.defined();
    if (any_grad) {
      ++stats.nodes_executed;
      trace::Span span(trace::spans_on() ? node_location(*node) : nullptr,
                       node->is_accumulate_grad() ? -1 : static_cast<int64_t>(node->sequence_nr()));
      {
        gb::detail::NodeScope formula;
        std::optional<cuda::CUDAStreamGuard> on_stream;  // where its forward ran (streams.h)
        if (node->stream_device >= 0) {
          const cuda::CUDAStream s = *BackwardStreams::forward_stream(*node);
          on_stream.emplace(s);
          streams.used(s);
          on_cuda = true;
        }
        outputs = node->apply(std::move(grads));
      }
      if (watch.on()) watch.node_done(node, outputs);
    }
    if (!keep_graph) {
      const int64_t r0 = trace::ticks();
      node->release_variables();
      release_ticks += trace::ticks() - r0;
    }
    const auto& edges = node->next_edges();
    GB_CHECK(outputs.size() <= edges.size() || edges.empty(), "function ", node->name(),
             " returned an incorrect number of gradients (expected ", edges.size(), ", got ", outputs.size(), ")");
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.function) continue;
      Node* next = e.function.get();
      if (i < outputs.size() && outputs[i].defined()) {
        Tensor g = std::move(outputs[i]);
        if (g.scalar_type() != e.dtype && is_floating_point(e.dtype)) {
          std::optional<cuda::CUDAStreamGuard> on_stream;  // the cast on the sender's stream
          if (g.is_cuda() && node->stream_device == g.device().index())
            on_stream.emplace(*BackwardStreams::forward_stream(*node));
          g = g.to(e.dtype);
        }
        auto& buf = buffers[next];
        if (buf.size() < next->num_inputs()) buf.resize(next->num_inputs());
        hand_over(node, *next, buf[e.input_nr], std::move(g));
      }
      if (!owners.count(next)) owners[next] = e.function;
      if (--deps[next] == 0) ready.push(next);
    }
  }
  if (on_cuda) streams.finish();  // the caller's streams wait for the ones backward used
  if (watch.on()) watch.finish();
  int64_t t2 = now_ns();
  phase.reset();
  phase.emplace(&kRelease);
  buffers.clear();
  owners.clear();
  phase.reset();
  int64_t t3 = now_ns();
  const int64_t ticks3 = trace::ticks();
  // ticks to nanoseconds at the rate of this very interval (from t1 on, when ticks0 was read)
  const int64_t release_ns =
      ticks3 > ticks0 ? int64_t(double(release_ticks) * double(t3 - t1) / double(ticks3 - ticks0)) : 0;
  stats.discovery_ns = t1 - t0;
  stats.execution_ns = (t2 - t1) - release_ns;
  stats.release_ns = release_ns + (t3 - t2);
  t_stats = stats;
  return captured;
}

void make_root(const variable_list& tensors, const variable_list& grad_tensors, edge_list& edges,
               variable_list& grads) {
  GB_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "got ", grad_tensors.size(),
           " gradients for ", tensors.size(), " tensors; pass one gradient per output tensor (or none for scalars)");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    detail::check_defined(t, "backward", "tensors");
    Edge e = gradient_edge(t);
    GB_CHECK(e.is_valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = i < grad_tensors.size() ? grad_tensors[i] : Tensor();
    if (!g.defined()) {
      GB_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs (output ", i, " has shape ",
               t.sizes(), "); pass a gradient of the same shape, e.g. y.backward(gb::ones_like(y))");
      g = ones_like(t);
    } else {
      GB_CHECK(g.sizes() == t.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ", g.sizes(),
               " and output[", i, "] has a shape of ", t.sizes(), ".");
    }
    edges.push_back(std::move(e));
    grads.push_back(std::move(g));
  }
}

}  // namespace

const BackwardStats& last_backward_stats() { return t_stats; }

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  edge_list roots;
  variable_list grads;
  make_root(tensors, grad_tensors, roots, grads);
  if (grad_tensors.empty()) monitor::detail::on_backward_roots(tensors);  // the loss
  bool keep = retain_graph.value_or(create_graph);
  std::vector<Capture> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    GB_CHECK(e.is_valid(), "backward(inputs=...): input ", i,
             " does not require grad; every input must be a tensor "
             "that requires grad");
    captures.push_back(Capture{e.function.get(), e.input_nr, i});
  }
  // With inputs, leaves accumulate through their AccumulateGrad (which runs), non-leaves into .grad directly.
  if (captures.empty()) {
    run_backward(roots, std::move(grads), keep, create_graph, {}, 0, false, {});
    return;
  }
  std::vector<Capture> leaf_caps, nonleaf_caps;
  for (const auto& c : captures) (c.node->is_accumulate_grad() ? leaf_caps : nonleaf_caps).push_back(c);
  // Run once, capturing at every input; leaves' AccumulateGrad nodes run normally because they are "needed".
  std::vector<Capture> all = nonleaf_caps;
  for (const auto& c : leaf_caps) all.push_back(c);
  run_backward(roots, std::move(grads), keep, create_graph, all, inputs.size(), true, inputs);
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  edge_list roots;
  variable_list grads;
  make_root(outputs, grad_outputs, roots, grads);
  std::vector<Capture> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    detail::check_defined(inputs[i], "grad", "inputs");
    Edge e = gradient_edge(inputs[i]);
    GB_CHECK(e.is_valid(), "One of the differentiated Tensors does not require grad (input ", i, ", shape ",
             inputs[i].sizes(), "); call requires_grad_() on it before the forward pass");
    captures.push_back(Capture{e.function.get(), e.input_nr, i});
  }
  GB_CHECK(!captures.empty(), "grad requires non-empty inputs.");
  variable_list result = run_backward(roots, std::move(grads), retain_graph.value_or(create_graph), create_graph,
                                      captures, inputs.size(), false, {});
  for (size_t i = 0; i < result.size(); ++i) {
    GB_CHECK(result[i].defined() || allow_unused, "One of the differentiated Tensors (input ", i, ", shape ",
             inputs[i].sizes(),
             ") appears to not have been used in the graph. Set allow_unused=True if this is the "
             "desired behavior.");
    if (result[i].defined() && !create_graph) result[i] = result[i].detach();
  }
  return result;
}

}  // namespace gb::autograd
