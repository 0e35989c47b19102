// engine/monitor/causes.cpp — which earlier alarm explains a new one (anomalies.cause_id and cause), from evidence
// the run has: the order of the layers in the last step's forward (forward.cpp records it), the steps between the
// two alarms, and the parameter or module they name. Each rule states its evidence in one line; an alarm no rule
// links stays a root. The links:
//   dead_relu                 <- an outsized update (or an exploding gradient) of the layer that feeds the ReLU
//   vanishing_norm, no_gradient (exactly zero)
//                             <- a dead ReLU the forward calls after the layer (no gradient passes back through
//                                it), or right before it (the layer's input is all zeros)
//   exploding_norm            <- a loss spike at the same step (a loss that large makes every gradient large)
//   update_ratio (outsized)   <- another outsized update of the same step and group (one lr behind both), or an
//                                earlier one of the layer after it (its blown-up weights send huge gradients back)
//   exploding_norm, update_ratio (sustained)
//                             <- an outsized update of the same layer or of the layer the forward calls just before
//   nonfinite_loss/backward   <- a non-finite forward at the same step
//   nonfinite_forward/backward/loss
//                             <- a non-finite step before it (its update made the parameters NaN), else an
//                                outsized update or an exploding gradient before it (parameters blown up)
//   loss_spike                <- an outsized update within `window` steps before it
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_set>

#include "monitor/monitor.h"
#include "monitor/run.h"

namespace gb::monitor::detail {

namespace {

// The modules that own a parameter an optimizer stepped: the layers.
std::unordered_set<int64_t> layer_modules(const Run& r) {
  std::unordered_set<int64_t> out;
  for (const auto& [impl, st] : r.params)
    if (st.module_id > 0) out.insert(st.module_id);
  return out;
}

std::string steps_text(int64_t n) { return std::to_string(n) + (n == 1 ? " step" : " steps"); }

std::string short_name(int64_t module) {
  const std::string p = module_path(module);
  return p.empty() ? module_label(module) : p;
}

// The latest alarm of one of `kinds` at or before `step` that `pick` accepts.
template <class Pick>
const Alarm* latest(const Run& r, std::initializer_list<trace::AnomalyKind> kinds, int64_t step, const Pick& pick) {
  for (auto it = r.alarms.rbegin(); it != r.alarms.rend(); ++it) {
    if (it->step > step) continue;
    if (std::find(kinds.begin(), kinds.end(), it->kind) == kinds.end()) continue;
    if (pick(*it)) return &*it;
  }
  return nullptr;
}

void link(trace::AnomalyRecord& a, const Alarm& cause, std::string evidence) {
  a.cause_id = cause.id;
  a.cause = std::move(evidence);
}

std::string update_text(const Alarm& u) {
  return u.what + " (anomaly " + std::to_string(u.id) + ", step " + std::to_string(u.step) + ")";
}

}  // namespace

int64_t forward_position(const Run& r, int64_t module) {
  for (size_t i = 0; i < r.forward.size(); ++i)
    if (r.forward[i].module == module) return static_cast<int64_t>(i);
  return -1;
}

int64_t relu_position(const Run& r, int64_t module, const char* op) {
  for (size_t i = 0; i < r.forward.size(); ++i)
    if (r.forward[i].module == module && r.forward[i].op && op && std::strcmp(r.forward[i].op, op) == 0)
      return static_cast<int64_t>(i);
  return forward_position(r, module);
}

int64_t layer_after(const Run& r, int64_t position) {
  if (position < 0) return -1;
  const auto layers = layer_modules(r);
  const int64_t self = r.forward[static_cast<size_t>(position)].module;
  for (size_t i = static_cast<size_t>(position) + 1; i < r.forward.size(); ++i)
    if (r.forward[i].module != self && layers.count(r.forward[i].module)) return r.forward[i].module;
  return -1;
}

int64_t layer_before(const Run& r, int64_t position) {
  if (position < 0) return -1;
  const auto layers = layer_modules(r);
  for (int64_t i = position - 1; i >= 0; --i)
    if (layers.count(r.forward[static_cast<size_t>(i)].module)) return r.forward[static_cast<size_t>(i)].module;
  return -1;
}

void link_cause(Run& r, trace::AnomalyRecord& a, const AlarmFacts& facts) {
  if (a.cause_id) return;
  using K = trace::AnomalyKind;
  const int64_t step = a.step.value_or(current_step());
  const int64_t module = a.module_id.value_or(-1);
  switch (a.kind) {
    case K::dead_relu: {
      const int64_t feeder = layer_before(r, facts.position);
      if (feeder < 0) return;
      const Alarm* u = latest(r, {K::update_ratio}, step, [&](const Alarm& x) { return x.once && x.module == feeder; });
      if (!u)
        u = latest(r, {K::update_ratio, K::exploding_norm}, step, [&](const Alarm& x) { return x.module == feeder; });
      if (u)
        link(a, *u,
             short_name(feeder) + " feeds this ReLU (the forward calls it just before); " + update_text(*u) + ", " +
                 steps_text(step - u->step) + " before the units died: an outsized update pushed the layer's "
                 "outputs below zero for every sample");
      return;
    }
    case K::vanishing_norm:
    case K::no_gradient: {
      if (a.kind == K::no_gradient && !facts.zero) return;  // never received one: the graph, not a ReLU
      const int64_t at = forward_position(r, module);
      if (at < 0) return;
      auto dead = [](const Alarm& d) {
        return "the dead ReLU of anomaly " + std::to_string(d.id) + " (" + d.what + ", step " + std::to_string(d.step) +
               ")";
      };
      if (const Alarm* d = latest(r, {K::dead_relu}, step, [&](const Alarm& x) { return x.position > at; })) {
        link(a, *d,
             dead(*d) + " comes after " + short_name(module) +
                 " in the forward: no gradient passes back through dead units to the layers before them");
        return;
      }
      // the layer right after a dead ReLU: its input is all zeros, and a weight's gradient is input x gradient
      if (const Alarm* d = latest(r, {K::dead_relu}, step, [&](const Alarm& x) {
            return x.position >= 0 && x.position < at && layer_after(r, x.position) == module;
          }))
        link(a, *d,
             short_name(module) + " takes its input from " + dead(*d) +
                 ": a weight's gradient is its input times the gradient coming back, and that input is all zeros");
      return;
    }
    case K::exploding_norm:
    case K::update_ratio: {
      if (a.kind == K::update_ratio && facts.once) {
        // an outsized update is a root, but one optimizer step's outsized updates of a group share their cause
        if (const Alarm* u = latest(r, {K::update_ratio}, step, [&](const Alarm& x) {
              return x.once && x.step == step && x.group == facts.group;
            })) {
          link(a, *u,
               "the same optimizer step and parameter group as " + update_text(*u) +
                   ": that group's learning rate is behind both");
          return;
        }
        // the layer after this one had its weights blown up: the gradients it sends back are that large too
        const int64_t at = forward_position(r, module);
        const int64_t after = at >= 0 ? layer_after(r, at) : -1;
        if (const Alarm* u = latest(r, {K::update_ratio}, step, [&](const Alarm& x) {
              return x.once && after >= 0 && x.module == after && x.step < step;
            }))
          link(a, *u,
               short_name(after) + " comes after " + short_name(module) + " in the forward and " + update_text(*u) +
                   ": the gradients it sends back through weights that large are that large too");
        return;
      }
      if (a.kind == K::exploding_norm)
        if (const Alarm* l = latest(r, {K::loss_spike}, step, [&](const Alarm& x) { return x.step == step; })) {
          link(a, *l,
               "the same step's loss spiked (anomaly " + std::to_string(l->id) +
                   "): a loss that large makes large gradients in every layer");
          return;
        }
      const int64_t at = forward_position(r, module);
      const int64_t before = at >= 0 ? layer_before(r, at) : -1;
      if (const Alarm* u = latest(r, {K::update_ratio}, step, [&](const Alarm& x) {
            return x.once && (x.module == module || (before >= 0 && x.module == before)) && x.id;
          }))
        link(a, *u,
             (u->module == module ? "the same layer: " : short_name(u->module) + " feeds " + short_name(module) +
                                                              " (the forward calls it just before): ") +
                 update_text(*u) + ", " + steps_text(step - u->step) + " before");
      return;
    }
    case K::nonfinite_forward:
    case K::nonfinite_backward:
    case K::nonfinite_loss: {
      // this step's forward already made one: the loss and the gradients inherit it
      if (a.kind != K::nonfinite_forward)
        if (const Alarm* f = latest(r, {K::nonfinite_forward}, step, [&](const Alarm& x) { return x.step == step; })) {
          link(a, *f,
               "the same step's forward made non-finite values first (anomaly " + std::to_string(f->id) +
                   "): everything computed from them is non-finite too");
          return;
        }
      // an earlier step went non-finite: its gradients went into the update, and the parameters hold NaN/Inf since
      if (const Alarm* n = latest(r, {K::nonfinite_forward, K::nonfinite_backward, K::nonfinite_loss}, step,
                                  [&](const Alarm& x) { return x.step >= 0 && x.step < step; })) {
        link(a, *n,
             "step " + std::to_string(n->step) + " went non-finite (anomaly " + std::to_string(n->id) +
                 ") and its optimizer step applied those gradients: the parameters hold NaN/Inf since");
        return;
      }
      const Alarm* u = latest(r, {K::update_ratio}, step, [](const Alarm& x) { return x.once; });
      if (!u) u = latest(r, {K::exploding_norm}, step, [](const Alarm&) { return true; });
      if (u)
        link(a, *u,
             "the values went non-finite " + steps_text(step - u->step) + " after " + update_text(*u) +
                 (u->once ? ": weights an outsized update blew up overflow in the forward"
                          : ": updates made of gradients that large blow the weights up"));
      return;
    }
    case K::loss_spike: {
      if (const Alarm* u = latest(r, {K::update_ratio}, step,
                                  [&](const Alarm& x) { return x.once && step - x.step <= r.cfg.window; }))
        link(a, *u, "the loss rose " + steps_text(step - u->step) + " after " + update_text(*u));
      return;
    }
    default:
      return;
  }
}

}  // namespace gb::monitor::detail
