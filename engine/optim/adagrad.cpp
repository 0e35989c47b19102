// engine/optim/adagrad.cpp — Adagrad's update: float32 cpu parameters in one fused pass over the whole list
// (optim/adagrad_update.h), the rest written as PyTorch 1.13's _single_tensor_adagrad.
#include "glassbox/optim/adagrad.h"

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/memory/category.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "instrument/probe.h"
#include "monitor/monitor.h"
#include "optim/adagrad_update.h"

namespace gb::optim {

AdagradOptions::AdagradOptions(double lr) : lr_(lr) {}

std::vector<std::pair<std::string, double>> AdagradOptions::hyperparameters() const {
  return {{"lr", lr_},
          {"lr_decay", lr_decay_},
          {"weight_decay", weight_decay_},
          {"initial_accumulator_value", initial_accumulator_value_},
          {"eps", eps_},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

void AdagradOptions::set_hyperparameter(const std::string& name, double value) {
  if (name == "lr")
    lr_ = value;
  else if (name == "lr_decay")
    lr_decay_ = value;
  else if (name == "weight_decay")
    weight_decay_ = value;
  else if (name == "initial_accumulator_value")
    initial_accumulator_value_ = value;
  else if (name == "eps")
    eps_ = value;
  else if (name == "maximize")
    maximize_ = value != 0;
  else
    throw Error("Adagrad has no hyperparameter \"" + name +
                "\" (it has lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize)");
}

std::vector<std::pair<std::string, Tensor>> AdagradParamState::tensors() const {
  return {{"step", scalar_state(step_)}, {"sum", sum_}};
}

void AdagradParamState::set_tensor(const std::string& name, const Tensor& value) {
  if (name == "step")
    step_ = scalar_value(value, "step");
  else if (name == "sum")
    sum_ = value;
  else
    throw Error("Adagrad state has no \"" + name + "\" (it has step, sum)");
}

namespace {
const AdagradOptions& options_of(const OptimizerParamGroup& g) {
  const auto* o = dynamic_cast<const AdagradOptions*>(&g.options());
  GB_CHECK(o != nullptr, "Adagrad: a parameter group holds another optimizer's options; give it AdagradOptions");
  return *o;
}
void check_options(const AdagradOptions& o) {
  GB_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  GB_CHECK(o.lr_decay() >= 0, "Invalid lr_decay value: ", o.lr_decay());
  GB_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
  GB_CHECK(o.initial_accumulator_value() >= 0, "Invalid initial_accumulator_value value: ",
           o.initial_accumulator_value());
  GB_CHECK(o.eps() >= 0, "Invalid epsilon value: ", o.eps());
}
}  // namespace

Adagrad::Adagrad(const std::vector<OptimizerParamGroup>& param_groups, AdagradOptions defaults)
    : Optimizer({}, std::make_unique<AdagradOptions>((check_options(defaults), defaults))) {
  for (const auto& g : param_groups) {
    if (g.has_options()) check_options(options_of(g));
    add_param_group(g);
  }
}

Tensor Adagrad::step(LossClosure closure) {
  GB_TRACE_SPAN(gb::trace::SpanKind::optimizer, "Adagrad.step");
  monitor::detail::OptimizerStep monitor(*this);  // traced: grad_stats, per-parameter detectors, the step
  Tensor loss = evaluate_closure(closure);
  NoGradGuard no_grad;
  std::vector<detail::AdagradTensors> fused;  // taken by the one pass at the end (optim/adagrad_update.h)
  for (auto& group : param_groups_) {
    const AdagradOptions& o = options_of(group);
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state_[p.unsafe_impl()];
      if (!slot) slot = std::make_unique<AdagradParamState>();
      auto& st = static_cast<AdagradParamState&>(*slot);
      if (!st.sum().defined()) {
        memory::CategoryGuard cat(memory::Category::optimizer_state);
        st.sum(full_like(p, o.initial_accumulator_value()));
      }
      st.step(st.step() + 1);
      const detail::AdagradTensors item{
          p, p.grad(), st.sum(), {o.lr(), o.lr_decay(), o.weight_decay(), o.eps(), o.maximize(), st.step()}};
      if (detail::adagrad_fusable(item)) {
        fused.push_back(item);
        continue;
      }
      Tensor grad = o.maximize() ? p.grad().neg() : p.grad();
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      const double clr = o.lr() / (1 + (st.step() - 1) * o.lr_decay());
      Tensor sum = st.sum();
      sum.addcmul_(grad, grad, 1);
      Tensor std = sum.sqrt().add_(o.eps());
      monitor::detail::note_update(p, 0, grad, std, -clr);
      p.addcdiv_(grad, std, -clr);
    }
  }
  detail::adagrad_fused_run(fused);
  return loss;
}

}  // namespace gb::optim
