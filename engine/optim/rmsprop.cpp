// engine/optim/rmsprop.cpp — RMSprop's update: float32 cpu parameters in one fused pass over the whole list
// (optim/rmsprop_update.h), the rest written as PyTorch 1.13's _single_tensor_rmsprop.
#include "glassbox/optim/rmsprop.h"

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/memory/category.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "instrument/probe.h"

#include "monitor/monitor.h"
#include "optim/rmsprop_update.h"

namespace gb::optim {

RMSpropOptions::RMSpropOptions(double lr) : lr_(lr) {}

std::vector<std::pair<std::string, double>> RMSpropOptions::hyperparameters() const {
  return {{"lr", lr_},
          {"alpha", alpha_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"momentum", momentum_},
          {"centered", centered_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

void RMSpropOptions::set_hyperparameter(const std::string& name, double value) {
  if (name == "lr")
    lr_ = value;
  else if (name == "alpha")
    alpha_ = value;
  else if (name == "eps")
    eps_ = value;
  else if (name == "weight_decay")
    weight_decay_ = value;
  else if (name == "momentum")
    momentum_ = value;
  else if (name == "centered")
    centered_ = value != 0;
  else if (name == "maximize")
    maximize_ = value != 0;
  else
    throw Error("RMSprop has no hyperparameter \"" + name +
                "\" (it has lr, alpha, eps, weight_decay, momentum, centered, maximize)");
}

std::vector<std::pair<std::string, Tensor>> RMSpropParamState::tensors() const {
  return {{"step", scalar_state(step_)},
          {"square_avg", square_avg_},
          {"momentum_buffer", momentum_buffer_},
          {"grad_avg", grad_avg_}};
}

void RMSpropParamState::set_tensor(const std::string& name, const Tensor& value) {
  if (name == "step")
    step_ = scalar_value(value, "step");
  else if (name == "square_avg")
    square_avg_ = value;
  else if (name == "momentum_buffer")
    momentum_buffer_ = value;
  else if (name == "grad_avg")
    grad_avg_ = value;
  else
    throw Error("RMSprop state has no \"" + name + "\" (it has step, square_avg, momentum_buffer, grad_avg)");
}

namespace {
const RMSpropOptions& options_of(const OptimizerParamGroup& g) {
  const auto* o = dynamic_cast<const RMSpropOptions*>(&g.options());
  GB_CHECK(o != nullptr, "RMSprop: a parameter group holds another optimizer's options; give it RMSpropOptions");
  return *o;
}
void check_options(const RMSpropOptions& o) {
  GB_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  GB_CHECK(o.eps() >= 0, "Invalid epsilon value: ", o.eps());
  GB_CHECK(o.momentum() >= 0, "Invalid momentum value: ", o.momentum());
  GB_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
  GB_CHECK(o.alpha() >= 0, "Invalid alpha value: ", o.alpha());
}
}  // namespace

RMSprop::RMSprop(const std::vector<OptimizerParamGroup>& param_groups, RMSpropOptions defaults)
    : Optimizer({}, std::make_unique<RMSpropOptions>((check_options(defaults), defaults))) {
  for (const auto& g : param_groups) {
    if (g.has_options()) check_options(options_of(g));
    add_param_group(g);
  }
}

Tensor RMSprop::step(LossClosure closure) {
  GB_TRACE_SPAN(gb::trace::SpanKind::optimizer, "RMSprop.step");
  monitor::detail::OptimizerStep monitor(*this);  // traced: grad_stats, per-parameter detectors, the step
  Tensor loss = evaluate_closure(closure);
  NoGradGuard no_grad;
  std::vector<detail::RmspropTensors> fused;  // taken by the one pass at the end
  for (auto& group : param_groups_) {
    const RMSpropOptions& o = options_of(group);
    const detail::RmspropCoefs c{o.lr(),       o.alpha(),    o.eps(),     o.weight_decay(),
                                 o.momentum(), o.centered(), o.maximize()};
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state_[p.unsafe_impl()];
      if (!slot) slot = std::make_unique<RMSpropParamState>();
      auto& st = static_cast<RMSpropParamState&>(*slot);
      {
        memory::CategoryGuard cat(memory::Category::optimizer_state);
        if (!st.square_avg().defined()) st.square_avg(zeros_like(p));
        if (o.momentum() > 0 && !st.momentum_buffer().defined()) st.momentum_buffer(zeros_like(p));
        if (o.centered() && !st.grad_avg().defined()) st.grad_avg(zeros_like(p));
      }
      st.step(st.step() + 1);
      const detail::RmspropTensors item{p,
                                        p.grad(),
                                        st.square_avg(),
                                        o.centered() ? st.grad_avg() : Tensor(),
                                        o.momentum() > 0 ? st.momentum_buffer() : Tensor(),
                                        c};
      if (detail::rmsprop_fusable(item)) {
        fused.push_back(item);
        continue;
      }
      Tensor grad = o.maximize() ? p.grad().neg() : p.grad();
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      Tensor square_avg = st.square_avg();
      square_avg.mul_(o.alpha()).addcmul_(grad, grad, 1 - o.alpha());
      Tensor avg;
      if (o.centered()) {
        Tensor grad_avg = st.grad_avg();
        grad_avg.mul_(o.alpha()).add_(grad, 1 - o.alpha());
        avg = addcmul(square_avg, grad_avg, grad_avg, -1).sqrt_();
      } else {
        avg = square_avg.sqrt();
      }
      avg.add_(o.eps());
      if (o.momentum() > 0) {
        Tensor buf = st.momentum_buffer();
        buf.mul_(o.momentum()).addcdiv_(grad, avg);
        monitor::detail::note_update(p, 0, buf, Tensor(), -o.lr());
        p.add_(buf, -o.lr());
      } else {
        monitor::detail::note_update(p, 0, grad, avg, -o.lr());
        p.addcdiv_(grad, avg, -o.lr());
      }
    }
  }
  detail::rmsprop_fused_run(fused);
  return loss;
}

}  // namespace gb::optim
