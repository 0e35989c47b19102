// engine/optim/adamw.cpp — AdamW's update, written as PyTorch 1.13's _single_tensor_adamw: decoupled decay, then
// Adam's moments (detail::adam_update).
#include "glassbox/optim/adamw.h"

#include "glassbox/autograd/grad_mode.h"
#include "instrument/probe.h"

namespace gb::optim {

AdamWOptions::AdamWOptions(double lr) : lr_(lr) {}

std::vector<std::pair<std::string, double>> AdamWOptions::hyperparameters() const {
  return {{"lr", lr_},
          {"beta1", std::get<0>(betas_)},
          {"beta2", std::get<1>(betas_)},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"amsgrad", amsgrad_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

void AdamWOptions::set_hyperparameter(const std::string& name, double value) {
  if (name == "lr")
    lr_ = value;
  else if (name == "beta1")
    std::get<0>(betas_) = value;
  else if (name == "beta2")
    std::get<1>(betas_) = value;
  else if (name == "eps")
    eps_ = value;
  else if (name == "weight_decay")
    weight_decay_ = value;
  else if (name == "amsgrad")
    amsgrad_ = value != 0;
  else if (name == "maximize")
    maximize_ = value != 0;
  else
    throw Error("AdamW has no hyperparameter \"" + name +
                "\" (it has lr, beta1, beta2, eps, weight_decay, amsgrad, maximize)");
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
  Tensor loss = evaluate_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const AdamWOptions& o = options_of(group);
    auto [beta1, beta2] = o.betas();
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = o.maximize() ? p.grad().neg() : p.grad();
      auto& slot = state_[p.unsafe_impl()];
      if (!slot) slot = std::make_unique<AdamWParamState>();
      if (o.weight_decay() != 0) p.mul_(1 - o.lr() * o.weight_decay());  // exact no-op at 0, so skipped
      detail::adam_update(p, grad, static_cast<AdamWParamState&>(*slot), o.lr(), beta1, beta2, o.eps(), o.amsgrad());
    }
  }
  return loss;
}

}  // namespace gb::optim
