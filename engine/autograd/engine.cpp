// engine/autograd/engine.cpp — the backward driver: backward() and grad() run the phases of
// autograd/backward_phases.h in order, each inside its trace span, and tell the observers (core/observer.h).
//
//   discover   a `backward_phase` span "discovery": dependency counts from the roots (with explicit inputs, the
//              nodes on a path to them); then each observer is asked for a BackwardObserver and shown the graph.
//   execute    span "execution": the roots seeded, then node after node from the ready queue (newest first,
//              AccumulateGrad first): run it (its saved tensors released right after unless retain_graph, so the
//              peak memory of backward matches PyTorch's) and deliver what it sends; the streams joined, and the
//              observers' finish (which may throw gb::AnomalyError in raise mode).
//   release    span "release": the graph's bookkeeping dropped.
// The whole is a `backward` span and the step's backward time (trace::Phase::backward); last_backward_stats() has
// each phase's time (the release of saved tensors counted in release, not execution) and the nodes run.
#include <chrono>
#include <optional>

#include "autograd/backward_phases.h"
#include "core/make.h"
#include "core/observer.h"
#include "glassbox/autograd/autograd.h"
#include "glassbox/memory/category.h"
#include "glassbox/ops/factory.h"
#include "instrument/clock.h"
#include "instrument/probe.h"

namespace gb::autograd {
namespace {

thread_local BackwardStats t_stats;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

using BackwardObservers = std::vector<std::unique_ptr<gb::detail::BackwardObserver>>;

// Each registered observer's watch over this backward (none when nobody listens: no allocation).
BackwardObservers start_observers() {
  BackwardObservers watches;
  gb::detail::notify([&](gb::detail::EngineObserver& o) {
    if (auto w = o.on_backward_start()) watches.push_back(std::move(w));
  });
  return watches;
}

// Runs the graph below `roots` with `root_grads`. With captures, only nodes leading to them run and the captured
// gradients are returned (AccumulateGrad of captured leaves runs only when options.accumulate_captures_into).
variable_list run_backward(const edge_list& roots, variable_list root_grads, const std::vector<Capture>& captures,
                           const BackwardOptions& options) {
  BackwardStats stats;
  int64_t t0 = now_ns();
  GB_TRACE_SPAN(trace::SpanKind::backward_phase, "backward");
  trace::PhaseScope phase_time(trace::Phase::backward);  // the step's backward_ns (the outermost backward counts)
  std::optional<trace::Span> phase;
  static constexpr trace::SourceLocation kDiscovery{"discovery", __FILE__, __LINE__, trace::SpanKind::backward_phase};
  static constexpr trace::SourceLocation kExecution{"execution", __FILE__, __LINE__, trace::SpanKind::backward_phase};
  static constexpr trace::SourceLocation kRelease{"release", __FILE__, __LINE__, trace::SpanKind::backward_phase};

  phase.emplace(&kDiscovery);
  BackwardGraph graph = discover(roots, captures);
  const BackwardObservers watches = start_observers();  // traced: the graph, the first node making a NaN/Inf
  for (const auto& w : watches) w->discovered(graph.order);
  int64_t t1 = now_ns();

  phase.reset();
  phase.emplace(&kExecution);
  AutoGradMode grad_mode(options.create_graph);
  memory::CategoryGuard category(memory::Category::autograd_detail);  // gradient buffers, backward temporaries
  const int64_t ticks0 = trace::ticks();  // release time in ticks (~10 ns a read, a clock read ~25): ns below
  Execution ex(graph, options, watches);
  ex.seed(roots, std::move(root_grads));
  while (true) {  // what a node received and sent dies with its iteration
    ReadyNode ready;
    if (!ex.next(ready)) break;
    variable_list out;
    if (ex.run_node(ready, out)) ex.deliver(*ready.node, std::move(out));
  }
  variable_list captured = ex.finish();
  for (const auto& w : watches) w->finish();
  int64_t t2 = now_ns();

  phase.reset();
  phase.emplace(&kRelease);
  ex.release();
  phase.reset();
  int64_t t3 = now_ns();
  const int64_t ticks3 = trace::ticks();
  // ticks to nanoseconds at the rate of this very interval (from t1 on, when ticks0 was read)
  const int64_t release_ns =
      ticks3 > ticks0 ? int64_t(double(ex.release_ticks()) * double(t3 - t1) / double(ticks3 - ticks0)) : 0;
  stats.nodes_executed = ex.nodes_executed();
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
  if (grad_tensors.empty())  // the loss
    gb::detail::notify([&](gb::detail::EngineObserver& o) { o.on_backward_roots(tensors); });
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
    run_backward(roots, std::move(grads), {}, BackwardOptions{keep, create_graph, 0, false, nullptr});
    return;
  }
  std::vector<Capture> leaf_caps, nonleaf_caps;
  for (const auto& c : captures) (c.node->is_accumulate_grad() ? leaf_caps : nonleaf_caps).push_back(c);
  // Run once, capturing at every input; leaves' AccumulateGrad nodes run normally because they are "needed".
  std::vector<Capture> all = nonleaf_caps;
  for (const auto& c : leaf_caps) all.push_back(c);
  run_backward(roots, std::move(grads), all, BackwardOptions{keep, create_graph, inputs.size(), true, &inputs});
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
  variable_list result =
      run_backward(roots, std::move(grads), captures,
                   BackwardOptions{retain_graph.value_or(create_graph), create_graph, inputs.size(), false, nullptr});
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
