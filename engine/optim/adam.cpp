// engine/optim/adam.cpp — Adam's update: float32 cpu parameters in one fused pass over the whole list
// (optim/adam_update.h, PyTorch's fused=True), the rest as PyTorch 1.13's _single_tensor_adam. Both halves are shared
// with AdamW (detail::adam_update, detail::adam_fused_*).
#include "glassbox/optim/adam.h"

#include <cmath>

#include "core/op_scope.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/memory/category.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "instrument/probe.h"
#include "optim/adam_hyperparameters.h"
#include "optim/adam_update.h"

#include "monitor/monitor.h"

namespace gb::optim {

AdamOptions::AdamOptions(double lr) : lr_(lr) {}

std::vector<std::pair<std::string, double>> AdamOptions::hyperparameters() const {
  return detail::adam_hyperparameters(*this);
}

void AdamOptions::set_hyperparameter(const std::string& name, double value) {
  detail::set_adam_hyperparameter(*this, "Adam", name, value);
}

std::vector<std::pair<std::string, Tensor>> AdamParamState::tensors() const {
  return {{"step", scalar_state(step_)},
          {"exp_avg", exp_avg_},
          {"exp_avg_sq", exp_avg_sq_},
          {"max_exp_avg_sq", max_exp_avg_sq_}};
}

void AdamParamState::set_tensor(const std::string& name, const Tensor& value) {
  if (name == "step")
    step_ = scalar_value(value, "step");
  else if (name == "exp_avg")
    exp_avg_ = value;
  else if (name == "exp_avg_sq")
    exp_avg_sq_ = value;
  else if (name == "max_exp_avg_sq")
    max_exp_avg_sq_ = value;
  else
    throw Error("Adam state has no \"" + name + "\" (it has step, exp_avg, exp_avg_sq, max_exp_avg_sq)");
}

namespace detail {

void check_adam_arguments(double lr, double eps, double beta1, double beta2, double weight_decay) {
  GB_CHECK(lr >= 0, "Invalid learning rate: ", lr);
  GB_CHECK(eps >= 0, "Invalid epsilon value: ", eps);
  GB_CHECK(beta1 >= 0 && beta1 < 1, "Invalid beta parameter at index 0: ", beta1);
  GB_CHECK(beta2 >= 0 && beta2 < 1, "Invalid beta parameter at index 1: ", beta2);
  GB_CHECK(weight_decay >= 0, "Invalid weight_decay value: ", weight_decay);
}

namespace {
// The moments, zeros the first time (the max under amsgrad), in the optimizer_state category.
void ensure_state(const Tensor& param, AdamParamState& st, bool amsgrad) {
  if (!st.exp_avg().defined()) {
    memory::CategoryGuard cat(memory::Category::optimizer_state);
    st.exp_avg(zeros_like(param));
    st.exp_avg_sq(zeros_like(param));
  }
  if (amsgrad && !st.max_exp_avg_sq().defined()) {
    memory::CategoryGuard cat(memory::Category::optimizer_state);
    st.max_exp_avg_sq(zeros_like(param));
  }
}
}  // namespace

bool adam_fused_item(const Tensor& p, AdamParamState& st, const AdamCoefs& c, AdamTensors& out) {
  ensure_state(p, st, c.amsgrad);
  out = {p, p.grad(), st.exp_avg(), st.exp_avg_sq(), c.amsgrad ? st.max_exp_avg_sq() : Tensor(), c};
  if (!adam_fusable(out)) return false;
  st.step(st.step() + 1);
  out.c.step = st.step();
  return true;
}

void adam_fused_run(const std::vector<AdamTensors>& items) {
  // PyTorch's name for its fused Adam/AdamW; 16 float operations an element (adam_update.cpp's adam_run)
  fused_run("_fused_adam_", 16, items, adam_fused_update);
}

void adam_update(Tensor& param, const Tensor& grad, AdamParamState& st, double lr, double beta1, double beta2,
                 double eps, bool amsgrad, double decayed_by) {
  ensure_state(param, st, amsgrad);
  st.step(st.step() + 1);
  Tensor exp_avg = st.exp_avg(), exp_avg_sq = st.exp_avg_sq();
  exp_avg.mul_(beta1).add_(grad, 1 - beta1);
  exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2);

  double bias_correction1 = 1 - std::pow(beta1, st.step());
  double bias_correction2 = 1 - std::pow(beta2, st.step());
  double step_size = lr / bias_correction1;
  double bias_correction2_sqrt = std::sqrt(bias_correction2);
  Tensor denom;
  if (amsgrad) {
    Tensor max_sq = st.max_exp_avg_sq();
    max_sq.copy_(maximum(max_sq, exp_avg_sq));
    denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps);
  } else {
    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps);
  }
  // AdamW decayed param first by (1 - lr * wd): that part of the update is -lr * wd / (1 - lr * wd) * param now
  monitor::detail::note_update(param, decayed_by == 0 ? 0 : -decayed_by / (1 - decayed_by), exp_avg, denom, -step_size);
  param.addcdiv_(exp_avg, denom, -step_size);
}

}  // namespace detail

namespace {
const AdamOptions& options_of(const OptimizerParamGroup& g) {
  const auto* o = dynamic_cast<const AdamOptions*>(&g.options());
  GB_CHECK(o != nullptr, "Adam: a parameter group holds another optimizer's options; give it AdamOptions");
  return *o;
}
void check_options(const AdamOptions& o) {
  detail::check_adam_arguments(o.lr(), o.eps(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.weight_decay());
}
}  // namespace

Adam::Adam(const std::vector<OptimizerParamGroup>& param_groups, AdamOptions defaults)
    : Optimizer({}, std::make_unique<AdamOptions>((check_options(defaults), defaults))) {
  for (const auto& g : param_groups) {
    if (g.has_options()) check_options(options_of(g));
    add_param_group(g);
  }
}

Tensor Adam::step(LossClosure closure) {
  GB_TRACE_SPAN(gb::trace::SpanKind::optimizer, "Adam.step");
  monitor::detail::OptimizerStep monitor(*this);  // traced: grad_stats, per-parameter detectors, the step
  Tensor loss = evaluate_closure(closure);
  NoGradGuard no_grad;
  std::vector<detail::AdamTensors> fused;  // every parameter the one pass takes (optim/adam_update.h)
  for (auto& group : param_groups_) {
    const AdamOptions& o = options_of(group);
    auto [beta1, beta2] = o.betas();
    const detail::AdamCoefs c{o.lr(), beta1, beta2, o.eps(), o.weight_decay(), o.amsgrad(), o.maximize(), false};
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state_[p.unsafe_impl()];
      if (!slot) slot = std::make_unique<AdamParamState>();
      if (detail::adam_fused_item(p, static_cast<AdamParamState&>(*slot), c, fused.emplace_back())) continue;
      fused.pop_back();
      Tensor grad = o.maximize() ? p.grad().neg() : p.grad();
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      detail::adam_update(p, grad, static_cast<AdamParamState&>(*slot), o.lr(), beta1, beta2, o.eps(), o.amsgrad());
    }
  }
  detail::adam_fused_run(fused);
  return loss;
}

}  // namespace gb::optim
