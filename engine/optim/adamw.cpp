// engine/optim/adamw.cpp — AdamW's update: float32 cpu parameters in Adam's fused pass with the decay decoupled
// (optim/adam_update.h), the rest as PyTorch 1.13's _single_tensor_adamw: decoupled decay, then Adam's moments
// (detail::adam_update).
#include "glassbox/optim/adamw.h"

#include "glassbox/autograd/grad_mode.h"
#include "instrument/probe.h"
#include "optim/adam_hyperparameters.h"
#include "optim/adam_update.h"

#include "monitor/monitor.h"

namespace gb::optim {

AdamWOptions::AdamWOptions(double lr) : lr_(lr) {}

std::vector<std::pair<std::string, double>> AdamWOptions::hyperparameters() const {
  return detail::adam_hyperparameters(*this);
}

void AdamWOptions::set_hyperparameter(const std::string& name, double value) {
  detail::set_adam_hyperparameter(*this, "AdamW", name, value);
}

namespace {
const AdamWOptions& options_of(const OptimizerParamGroup& g) {
  const auto* o = dynamic_cast<const AdamWOptions*>(&g.options());
  GB_CHECK(o != nullptr, "AdamW: a parameter group holds another optimizer's options; give it AdamWOptions");
  return *o;
}
void check_options(const AdamWOptions& o) {
  detail::check_adam_arguments(o.lr(), o.eps(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.weight_decay());
}
}  // namespace

AdamW::AdamW(const std::vector<OptimizerParamGroup>& param_groups, AdamWOptions defaults)
    : Optimizer({}, std::make_unique<AdamWOptions>((check_options(defaults), defaults))) {
  for (const auto& g : param_groups) {
    if (g.has_options()) check_options(options_of(g));
    add_param_group(g);
  }
}

Tensor AdamW::step(LossClosure closure) {
  GB_TRACE_SPAN(gb::trace::SpanKind::optimizer, "AdamW.step");
  monitor::detail::OptimizerStep monitor(*this);  // traced: grad_stats, per-parameter detectors, the step
  Tensor loss = evaluate_closure(closure);
  NoGradGuard no_grad;
  std::vector<detail::AdamTensors> fused;  // every parameter the one pass takes (optim/adam_update.h)
  for (auto& group : param_groups_) {
    const AdamWOptions& o = options_of(group);
    auto [beta1, beta2] = o.betas();
    const detail::AdamCoefs c{o.lr(), beta1, beta2, o.eps(), o.weight_decay(), o.amsgrad(), o.maximize(), true};
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state_[p.unsafe_impl()];
      if (!slot) slot = std::make_unique<AdamWParamState>();
      if (detail::adam_fused_item(p, static_cast<AdamWParamState&>(*slot), c, fused.emplace_back())) continue;
      fused.pop_back();
      Tensor grad = o.maximize() ? p.grad().neg() : p.grad();
      if (o.weight_decay() != 0) p.mul_(1 - o.lr() * o.weight_decay());  // exact no-op at 0, so skipped
      detail::adam_update(p, grad, static_cast<AdamWParamState&>(*slot), o.lr(), beta1, beta2, o.eps(), o.amsgrad(),
                          o.lr() * o.weight_decay());
    }
  }
  detail::adam_fused_run(fused);
  return loss;
}

}  // namespace gb::optim
