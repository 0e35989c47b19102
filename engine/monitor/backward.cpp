// engine/monitor/backward.cpp — the backward pass: the loss it starts from, the graph it runs (captured at
// discovery, written when the step ends if due), and the first node that made a NaN/Inf gradient from finite ones.
//
// A node's incoming gradients are the outgoing gradients of the nodes before it (or the root gradient), which were
// scanned when those ran: a set of nodes that received a non-finite gradient is all it takes to tell a node that
// made one from a node that passed one on. Whether a finding reached a parameter's .grad (error) or was masked by
// a later node (where/ReLU backward: info) is known when the backward ends.
#include <algorithm>
#include <unordered_set>
#include <utility>
#include <vector>

#include "monitor/monitor.h"
#include "monitor/run.h"
#include "monitor/scan.h"

namespace gb::monitor::detail {

void on_backward_roots(const variable_list& roots) {
  if (!active() || roots.size() != 1) return;
  const Tensor& loss = roots[0];
  if (!loss.defined() || loss.numel() != 1 || !scannable(loss)) return;
  Busy busy;
  double v = loss.item<double>();  // read in place: no op, no allocation
  Run& r = run();
  bool nonfinite = !std::isfinite(v);
  {
    std::lock_guard lock(r.mu);
    r.backward_scaled = r.scaled_loss == loss.unsafe_impl() && r.loss_scale > 0;
    if (r.backward_scaled) v /= r.loss_scale;
    r.last_loss = v;
    r.have_loss = true;
    const bool was = r.loss_nonfinite;
    r.loss_nonfinite = nonfinite;
    if (nonfinite) r.tainted_step = current_step();
    if (!nonfinite || was) return;  // one row when the loss becomes non-finite, not one per step after
  }
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::nonfinite_loss;
  a.severity = trace::Severity::error;
  a.value = v;
  a.message = "the loss is " + std::string(std::isnan(v) ? "NaN" : "Inf") + " at step " +
              std::to_string(current_step()) +
              ": backward starts from it, so every gradient will be non-finite; the "
              "first non-finite anomaly of the run names the op that made it";
  report_nonfinite(std::move(a));
}

struct BackwardWatch::State {
  // graph_nodes.id of each node of this backward, sorted by node (one allocation per backward, not one per node)
  std::vector<std::pair<const autograd::Node*, int64_t>> ids;
  int64_t id_of(const autograd::Node* n) const {  // 0: not in this backward
    auto it =
        std::lower_bound(ids.begin(), ids.end(), n, [](const auto& e, const autograd::Node* k) { return e.first < k; });
    return it != ids.end() && it->first == n ? it->second : 0;
  }
  std::unordered_set<const autograd::Node*> received_bad;  // nodes sent a non-finite gradient
  bool scaled = false;
  // the first node that made a non-finite gradient
  const autograd::Node* maker = nullptr;
  std::string maker_name;
  int64_t nan = 0, inf = 0;
  bool reached_leaf = false;
  bool stopped = false;  // raise mode: finish() ran at the maker
  bool quiet = false;    // the forward of this step already went non-finite: no finding, the graph still
  bool raise = false;    // raise mode: every gradient is scanned here, leaves' too
  // gradients sent to a parameter's AccumulateGrad are scanned once, by grad_stats at the optimizer step: who sent
  // each one (and whether it had received a non-finite gradient), for a finding made there
  std::vector<std::tuple<const TensorImpl*, const autograd::Node*, bool>> leaf_producers;
};

BackwardWatch::BackwardWatch() {
  if (!active()) return;
  on_ = true;
  s_ = std::make_unique<State>();
  Run& r = run();
  std::lock_guard lock(r.mu);
  s_->scaled = r.backward_scaled;
  // The forward of this step already made a NaN/Inf (reported): what backward makes of it is a consequence.
  s_->quiet = r.tainted_step == current_step();
  s_->raise = r.cfg.mode == Mode::raise;
}

BackwardWatch::~BackwardWatch() = default;

void BackwardWatch::discovered(const std::vector<autograd::Node*>& order) {
  if (!on_) return;
  Run& r = run();
  std::lock_guard lock(r.mu);
  GraphCapture& g = r.graph;
  const int64_t first_id = r.next_node_id;
  s_->ids.reserve(order.size());
  s_->leaf_producers.reserve(order.size());
  for (const autograd::Node* n : order) {
    const int64_t id = r.next_node_id++;
    s_->ids.emplace_back(n, id);
    trace::GraphNodeRecord rec;
    rec.id = id;
    rec.seq = n->is_accumulate_grad() ? -1 : static_cast<int64_t>(n->sequence_nr());
    const char* literal = n->static_name();
    if (auto lit = literal ? r.node_literals.find(literal) : r.node_literals.end(); lit != r.node_literals.end()) {
      rec.name_id = lit->second;
    } else {
      std::string name = literal ? std::string(literal) : n->name();
      auto it = r.node_names.find(name);
      if (it == r.node_names.end()) it = r.node_names.emplace(name, trace::intern(name)).first;
      rec.name_id = it->second;
      if (literal) r.node_literals.emplace(literal, rec.name_id);
    }
    if (n->forward_span_id) rec.forward_span_id = static_cast<trace::Id>(n->forward_span_id);
    if (n->forward_module_id >= 0) rec.module_id = n->forward_module_id;
    rec.saved_bytes = n->saved_bytes();
    g.nodes.push_back(rec);
  }
  std::sort(s_->ids.begin(), s_->ids.end());
  for (size_t i = 0; i < order.size(); ++i)
    for (const auto& e : order[i]->next_edges())
      if (e.function)
        if (const int64_t dst = s_->id_of(e.function.get()))
          g.edges.push_back(
              trace::GraphEdgeRecord{0, first_id + static_cast<int64_t>(i), dst, static_cast<int64_t>(e.input_nr)});
}

void BackwardWatch::node_done(autograd::Node* node, const variable_list& sent) {
  if (!on_ || s_->quiet) return;
  if (node->is_accumulate_grad()) {
    if (s_->received_bad.count(node)) s_->reached_leaf = true;
    return;
  }
  const bool got_bad = s_->received_bad.count(node) > 0;
  Busy busy;
  int64_t nan = 0, inf = 0;
  const auto& edges = node->next_edges();
  for (size_t i = 0; i < sent.size() && i < edges.size(); ++i) {
    if (!sent[i].defined()) continue;
    const autograd::Node* dst = edges[i].function.get();
    if (dst && dst->is_accumulate_grad() && !s_->raise) {  // read once, by grad_stats at the optimizer step
      if (got_bad) s_->received_bad.insert(dst);
      s_->leaf_producers.emplace_back(static_cast<const autograd::AccumulateGrad*>(dst)->variable.unsafe_impl(), node,
                                      got_bad);
      continue;
    }
    if (all_finite(sent[i])) continue;
    const ScanResult s = scan(sent[i]);
    nan += s.nan;
    inf += s.inf;
    if (edges[i].function) s_->received_bad.insert(edges[i].function.get());
  }
  if (!nan && !inf) return;
  if (node->next_edges().empty()) s_->reached_leaf = true;  // a captured input (grad()) got it
  if (got_bad) return;
  if (s_->maker) return;
  s_->maker = node;
  s_->maker_name = node->name();
  s_->nan = nan;
  s_->inf = inf;
  Run& r = run();
  bool raise = false;
  {
    std::lock_guard lock(r.mu);
    raise = r.cfg.mode == Mode::raise && !s_->scaled;
  }
  if (raise) {  // stop at the first one: whether it would reach a parameter is not known yet
    s_->stopped = true;
    finish();  // throws
  }
}

std::string node_hint(const std::string& name) {
  if (name.find("Sqrt") != std::string::npos || name.find("Norm") != std::string::npos)
    return "the derivative of sqrt is infinite at 0 (e.g. the norm of an all-zero row): add an epsilon inside the "
           "sqrt, sqrt(x + 1e-12)";
  if (name.find("Div") != std::string::npos || name.find("Reciprocal") != std::string::npos)
    return "a denominator is zero: add an epsilon to it";
  if (name.find("Log") != std::string::npos) return "the derivative of log is infinite at 0: clamp its input";
  if (name.find("Pow") != std::string::npos) return "a power's derivative is infinite at 0: clamp its input";
  return "its backward divides by zero or overflows: check that function's backward formula";
}

void BackwardWatch::finish() {
  if (!on_) return;
  if (!s_->leaf_producers.empty()) {
    Run& r = run();
    std::lock_guard lock(r.mu);
    for (const auto& [param, node, got_bad] : s_->leaf_producers) {
      LeafProducer& lp = r.leaf_producers[param];
      const char* literal = node->static_name();
      lp.node = literal ? std::string(literal) : node->name();
      lp.forward_op = node->forward_op;
      lp.forward_span_id = node->forward_span_id;
      lp.module_id = node->forward_module_id;
      lp.graph_node_id = s_->id_of(node);
      lp.received_nonfinite = got_bad;
      lp.scaled = s_->scaled;
      lp.step = current_step();
    }
    s_->leaf_producers.clear();
  }
  if (!s_->maker) return;
  const autograd::Node* n = s_->maker;
  s_->maker = nullptr;  // reported once
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::nonfinite_backward;
  const bool error = (s_->reached_leaf || s_->stopped) && !s_->scaled;
  a.severity = error ? trace::Severity::error : trace::Severity::info;
  if (n->forward_span_id) a.span_id = static_cast<trace::Id>(n->forward_span_id);
  if (n->forward_module_id >= 0) a.module_id = n->forward_module_id;
  a.value = static_cast<double>(s_->nan + s_->inf);
  const std::string op = n->forward_op ? n->forward_op : "an untraced op";
  std::string where = s_->stopped        ? "backward stopped here"
                      : s_->reached_leaf ? "they reached the parameters' gradients"
                                         : "a later node masked them (no parameter gradient became non-finite)";
  if (s_->scaled) where += "; with a GradScaler the step is skipped and the scale lowered";
  a.message = s_->maker_name + " (the backward of " + op + " in " + module_label(n->forward_module_id) + ") made " +
              count_text(s_->nan, s_->inf) + " in its gradient from finite incoming gradients at step " +
              std::to_string(current_step()) + "; " + where + ". Likely " + node_hint(s_->maker_name);
  {
    Run& r = run();
    std::lock_guard lock(r.mu);
    r.backward_finding_step = current_step();
    if (const int64_t id = s_->id_of(n)) {
      // the anomaly names a node: this step's graph is written (up to 10 such steps per run)
      if (r.graph.forced || r.forced_graphs < 10) {
        r.graph.forced = true;
        a.node_id = id;
      }
    }
  }
  if (error) {
    report_nonfinite(std::move(a));
  } else {
    Run& r = run();
    std::lock_guard lock(r.mu);
    report(std::move(a));
  }
}

}  // namespace gb::monitor::detail
