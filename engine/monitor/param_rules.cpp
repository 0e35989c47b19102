// engine/monitor/param_rules.cpp — the per-parameter detectors, judged once per optimizer step over every
// parameter it holds (grad_stats.cpp measures them): exploding and vanishing gradients, updates too large for their
// parameter, and parameters that never receive a gradient.
//
// Long runs shaped these rules. A run that converges has gradients that shrink by orders of magnitude and then
// scatter around a small median (one hard sample in a batch moves them 10x); judged against a rolling median alone,
// that noise reads as explosions, and the shrinking as vanishing. So:
//   - exploding: far above the recent median AND record_factor x every norm the layer had (a sudden explosion), or
//     a streak above the median while the loss gets worse AND at least as large as the gradients the layer
//     learned with (the highest median it has had): a converged run's noise stays below both, a real explosion
//     does not;
//   - vanishing: the parameter's SHARE of the step's whole gradient collapses, for sustained_steps in a row: every
//     gradient shrinking together is convergence; one layer's alone going silent is a layer that stopped learning;
//   - an update is judged against the parameter's norm BEFORE it (one update that dwarfs the weight reads as such),
//     at once for a weight that was not zero to begin with, and over a streak for the milder case;
//   - a parameter the optimizer holds that got no gradient, or an exactly zero one, in every one of its first steps.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "monitor/monitor.h"
#include "monitor/run.h"

namespace gb::monitor::detail {

namespace {

std::string fmt(double v) { return number_text(v, 3); }


void judge_vanishing(Run& r, ParamState& st, double norm, double total, int64_t step) {
  const Config& c = r.cfg;
  if (!(total > 0) || !std::isfinite(total)) return;
  const double share = norm / total;
  const bool ready = static_cast<int64_t>(st.log_shares.size()) >= c.warmup && st.seen > c.warmup;
  if (ready && step >= st.quiet_until) {
    const double med = st.log_shares.median();
    const bool low = share <= 0 || std::log(share) <= med + std::log(c.vanish_factor);
    if (low && st.vanish_streak++ == 0) st.vanish_from = step;
    if (!low) st.vanish_streak = 0;
    if (!low) st.vanished = false;  // recovered: a later collapse is a new alarm
    if (st.vanish_streak >= c.sustained_steps && !st.vanished) {
      const double usual = std::exp(med);
      report(param_anomaly(trace::AnomalyKind::vanishing_norm, st, norm,
                       "gradient of " + st.label + " vanished: for " + std::to_string(st.vanish_streak) +
                           " steps in a row (steps " + std::to_string(st.vanish_from) + ".." + std::to_string(step) +
                           ") its share of the whole gradient was below " + fmt(c.vanish_factor) + "x its usual " +
                           fmt(usual) + " (now " + fmt(share) + ", norm " + fmt(norm) +
                           ") while the other parameters' gradients did not shrink with it: the layer stopped "
                           "learning; look for dead units after it, saturated activations or a detached graph"));
      st.quiet_until = step + c.window;
      st.vanished = true;
    }
  }
  // the baseline learns from healthy steps only: a collapse in progress does not pull it down
  if (share > 0 && st.vanish_streak == 0) st.log_shares.push(std::log(share));
}

void judge_exploding(Run& r, ParamState& st, double norm, int64_t step) {
  const Config& c = r.cfg;
  if (!std::isfinite(norm) || norm <= 0) return;
  const double lg = std::log(norm);
  const bool ready = static_cast<int64_t>(st.log_norms.size()) >= c.warmup && st.seen > c.warmup;
  // no larger than the gradients this layer learned with: a converged run's noise, not an explosion
  const bool beyond_learning = lg >= st.peak_median;
  // a sudden explosion also exceeds record_factor x every norm the layer had (a noisy layer's usual outliers do not)
  const bool beyond_any = lg >= st.max_log_norm + std::log(std::max(c.record_factor, 1.0));
  if (ready && step >= st.quiet_until) {
    const double med = st.log_norms.median();
    const double ratio = std::exp(lg - med);
    const double median_norm = std::exp(med);
    // the spread (a walk over half the window) only where the ratio could make an alarm
    const double spread = ratio >= c.explode_factor && beyond_any ? std::max(st.log_norms.mad(), 0.05) : 0;
    auto alarm = [&](std::string why) {
      report(param_anomaly(trace::AnomalyKind::exploding_norm, st, norm, std::move(why)));
      st.quiet_until = step + c.window;
      st.high_streak = 0;
    };
    if (ratio >= c.explode_factor && lg - med > c.spread_mads * spread && beyond_any) {
      alarm("gradient norm of " + st.label + " exploded to " + fmt(norm) + " at step " + std::to_string(step) + ", " +
            fmt(ratio) + "x its recent median " + fmt(median_norm) + " and " + fmt(std::exp(lg - st.max_log_norm)) +
            "x the largest it had before (" + fmt(std::exp(st.max_log_norm)) +
            "): lower the learning rate, clip gradients (clip_grad_norm_), or look for a bad batch");
    } else {
      // sustained growth: beyond sustained_factor x the median when the streak began, steps in a row, while the
      // loss got worse. (Gradients that grow while the loss falls or holds are a network leaving its
      // initialisation, e.g. under a warm-up.)
      if (st.high_streak == 0) {
        st.streak_ref = median_norm;
        st.streak_loss = r.losses.size() ? r.losses.median() : std::nan("");
      }
      st.high_streak = norm >= c.sustained_factor * st.streak_ref && beyond_learning ? st.high_streak + 1 : 0;
      // diverging: the loss got worse meanwhile (its median up by a tenth); holding or falling, it is the new normal
      const bool loss_worse = std::isfinite(st.streak_loss) && r.losses.median() > st.streak_loss + std::log(1.1);
      if (st.high_streak >= c.sustained_steps && !loss_worse) st.high_streak = 0;  // the new normal: start over
      if (st.high_streak >= c.sustained_steps)
        alarm("gradient norm of " + st.label + " has stayed above " + fmt(c.sustained_factor) + "x its earlier median " +
              fmt(st.streak_ref) + " for " + std::to_string(c.sustained_steps) + " steps (now " + fmt(norm) +
              ", step " + std::to_string(step) +
              ") while the loss got worse: training is diverging; lower the learning rate");
    }
  }
  st.log_norms.push(lg);
  st.max_log_norm = std::max(st.max_log_norm, lg);
  if (static_cast<int64_t>(st.log_norms.size()) >= c.warmup)
    st.peak_median = std::max(st.peak_median, st.log_norms.median());
}

// "group 1 (lr 40), 800x the lr of group 0 (0.05)"
std::string group_text(size_t group, const std::vector<double>& lrs) {
  std::string s = "parameter group " + std::to_string(group) + " (lr " + fmt(lrs[group]) + ")";
  if (lrs.size() < 2) return s + ", the optimizer's only group";
  std::string others;
  for (size_t g = 0; g < lrs.size(); ++g) {
    if (g == group) continue;
    const double x = lrs[g] > 0 ? lrs[group] / lrs[g] : std::nan("");
    others += std::string(others.empty() ? "" : ", ") + (std::isfinite(x) ? fmt(x) + "x" : "against") + " group " +
              std::to_string(g) + "'s " + fmt(lrs[g]);
  }
  return s + ": " + others;
}

void judge_update(Run& r, ParamState& st, const Measured& m, int64_t step, const std::vector<double>& lrs) {
  const Config& c = r.cfg;
  const double param = m.param_norm;
  if (!m.update || !(param > 0) || !std::isfinite(*m.update) || !std::isfinite(param)) return;
  const double ratio = *m.update / param;
  // One update that dwarfs a weight: at once. Weights that start at zero (biases, LoRA's B, zero-initialised
  // branches) grow from it, and their first updates are legitimately large next to what they hold.
  // A parameter that started at zero holds only what the optimizer's first steps put there: judged once it has
  // had `warmup` steps to grow (a warm-up's rising lr makes each early update larger than the sum before it).
  if (st.initial_norm == 0 && step - st.first_step < c.warmup) return;
  if (st.dims >= 2 && st.initial_norm > 0 && ratio >= c.update_ratio_once && step >= st.ratio_quiet_until) {
    const std::string what = "one update of " + st.label + " was " + fmt(ratio) + "x its norm";
    report(param_anomaly(trace::AnomalyKind::update_ratio, st, ratio,
                     what + " at step " + std::to_string(step) + " (update " + fmt(*m.update) + ", weight " +
                         fmt(param) + " before it); " + group_text(m.group, lrs) +
                         ". An update larger than the weight overwrites what it learned (healthy steps move a weight "
                         "by about 1e-3 to 5e-2 of its norm): lower this group's learning rate"),
           AlarmFacts{.once = true, .group = static_cast<int64_t>(m.group), .what = what});
    st.ratio_quiet_until = step + c.window;
    st.ratio_streak = 0;
    return;
  }
  st.ratio_streak = ratio > c.update_ratio_max ? st.ratio_streak + 1 : 0;
  if (st.ratio_streak >= c.update_ratio_steps && step >= st.ratio_quiet_until) {
    report(param_anomaly(trace::AnomalyKind::update_ratio, st, ratio,
                     "learning rate too high for " + st.label + ": each update is " + fmt(ratio) +
                         "x the parameter's norm before it (" + std::to_string(st.ratio_streak) +
                         " steps in a row, step " + std::to_string(step) + "; " + group_text(m.group, lrs) +
                         "; healthy training moves a weight by about 1e-3 to 5e-2 of its norm per step): lower "
                         "this parameter group's learning rate"),
           AlarmFacts{.group = static_cast<int64_t>(m.group),
                      .what = "updates of " + st.label + " " + fmt(ratio) + "x its norm"});
    st.ratio_quiet_until = step + c.window;
    st.ratio_streak = 0;
  }
}

// "encoder.0 (weight, bias); encoder.2 (weight)": in the order the forward calls the modules (then the rest, as
// registered); a module that never ran is named by its parameters' paths.
std::string modules_text(const Run& r, const std::vector<const ParamState*>& params) {
  std::vector<std::pair<std::string, std::string>> groups;  // module path -> parameter names
  std::vector<std::pair<int64_t, int64_t>> order;          // (forward position or a large number, module id)
  for (const ParamState* p : params) {
    std::string path = p->module_id > 0 ? module_path(p->module_id) : "";
    std::string name = p->label;
    if (!path.empty() && name.rfind(path + ".", 0) == 0) {
      name = name.substr(path.size() + 1);
    } else if (p->module_id <= 0 && name.rfind('.') != std::string::npos) {
      path = name.substr(0, name.rfind('.'));
      name = name.substr(name.rfind('.') + 1);
    }
    size_t i = 0;
    while (i < groups.size() && groups[i].first != path) ++i;
    if (i == groups.size()) {
      groups.emplace_back(path, "");
      const int64_t at = p->module_id > 0 ? forward_position(r, p->module_id) : -1;
      order.emplace_back(at >= 0 ? at : (int64_t{1} << 40) + p->module_id, static_cast<int64_t>(i));
    }
    groups[i].second += (groups[i].second.empty() ? "" : ", ") + name;
  }
  std::sort(order.begin(), order.end());
  std::string out;
  for (const auto& o : order) {
    const auto& [path, names] = groups[static_cast<size_t>(o.second)];
    out += (out.empty() ? "" : "; ") + (path.empty() ? "(" + names + ")" : path + " (" + names + ")");
  }
  return out;
}

void judge_no_gradient(Run& r, const std::vector<Measured>& measured, int64_t step) {
  const int64_t due = std::max<int64_t>(r.cfg.no_gradient_steps, 1);
  std::vector<const ParamState*> never, zero, frozen;
  for (const Measured& m : measured) {
    ParamState& st = *m.st;
    ++st.held;
    if (m.has_grad) ++st.with_grad;
    if (m.scanned && m.zeros < m.n) ++st.nonzero;
    if (st.held != due || st.no_gradient_named) continue;
    st.no_gradient_named = true;
    if (st.with_grad == 0)
      (m.requires_grad ? never : frozen).push_back(&st);
    else if (st.nonzero == 0)
      zero.push_back(&st);
  }
  auto alarm = [&](const std::vector<const ParamState*>& list, std::string why, bool is_zero) {
    if (list.empty()) return;
    trace::AnomalyRecord a = param_anomaly(trace::AnomalyKind::no_gradient, *list.front(),
                                       static_cast<double>(list.size()), std::move(why));
    report(std::move(a), AlarmFacts{.zero = is_zero, .what = std::to_string(list.size()) + " parameters"});
  };
  const std::string n = std::to_string(due);
  alarm(never,
        std::to_string(never.size()) + " parameter" + (never.size() == 1 ? "" : "s") +
            " the optimizer holds never received a gradient in its first " + n + " steps (step " +
            std::to_string(step) + "): " + modules_text(r, never) +
            ". Nothing connects them to the loss: a .detach() or a no_grad region between their output and the "
            "loss, or a module the forward never calls; if they are frozen on purpose, leave them out of the "
            "optimizer",
        false);
  alarm(frozen,
        std::to_string(frozen.size()) + " parameter" + (frozen.size() == 1 ? "" : "s") +
            " the optimizer holds have requires_grad off and got no gradient in the first " + n + " steps (step " +
            std::to_string(step) + "): " + modules_text(r, frozen) +
            ". They never train: turn requires_grad back on (requires_grad_(true)), or leave them out of the "
            "optimizer if they are frozen on purpose",
        false);
  alarm(zero,
        "the gradient of " + std::to_string(zero.size()) + " parameter" + (zero.size() == 1 ? "" : "s") +
            " was exactly zero at every one of the first " + n + " steps (step " + std::to_string(step) +
            "): " + modules_text(r, zero) +
            ". Nothing flows back to them: dead units after them (a ReLU that outputs only zeros), an output "
            "multiplied by zero, or a loss that does not depend on them",
        true);
}

}  // namespace

void judge_params(Run& r, std::vector<Measured>& measured, const std::vector<double>& lrs, int64_t step) {
  double sumsq = 0;
  for (const Measured& m : measured)
    if (m.scanned && std::isfinite(m.norm)) sumsq += m.norm * m.norm;
  const double total = std::sqrt(sumsq);
  for (Measured& m : measured) {
    ParamState& st = *m.st;
    if (st.initial_norm < 0 && m.has_grad && std::isfinite(m.param_norm)) {
      st.initial_norm = m.param_norm;
      st.first_step = step;
    }
    if (!m.scanned) continue;
    judge_exploding(r, st, m.norm, step);
    if (std::isfinite(m.norm)) judge_vanishing(r, st, m.norm, total, step);
    judge_update(r, st, m, step, lrs);
  }
  judge_no_gradient(r, measured, step);
}

}  // namespace gb::monitor::detail
