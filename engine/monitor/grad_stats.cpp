// engine/monitor/grad_stats.cpp — what happens around an optimizer step: one grad_stats row per parameter (one
// scan of its gradient, the parameter's norm before the update and the update's norm from note_update or the
// optimizer's fused pass), the per-parameter and depth rules over all of them (param_rules.cpp, depth.cpp), the
// .grad buffers marked as used (a later backward into an unchanged one missed a zero_grad), and the end of an
// automatic step.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/optim/optimizer.h"
#include "monitor/deferred.h"
#include "monitor/monitor.h"
#include "monitor/run.h"
#include "monitor/scan.h"

namespace gb::monitor::detail {

// params.dtype is the engine's ScalarType, value for value.
static_assert(static_cast<int>(ScalarType::Bool) == static_cast<int>(trace::DType::bool_) &&
              static_cast<int>(ScalarType::Int32) == static_cast<int>(trace::DType::int32) &&
              static_cast<int>(ScalarType::Int64) == static_cast<int>(trace::DType::int64) &&
              static_cast<int>(ScalarType::Half) == static_cast<int>(trace::DType::float16) &&
              static_cast<int>(ScalarType::BFloat16) == static_cast<int>(trace::DType::bfloat16) &&
              static_cast<int>(ScalarType::Float) == static_cast<int>(trace::DType::float32) &&
              static_cast<int>(ScalarType::Double) == static_cast<int>(trace::DType::float64) &&
              static_cast<int>(ScalarType::UInt8) == static_cast<int>(trace::DType::uint8) &&
              static_cast<int>(ScalarType::Int8) == static_cast<int>(trace::DType::int8) &&
              static_cast<int>(ScalarType::Int16) == static_cast<int>(trace::DType::int16));

namespace {

struct UpdateNote {
  const TensorImpl* param;
  double norm, param_norm_before;
  ScanResult grad;  // scanned: the gradient's statistics, measured by the optimizer's fused pass
  // a parameter on a device (deferred.h): the scans of the update and of the parameter before it
  int64_t update_ticket = -1, before_ticket = -1;
};
using Updates = std::vector<UpdateNote>;
thread_local Updates* t_updates = nullptr;  // the open step's notes
thread_local bool t_due = false;            // the open step measures its gradients (every step, when on)

std::string fmt(double v) { return number_text(v, 3); }

ParamState& param_state(Run& r, const Tensor& p) {
  ParamState& st = r.params[p.unsafe_impl()];
  if (st.param_id == 0) {
    const auto window = static_cast<size_t>(std::max<int64_t>(r.cfg.window, 3));
    st.log_norms.set_capacity(window);
    st.log_shares.set_capacity(window);
    st.log_depth.set_capacity(window);
    st.dims = p.dim();
    if (!param_name(p.unsafe_impl(), st.param_id, st.module_id, st.label)) {
      // A tensor no traced module owns (or whose module never ran): a params row of its own under module 0,
      // "(no module)".
      static std::once_flag once;  // modules rows are kept for every later session too
      std::call_once(once, [] { trace::emit(trace::ModuleRecord{0, "(no module)", "", std::nullopt}); });
      static std::atomic<int64_t> next{1};
      st.param_id = -(next++);  // negative: never collides with the modules' params
      st.module_id = 0;
      // a module that never ran (a branch the forward skips) is still named by its root's parameter names
      if (!param_label(p.unsafe_impl(), st.label)) st.label = "parameter " + std::to_string(-st.param_id);
      std::ostringstream shape;
      shape << p.sizes();
      trace::ParamRecord pr;
      pr.id = st.param_id;
      pr.module_id = 0;
      pr.name = st.label;
      pr.shape = shape.str();
      pr.numel = p.numel();
      pr.dtype = static_cast<trace::DType>(static_cast<int>(p.scalar_type()));  // the same order (asserted above)
      trace::emit(pr);
    }
    const std::string type = module_type(st.module_id);
    st.embedding = type.find("Embedding") != std::string::npos;
    const std::string& l = st.label;
    const bool named_weight = l == "weight" || (l.size() >= 6 && l.compare(l.size() - 6, 6, "weight") == 0 &&
                                                (l.size() == 6 || l[l.size() - 7] == '.' || l[l.size() - 7] == '_'));
    st.weight = st.dims >= 2 && named_weight && !st.embedding;
  }
  return st;
}


// A parameter's gradient holds NaN/Inf and nothing earlier in this step explains it: the node that sent it (its
// gradient was read here, not during backward) made it, if what that node received was finite.
void leaf_finding(Run& r, const Tensor& p, ParamState& st, const ScanResult& gs, int64_t step) {
  if (r.tainted_step == step || r.backward_finding_step == step) return;
  auto it = r.leaf_producers.find(p.unsafe_impl());
  if (it == r.leaf_producers.end() || it->second.received_nonfinite || it->second.step != step) return;
  const LeafProducer& lp = it->second;
  r.backward_finding_step = step;
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::nonfinite_backward;
  a.severity = lp.scaled ? trace::Severity::info : trace::Severity::error;
  if (lp.forward_span_id) a.span_id = static_cast<trace::Id>(lp.forward_span_id);
  if (lp.module_id >= 0) a.module_id = lp.module_id;
  a.param_id = st.param_id;
  if (lp.graph_node_id && (r.graph.forced || r.forced_graphs < 10)) {
    r.graph.forced = true;  // this step's graph is written: the row names one of its nodes
    a.node_id = lp.graph_node_id;
  }
  a.value = static_cast<double>(gs.nonfinite());
  a.message = lp.node + " (the backward of " + (lp.forward_op ? lp.forward_op : "an untraced op") + " in " +
              module_label(lp.module_id) + ") made " + count_text(gs.nan, gs.inf) + " in the gradient of " + st.label +
              " from finite incoming gradients at step " + std::to_string(step) +
              (lp.scaled ? "; with a GradScaler the step is skipped and the scale lowered" : "") + ". Likely " +
              node_hint(lp.node);
  report(std::move(a));
}

}  // namespace

void on_reduced_nonfinite(const Tensor& param, int64_t bucket) {
  if (!active()) return;
  trace::AnomalyRecord a;
  {
    Run& r = run();
    std::lock_guard<std::mutex> lock(r.mu);
    const int64_t step = current_step();
    if (auto it = r.leaf_producers.find(param.unsafe_impl()); it != r.leaf_producers.end())
      it->second.received_nonfinite = true;  // not made by this rank's backward node
    if (r.tainted_step == step || r.backward_finding_step == step) return;  // this rank's own finding explains it
    r.backward_finding_step = step;
    int64_t param_id = 0, module_id = -1;
    std::string label = "a parameter";
    if (param_name(param.unsafe_impl(), param_id, module_id, label)) {
      a.param_id = param_id;
      if (module_id >= 0) a.module_id = module_id;
    }
    a.kind = trace::AnomalyKind::nonfinite_backward;
    a.severity = trace::Severity::error;
    a.message = "the gradient of " + label + " came back from DistributedDataParallel's all-reduce (bucket " +
                std::to_string(bucket) + ") holding NaN/Inf at step " + std::to_string(step) +
                " while this rank's own was finite: another rank's gradient was non-finite. Merge the ranks' "
                "traces (glassbox merge run.rank*.db -o run.db): glassbox report names the rank where it began";
  }
  report_nonfinite(std::move(a));
}

void note_update(const Tensor& param, double coef_p, const Tensor& a, const Tensor& b, double coef_a) {
  if (!t_updates || !t_due) return;
  Busy busy;
  if (deferrable(param) && a.defined() && a.numel() == param.numel()) {
    // on a device: the update and the parameter after it made by the device's kernels, and scanned there
    NoGradGuard no_grad;
    const Tensor w = (b.defined() ? a / b : a) * coef_a;
    const Tensor u = coef_p == 0 ? w : param * coef_p + w;
    UpdateNote note{param.unsafe_impl(), std::nan(""), std::nan(""), {}};
    note.update_ticket = defer_scan(u);
    // the parameter before the update: p holds it, less what cp * p already did (AdamW's decay); scanned now, in
    // stream order before the update's kernels
    note.before_ticket = defer_scan(coef_p == 0 ? param : param * (1 - coef_p));
    t_updates->push_back(note);
    return;
  }
  const UpdateSums u = update_sums(param, coef_p, a, b, coef_a);
  t_updates->push_back({param.unsafe_impl(), u.norm(), u.param_norm_before(), {}});
}

bool step_stats_due() { return t_updates && t_due; }

void note_step_sums(const Tensor& param, const ScanResult& grad, double update_norm, double param_norm_before) {
  if (!t_updates || !t_due) return;
  t_updates->push_back({param.unsafe_impl(), update_norm, param_norm_before, grad});
}

void on_accumulate(const Tensor& param) {
  if (!active()) return;
  auto& m = param.unsafe_impl()->meta();
  if (!m.grad.defined() || m.grad_used_impl.lock() != m.grad.impl_ptr() || m.grad._version() != m.grad_used_version)
    return;
  const int64_t used_at = m.grad_used_step;
  m.grad_used_impl.reset();  // one finding per buffer
  Run& r = run();
  std::lock_guard lock(r.mu);
  const int64_t step = current_step();
  if (r.zero_grad_step == step) return;  // one row per step
  r.zero_grad_step = step;
  ParamState& st = param_state(r, param);
  trace::AnomalyRecord a = param_anomaly(
      trace::AnomalyKind::missing_zero_grad, st, static_cast<double>(used_at),
      "missing zero_grad: backward at step " + std::to_string(step) + " added into the .grad of " + st.label +
          " that the optimizer step of step " + std::to_string(used_at) +
          " already used, so gradients pile up across steps; call optimizer.zero_grad() (or model->zero_grad()) "
          "before backward (accumulating over several backwards before one step is fine)");
  report(std::move(a));
}

namespace {

// The statistics, detectors and marks of one finished (or skipped) optimizer step. `updates` holds the update
// norms noted during the step (none when it was skipped).
void after_step(const optim::Optimizer& opt, const Updates& updates, bool skipped) {
  Busy busy;
  Run& r = run();
  std::unique_lock lock(r.mu);
  if (trace::detail::g_step_scopes.load(std::memory_order_relaxed) == 0 && !r.auto_started) start_auto_steps_locked();
  const int64_t step = current_step();
  if (r.step_grads_of != step) {
    r.step_grads.clear();
    r.step_grad_sumsq = 0;
    r.step_grad_measured = false;
    r.step_grad_finite = true;
    r.step_grads_of = step;
  }
  // Gradients (and parameters without an update note) on a device: scanned together, then everything deferred
  // this step is judged in order, and read back once.
  std::unordered_map<const TensorImpl*, std::pair<int64_t, int64_t>> tickets;  // param -> (grad, param) scans
  std::vector<Tensor> grads, params;
  // a skipped step (GradScaler) writes its rows too, as on the cpu
  for (const auto& group : opt.param_groups())
      for (const Tensor& p : group.params())
        if (p.grad().defined() && deferrable(p.grad())) {
          bool noted = false;
          for (const auto& u : updates) noted = noted || (u.param == p.unsafe_impl() && u.before_ticket >= 0);
          grads.push_back(p.grad());
          params.push_back(noted ? Tensor() : p);
        }
  lock.unlock();  // the scans launch ops (the monitor's own, under Busy)
  const std::vector<int64_t> g = defer_scans(grads), q = defer_scans(params);
  for (size_t i = 0; i < grads.size(); ++i) tickets[grads[i].unsafe_impl()] = {g[i], q[i]};
  judge_pending();  // nothing to do when nothing was deferred
  lock.lock();
  double lr = 0;
  // this thread's scratch (cleared, not freed: this runs at every step; the lock is let go during the scans)
  static thread_local std::vector<double> lrs;
  static thread_local std::vector<Measured> measured;
  lrs.clear();
  measured.clear();
  for (const auto& group : opt.param_groups()) {
    const double group_lr = group.has_options() ? group.options().get_lr() : 0;
    if (lrs.empty()) lr = group_lr;
    lrs.push_back(group_lr);
    for (const Tensor& p : group.params()) {
      ParamState& st = param_state(r, p);
      Measured m;
      m.st = &st;
      m.group = lrs.size() - 1;
      m.requires_grad = p.requires_grad();
      const Tensor& g = p.grad();
      m.has_grad = g.defined();
      if (!g.defined()) {  // no gradient this step: only the no_gradient rule counts it
        measured.push_back(m);
        continue;
      }
      if (!skipped) {  // this buffer has been used: a backward into it unchanged missed a zero_grad
        auto& meta = p.unsafe_impl()->meta();
        meta.grad_used_impl = g.impl_ptr();
        meta.grad_used_version = g._version();
        meta.grad_used_step = step;
      }
      const UpdateNote* note = nullptr;
      for (const auto& u : updates)
        if (u.param == p.unsafe_impl()) note = &u;
      lock.unlock();  // the scans run without the lock
      const auto ticket = tickets.find(g.unsafe_impl());
      const bool on_device = ticket != tickets.end();
      const ScanResult gs = note && note->grad.scanned ? note->grad
                            : on_device                 ? deferred_result(ticket->second.first)
                                                        : scan(g);
      // the parameter's norm before the update came with the update's pass; a step without an update (skipped,
      // or an optimizer that notes none) reads the parameter as it is
      double param_norm = 0;
      if (note && note->before_ticket >= 0)
        param_norm = deferred_result(note->before_ticket).norm();
      else if (note && std::isfinite(note->param_norm_before))
        param_norm = note->param_norm_before;
      else
        param_norm = on_device ? deferred_result(ticket->second.second).norm() : scan(p).norm();
      lock.lock();
      if (!gs.scanned) {
        measured.push_back(m);
        continue;
      }
      trace::GradStatRecord rec;
      rec.step = step;
      rec.param_id = st.param_id;
      rec.norm = gs.norm();
      rec.max_abs = gs.nan ? std::nan("") : gs.max_abs;
      rec.nan_count = gs.nan;
      rec.inf_count = gs.inf;
      rec.zero_frac = gs.n ? static_cast<double>(gs.zeros) / static_cast<double>(gs.n) : 0;
      rec.param_norm = param_norm;
      if (note) rec.update_norm = note->update_ticket >= 0 ? deferred_result(note->update_ticket).norm() : note->norm;
      r.step_grads.push_back(rec);  // written at the step's end when due (grad_stats_due)
      r.step_grad_measured = true;
      if (gs.nonfinite() || !std::isfinite(rec.norm))
        r.step_grad_finite = false;
      else
        r.step_grad_sumsq += rec.norm * rec.norm;
      if (gs.nonfinite()) leaf_finding(r, p, st, gs, step);
      ++st.seen;
      m.scanned = true;
      m.norm = gs.nonfinite() ? std::nan("") : rec.norm;
      m.param_norm = param_norm;
      m.update = rec.update_norm;
      m.zeros = gs.zeros;
      m.n = gs.n;
      measured.push_back(m);
    }
  }
  take_forward_locked(r);  // the order of the layers in this step's forward (the depth rule and the links)
  judge_loss(r, step);     // the batch first: a spike of the loss explains the gradients it made
  judge_params(r, measured, lrs, step);
  judge_depth(r, measured, step);
  lock.unlock();
  end_step(lr, skipped, nullptr);
}

}  // namespace

OptimizerStep::OptimizerStep(const optim::Optimizer& opt) {
  if (!active() || t_updates) return;  // a step inside a step (a closure) is the outer one's
  opt_ = &opt;
  uncaught_ = std::uncaught_exceptions();
  t_updates = new Updates();
  t_due = true;
}

OptimizerStep::~OptimizerStep() {
  if (!opt_) return;
  std::unique_ptr<Updates> updates(t_updates);
  t_updates = nullptr;
  if (std::uncaught_exceptions() > uncaught_) return;  // the step failed: nothing happened
  try {
    after_step(*opt_, *updates, false);
  } catch (const AnomalyError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox: warning: the training monitor failed after an optimizer step: %s\n", e.what());
  }
}

void on_skipped_step(const optim::Optimizer& opt, double scale) {
  if (!active()) return;
  judge_pending();  // what the step's device checks found comes first, as it happened first
  {
    Run& r = run();
    std::lock_guard lock(r.mu);
    r.step_scale = scale;
    trace::AnomalyRecord a;
    a.kind = trace::AnomalyKind::amp_skipped_step;
    a.severity = trace::Severity::info;
    a.value = scale;
    a.message = "the GradScaler skipped the optimizer step at step " + std::to_string(current_step()) +
                ": gradients held Inf/NaN at loss scale " + fmt(scale) +
                "; the scale is lowered and training goes on (a few at the start are normal)";
    report(std::move(a));
  }
  after_step(opt, {}, true);
}

}  // namespace gb::monitor::detail
