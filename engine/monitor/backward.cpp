// engine/monitor/backward.cpp — the backward pass: the loss it starts from, the graph it runs (captured at
// discovery, written when the step ends if due), and the first node that made a NaN/Inf gradient from finite ones.
//
// A node's incoming gradients are the outgoing gradients of the nodes before it (or the root gradient), which were
// scanned when those ran: a set of nodes that received a non-finite gradient is all it takes to tell a node that
// made one from a node that passed one on. Whether a finding reached a parameter's .grad (error) or was masked by
// a later node (where/ReLU backward: info) is known when the backward ends.
#include <algorithm>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "monitor/deferred.h"
#include "monitor/monitor.h"
#include "monitor/run.h"
#include "monitor/scan.h"

namespace gb::monitor::detail {

namespace {

// The loss a backward starts from: its value for the steps row and the loss detectors, and a non-finite loss.
void judge_loss_value(double v, double scale, int64_t step) {
  Run& r = run();
  bool nonfinite = !std::isfinite(v);
  {
    std::lock_guard lock(r.mu);
    if (scale > 0) v /= scale;
    r.last_loss = v;
    r.have_loss = true;
    const bool was = r.loss_nonfinite;
    r.loss_nonfinite = nonfinite;
    if (nonfinite) r.tainted_step = step;
    if (!nonfinite || was) return;  // one row when the loss becomes non-finite, not one per step after
  }
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::nonfinite_loss;
  a.severity = trace::Severity::error;
  if (step >= 0) a.step = step;
  a.value = v;
  a.message = "the loss is " + std::string(std::isnan(v) ? "NaN" : "Inf") + " at step " + std::to_string(step) +
              ": backward starts from it, so every gradient will be non-finite; the "
              "first non-finite anomaly of the run names the op that made it";
  report_nonfinite(std::move(a));
}

// A loss on a device: its value arrives with the step's scans (ScanResult::first).
struct LossCheck final : PendingCheck {
  int64_t ticket = -1, step = -1;
  double scale = 0;
  void judge() override { judge_loss_value(deferred_result(ticket).first, scale, step); }
};

}  // namespace

void on_backward_roots(const variable_list& roots) {
  if (!active() || roots.size() != 1) return;
  const Tensor& loss = roots[0];
  if (!loss.defined() || loss.numel() != 1) return;
  const bool deferred = deferrable(loss);
  if (!deferred && !scannable(loss)) return;
  Busy busy;
  Run& r = run();
  double scale = 0;
  {
    std::lock_guard lock(r.mu);
    r.backward_scaled = r.scaled_loss == loss.unsafe_impl() && r.loss_scale > 0;
    if (r.backward_scaled) scale = r.loss_scale;
  }
  if (deferred) {
    auto check = std::make_unique<LossCheck>();
    check->ticket = defer_scan(loss);
    check->scale = scale;
    check->step = current_step();
    defer_check(std::move(check));
    return;
  }
  judge_loss_value(loss.item<double>(), scale, current_step());  // read in place: no op, no allocation
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
  // Gradients on a device (deferred.h): each node that ran, kept alive with its edges, and its gradients' scans
  // (-2: not sent, -3: not scanned here), judged in order when the step's scans are read back.
  bool mode_known = false, deferred = false;
  int64_t step = -1;
  struct NodeEvent {
    std::shared_ptr<autograd::Node> node;
    std::vector<int64_t> tickets;
  };
  std::vector<NodeEvent> events;
};

namespace {

void finish_state(BackwardWatch::State& s);

// The check of one node that ran: a non-finite gradient it sent, made from finite ones (the first of this
// backward), or passed on. defined(i): whether it sent gradient i; grad_scan(i): its scan, asked only for the
// gradients checked here (those for a parameter's AccumulateGrad wait for grad_stats, outside raise mode).
template <class Defined, class GradScan>
void judge_node(BackwardWatch::State& s, autograd::Node* node, size_t n_sent, const Defined& defined,
                const GradScan& grad_scan) {
  if (s.quiet) return;
  if (node->is_accumulate_grad()) {
    if (s.received_bad.count(node)) s.reached_leaf = true;
    return;
  }
  const bool got_bad = s.received_bad.count(node) > 0;
  int64_t nan = 0, inf = 0;
  const auto& edges = node->next_edges();
  for (size_t i = 0; i < n_sent && i < edges.size(); ++i) {
    if (!defined(i)) continue;
    const autograd::Node* dst = edges[i].function.get();
    if (dst && dst->is_accumulate_grad() && !s.raise) {  // read once, by grad_stats at the optimizer step
      if (got_bad) s.received_bad.insert(dst);
      s.leaf_producers.emplace_back(static_cast<const autograd::AccumulateGrad*>(dst)->variable.unsafe_impl(), node,
                                    got_bad);
      continue;
    }
    const ScanResult r = grad_scan(i);
    if (!r.nonfinite()) continue;
    nan += r.nan;
    inf += r.inf;
    if (edges[i].function) s.received_bad.insert(edges[i].function.get());
  }
  if (!nan && !inf) return;
  if (node->next_edges().empty()) s.reached_leaf = true;  // a captured input (grad()) got it
  if (got_bad) return;
  if (s.maker) return;
  s.maker = node;
  s.maker_name = node->name();
  s.nan = nan;
  s.inf = inf;
  Run& r = run();
  bool raise = false;
  {
    std::lock_guard lock(r.mu);
    raise = r.cfg.mode == Mode::raise && !s.scaled;
  }
  if (raise) {  // stop at the first one: whether it would reach a parameter is not known yet
    s.stopped = true;
    finish_state(s);  // throws
  }
}

// A backward whose gradients were on a device, judged with the step's scans.
struct BackwardCheck final : PendingCheck {
  std::unique_ptr<BackwardWatch::State> s;
  void judge() override {
    {
      Run& r = run();
      std::lock_guard lock(r.mu);
      s->quiet = r.tainted_step == s->step;  // the forward's findings were judged before this
    }
    for (const auto& e : s->events)
      judge_node(
          *s, e.node.get(), e.tickets.size(), [&](size_t i) { return e.tickets[i] != -2; },
          [&](size_t i) { return deferred_result(e.tickets[i]); });
    finish_state(*s);
  }
};

}  // namespace

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
  s_->step = current_step();
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
  if (!on_) return;
  State& st = *s_;
  if (!st.mode_known)  // the first gradient sent decides: on a device (or GLASSBOX_MONITOR_DEFER), deferred
    for (const Tensor& g : sent)
      if (g.defined()) {
        st.deferred = deferrable(g);
        st.mode_known = true;
        break;
      }
  if (st.deferred) {
    Busy busy;
    State::NodeEvent e{node->shared_from_this(), {}};
    if (!node->is_accumulate_grad()) {
      const auto& edges = node->next_edges();
      e.tickets.resize(std::min(sent.size(), edges.size()), -2);
      for (size_t i = 0; i < e.tickets.size(); ++i) {
        if (!sent[i].defined()) continue;
        const autograd::Node* dst = edges[i].function.get();
        e.tickets[i] = dst && dst->is_accumulate_grad() && !st.raise ? -3 : defer_scan(sent[i]);
      }
    }
    st.events.push_back(std::move(e));
    if (st.raise) {  // stop at the node: what the forward found first, then this node, now (a wait per node)
      judge_pending();
      const State::NodeEvent& last = st.events.back();
      judge_node(
          st, node, last.tickets.size(), [&](size_t i) { return last.tickets[i] != -2; },
          [&](size_t i) { return deferred_result(last.tickets[i]); });
    }
    return;
  }
  if (st.quiet) return;
  Busy busy;
  judge_node(
      st, node, sent.size(), [&](size_t i) { return sent[i].defined(); },
      [&](size_t i) { return all_finite(sent[i]) ? ScanResult{} : scan(sent[i]); });
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
  if (s_->deferred && !s_->raise) {  // judged with the step's scans
    auto check = std::make_unique<BackwardCheck>();
    check->s = std::move(s_);
    on_ = false;
    defer_check(std::move(check));
    return;
  }
  finish_state(*s_);
}

namespace {
void finish_state(BackwardWatch::State& st) {
  if (!st.leaf_producers.empty()) {
    Run& r = run();
    std::lock_guard lock(r.mu);
    for (const auto& [param, node, got_bad] : st.leaf_producers) {
      LeafProducer& lp = r.leaf_producers[param];
      const char* literal = node->static_name();
      lp.node = literal ? std::string(literal) : node->name();
      lp.forward_op = node->forward_op;
      lp.forward_span_id = node->forward_span_id;
      lp.module_id = node->forward_module_id;
      lp.graph_node_id = st.id_of(node);
      lp.received_nonfinite = got_bad;
      lp.scaled = st.scaled;
      lp.step = st.step;
    }
    st.leaf_producers.clear();
  }
  if (!st.maker) return;
  const autograd::Node* n = st.maker;
  st.maker = nullptr;  // reported once
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::nonfinite_backward;
  const bool error = (st.reached_leaf || st.stopped) && !st.scaled;
  a.severity = error ? trace::Severity::error : trace::Severity::info;
  if (st.step >= 0) a.step = st.step;
  if (n->forward_span_id) a.span_id = static_cast<trace::Id>(n->forward_span_id);
  if (n->forward_module_id >= 0) a.module_id = n->forward_module_id;
  a.value = static_cast<double>(st.nan + st.inf);
  const std::string op = n->forward_op ? n->forward_op : "an untraced op";
  std::string where = st.stopped        ? "backward stopped here"
                      : st.reached_leaf ? "they reached the parameters' gradients"
                                         : "a later node masked them (no parameter gradient became non-finite)";
  if (st.scaled) where += "; with a GradScaler the step is skipped and the scale lowered";
  a.message = st.maker_name + " (the backward of " + op + " in " + module_label(n->forward_module_id) + ") made " +
              count_text(st.nan, st.inf) + " in its gradient from finite incoming gradients at step " +
              std::to_string(st.step) + "; " + where + ". Likely " + node_hint(st.maker_name);
  {
    Run& r = run();
    std::lock_guard lock(r.mu);
    r.backward_finding_step = st.step;
    if (const int64_t id = st.id_of(n)) {
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

}  // namespace

}  // namespace gb::monitor::detail
