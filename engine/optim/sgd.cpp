// engine/optim/sgd.cpp — SGD's update, written as PyTorch 1.13's _single_tensor_sgd.
#include "glassbox/optim/sgd.h"

#include <cmath>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/memory/category.h"
#include "instrument/probe.h"

#include "monitor/monitor.h"
#include "optim/sgd_update.h"

namespace gb::optim {

SGDOptions::SGDOptions(double lr) : lr_(lr) {}

std::vector<std::pair<std::string, double>> SGDOptions::hyperparameters() const {
  return {{"lr", lr_},
          {"momentum", momentum_},
          {"dampening", dampening_},
          {"weight_decay", weight_decay_},
          {"nesterov", nesterov_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

void SGDOptions::set_hyperparameter(const std::string& name, double value) {
  if (name == "lr")
    lr_ = value;
  else if (name == "momentum")
    momentum_ = value;
  else if (name == "dampening")
    dampening_ = value;
  else if (name == "weight_decay")
    weight_decay_ = value;
  else if (name == "nesterov")
    nesterov_ = value != 0;
  else if (name == "maximize")
    maximize_ = value != 0;
  else
    throw Error("SGD has no hyperparameter \"" + name +
                "\" (it has lr, momentum, dampening, weight_decay, nesterov, maximize)");
}

std::vector<std::pair<std::string, Tensor>> SGDParamState::tensors() const {
  return {{"momentum_buffer", momentum_buffer_}};
}

void SGDParamState::set_tensor(const std::string& name, const Tensor& value) {
  GB_CHECK(name == "momentum_buffer", "SGD state has no \"", name, "\" (only momentum_buffer)");
  momentum_buffer_ = value;
}

namespace {
const SGDOptions& options_of(const OptimizerParamGroup& g) {
  const auto* o = dynamic_cast<const SGDOptions*>(&g.options());
  GB_CHECK(o != nullptr, "SGD: a parameter group holds another optimizer's options; give it SGDOptions");
  return *o;
}

void check_options(const SGDOptions& o) {
  GB_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  GB_CHECK(o.momentum() >= 0, "Invalid momentum value: ", o.momentum());
  GB_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
  GB_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
           "Nesterov momentum requires a momentum and zero dampening (got momentum=", o.momentum(),
           ", dampening=", o.dampening(), ")");
}
}  // namespace

SGD::SGD(const std::vector<OptimizerParamGroup>& param_groups, SGDOptions defaults)
    : Optimizer({}, std::make_unique<SGDOptions>((check_options(defaults), defaults))) {
  for (const auto& g : param_groups) {
    if (g.has_options()) check_options(options_of(g));
    add_param_group(g);
  }
}

// One pass over p, its gradient and its momentum buffer (optim/sgd_update.h) for float32 cpu parameters once the
// buffer exists; the statistics the monitor wants come from the same pass. False: the unfused path below.
bool SGD::step_fused(const Tensor& p, const SGDOptions& o) {
  Tensor buf;
  if (o.momentum() != 0) {
    auto it = state_.find(p.unsafe_impl());
    if (it == state_.end() || !it->second) return false;
    buf = static_cast<SGDParamState&>(*it->second).momentum_buffer();
    if (!buf.defined()) return false;
  }
  if (!detail::sgd_fusable(p, p.grad(), buf)) return false;
  detail::SgdCoefs c;
  c.lr = o.lr();
  c.momentum = o.momentum();
  c.dampening = o.dampening();
  c.weight_decay = o.weight_decay();
  c.nesterov = o.nesterov();
  c.maximize = o.maximize();
  const bool due = monitor::detail::step_stats_due();
  detail::SgdStepSums sums;
  detail::sgd_update(p, p.grad(), buf, c, due ? &sums : nullptr);
  if (due) monitor::detail::note_step_sums(p, sums.grad, std::sqrt(sums.update_sumsq), std::sqrt(sums.param_sumsq));
  return true;
}

Tensor SGD::step(LossClosure closure) {
  GB_TRACE_SPAN(gb::trace::SpanKind::optimizer, "SGD.step");
  monitor::detail::OptimizerStep monitor(*this);  // traced: grad_stats, per-parameter detectors, the step
  Tensor loss = evaluate_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const SGDOptions& o = options_of(group);
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (step_fused(p, o)) continue;
      Tensor d_p = o.maximize() ? p.grad().neg() : p.grad();
      if (o.weight_decay() != 0) d_p = d_p.add(p, o.weight_decay());
      if (o.momentum() != 0) {
        auto& slot = state_[p.unsafe_impl()];
        if (!slot) slot = std::make_unique<SGDParamState>();
        auto& st = static_cast<SGDParamState&>(*slot);
        Tensor buf = st.momentum_buffer();
        if (!buf.defined()) {
          memory::CategoryGuard cat(memory::Category::optimizer_state);
          buf = d_p.clone().detach();
          st.momentum_buffer(buf);
        } else {
          buf.mul_(o.momentum()).add_(d_p, 1 - o.dampening());
        }
        d_p = o.nesterov() ? d_p.add(buf, o.momentum()) : buf;
      }
      monitor::detail::note_update(p, 0, d_p, Tensor(), -o.lr());
      p.add_(d_p, -o.lr());
    }
  }
  return loss;
}

}  // namespace gb::optim
