// engine/monitor/depth.cpp — gradient flow through depth: how large each layer's gradient is next to its weight
// (|g| / |w|, from the norms grad_stats already has), from the last layer back to the first, in the order the last
// step's forward called the layers (forward.cpp records it). When, over a window of steps, a layer's median falls
// `depth_factor` (100) times below the last layer's — or rises that far above it — for sustained_steps in a row,
// one depth_gradient alarm (per direction, per run) names the first layer affected (the one nearest the output),
// how far the first layer is off, and what lies between that layer and the next: a saturating activation (sigmoid,
// tanh), or no residual connection or normalization anywhere between the layers.
//
// Judged while the run is still learning: once the loss is below converged_loss_frac of the highest it had, a
// profile that drifts with convergence (the first layer's gradient dwindling as the task is solved) is not a
// problem to report. Layers' weights only (2+ dimensions, named weight or ..._weight): embeddings (a sparse
// gradient by design) and other parameters (a learned positional table) are not layers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "monitor/monitor.h"
#include "monitor/run.h"

namespace gb::monitor::detail {

namespace {

std::string fmt(double v) { return number_text(v, 3); }

bool one_of(const char* op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (std::strcmp(op, n) == 0) return true;
  return false;
}
bool saturating(const char* op) {
  return one_of(op, {"sigmoid", "sigmoid_", "tanh", "tanh_", "hardtanh", "softsign", "logsigmoid", "hardsigmoid"});
}
bool normalizing(const char* op) {
  return one_of(op, {"layer_norm", "batch_norm", "group_norm", "instance_norm", "native_layer_norm", "rms_norm"});
}
bool residual(const char* op) { return one_of(op, {"add", "add_"}); }

struct Layer {
  ParamState* st;
  int64_t position;
  double median;  // of log(|g| / |w|) over the window
};

// What the forward runs between layer a (its last op) and layer b (its first op): "sigmoid in act3 (Sigmoid)".
struct Between {
  std::string text;
  bool saturates = false, normalizes = false, residual = false;
};
Between between(const Run& r, int64_t a_module, int64_t b_position) {
  Between out;
  int64_t from = -1;
  for (int64_t i = 0; i < b_position; ++i)
    if (r.forward[static_cast<size_t>(i)].module == a_module) from = i;
  std::set<std::string> seen;
  for (int64_t i = from + 1; from >= 0 && i < b_position; ++i) {
    const ForwardOp& f = r.forward[static_cast<size_t>(i)];
    if (!f.op) continue;
    out.saturates = out.saturates || saturating(f.op);
    out.normalizes = out.normalizes || normalizing(f.op);
    out.residual = out.residual || residual(f.op);
    const std::string what = std::string(f.op) + (f.module >= 0 ? " in " + module_label(f.module) : "");
    if (seen.insert(what).second) out.text += (out.text.empty() ? "" : ", ") + what;
  }
  if (out.text.empty()) out.text = "nothing traced";
  return out;
}

}  // namespace

void judge_depth(Run& r, const std::vector<Measured>& measured, int64_t step) {
  const Config& c = r.cfg;
  if (!(c.depth_factor > 1) || r.forward.empty()) return;
  static thread_local std::vector<Layer> layers;  // scratch: cleared, not freed (this runs at every step)
  layers.clear();
  for (const Measured& m : measured) {
    ParamState& st = *m.st;
    if (!st.weight || !m.scanned) continue;
    if (std::isfinite(m.norm) && m.norm > 0 && std::isfinite(m.param_norm) && m.param_norm > 0)
      st.log_depth.push(std::log(m.norm / m.param_norm));
    const int64_t at = forward_position(r, st.module_id);
    if (at < 0 || static_cast<int64_t>(st.log_depth.size()) < c.warmup) continue;
    layers.push_back({&st, at, st.log_depth.median()});
  }
  if (layers.size() < 3) return;
  // still learning: the loss not yet below converged_loss_frac x the highest median it had
  if (r.losses.size() && std::isfinite(r.loss_peak) &&
      r.losses.median() < r.loss_peak + std::log(std::max(c.converged_loss_frac, 1e-300)))
    return;
  std::stable_sort(layers.begin(), layers.end(), [](const Layer& a, const Layer& b) { return a.position < b.position; });
  const Layer& last = layers.back();
  const double gap = std::log(c.depth_factor);
  for (int dir = 0; dir < 2; ++dir) {  // 0: vanishing with depth, 1: exploding with depth
    if (r.depth_alarmed[dir]) continue;
    // the first layer affected: walking back from the output, the first one this far off the last layer
    int64_t first = -1, count = 0;
    for (int64_t i = static_cast<int64_t>(layers.size()) - 2; i >= 0; --i) {
      const double d = layers[static_cast<size_t>(i)].median - last.median;
      if (dir == 0 ? d <= -gap : d >= gap) {
        ++count;
        if (first < 0) first = i;
      }
    }
    // from the last layers to the first: the input side is off too (one odd layer in the middle is not depth)
    const double at_first = layers.front().median - last.median;
    const bool reaches_input = dir == 0 ? at_first <= -gap : at_first >= gap;
    r.depth_streak[dir] = first >= 0 && reaches_input ? r.depth_streak[dir] + 1 : 0;
    if (r.depth_streak[dir] < c.sustained_steps) continue;
    r.depth_alarmed[dir] = true;
    const Layer& hit = layers[static_cast<size_t>(first)];
    const Layer& next = layers[static_cast<size_t>(first) + 1];
    const Layer& input = layers.front();
    const double at_input = std::exp(input.median - last.median);
    const Between b = between(r, hit.st->module_id, next.position);
    bool any_norm = false, any_residual = false;
    for (size_t i = 0; i + 1 < layers.size(); ++i) {
      const Between x = between(r, layers[i].st->module_id, layers[i + 1].position);
      any_norm = any_norm || x.normalizes;
      any_residual = any_residual || x.residual;
    }
    std::string why;
    if (b.saturates)
      why = "a saturating activation: its derivative is at most 0.25 for sigmoid (1 for tanh) and near 0 where it "
            "saturates, so each one the gradient passes back through shrinks it";
    else
      why = dir == 0 ? "the gradient shrinks each time it passes back through a layer"
                     : "the gradient grows each time it passes back through a layer";
    std::string fix;
    if (!any_residual && !any_norm)
      fix = "no residual connection or normalization lies between the layers: add them (x + f(x); LayerNorm or "
            "BatchNorm)";
    else if (!any_norm)
      fix = "no normalization lies between the layers: add LayerNorm or BatchNorm";
    else
      fix = "check the initialization of these layers";
    if (b.saturates) fix += ", or use ReLU/GELU instead of the saturating activation (or Xavier initialization for it)";
    trace::AnomalyRecord a;
    a.kind = trace::AnomalyKind::depth_gradient;
    a.severity = trace::Severity::warning;
    a.param_id = hit.st->param_id;
    if (hit.st->module_id > 0) a.module_id = hit.st->module_id;
    a.value = at_input;
    const std::string dirs = dir == 0 ? "vanishes" : "explodes";
    a.message = "the gradient " + dirs + " with depth: relative to its weight it is " +
                fmt(dir == 0 ? 1 / at_input : at_input) + "x " + (dir == 0 ? "smaller" : "larger") + " at " +
                input.st->label + " (the first layer) than at " + last.st->label + " (the last), and " +
                fmt(c.depth_factor) + "x or more " + (dir == 0 ? "smaller" : "larger") + " in " +
                std::to_string(count) + " of " + std::to_string(layers.size()) + " layers from " + hit.st->label +
                " (the first layer affected) back, over the last " + std::to_string(hit.st->log_depth.size()) +
                " steps (step " + std::to_string(step) + "). Between " + hit.st->label + " and " + next.st->label +
                ": " + b.text + " — " + why + "; " + fix;
    report(std::move(a), AlarmFacts{.what = "the gradient " + dirs + " with depth from " + hit.st->label});
  }
}

}  // namespace gb::monitor::detail
