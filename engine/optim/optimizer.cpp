// engine/optim/optimizer.cpp — the optimizer base: groups, zero_grad, the flat state dict.
#include "glassbox/optim/optimizer.h"

#include <algorithm>
#include <cmath>

#include "autograd/clear_grad.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/memory/category.h"
#include "glassbox/ops/factory.h"

namespace gb::optim {

OptimizerOptions& OptimizerParamGroup::options() {
  GB_CHECK(options_ != nullptr, "this parameter group has no options yet (add it to an optimizer first)");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  GB_CHECK(options_ != nullptr, "this parameter group has no options yet (add it to an optimizer first)");
  return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  GB_CHECK(defaults_ != nullptr, "Optimizer: missing default options");
  for (const auto& g : param_groups) add_param_group(g);
}

Optimizer::~Optimizer() = default;

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  OptimizerParamGroup g(group.params(), group.has_options() ? group.options().clone() : defaults_->clone());
  for (const auto& p : g.params()) {
    GB_CHECK(p.defined(), "optimizer can only optimize defined Tensors, but one of the params is undefined");
    GB_CHECK(p.is_leaf(), "can't optimize a non-leaf Tensor (a result of an op); pass the parameters themselves "
             "(module->parameters()) or a .detach().requires_grad_() copy");
    for (const auto& existing : param_groups_)
      for (const auto& q : existing.params())
        GB_CHECK(q.unsafe_impl() != p.unsafe_impl(), "some parameters appear in more than one parameter group");
  }
  param_groups_.push_back(std::move(g));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : param_groups_)
    for (auto& p : g.params()) gb::detail::clear_grad(p, set_to_none);
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const auto& g : param_groups_) out.insert(out.end(), g.params().begin(), g.params().end());
  return out;
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const auto& g : param_groups_) n += g.params().size();
  return n;
}

Tensor Optimizer::evaluate_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  EnableGradGuard grad_on;
  return closure();
}

Tensor scalar_state(double value) { return gb::scalar_tensor(value, TensorOptions().dtype(kDouble)); }

double scalar_value(const Tensor& t, const std::string& what) {
  GB_CHECK(t.defined() && t.numel() == 1, "optimizer state_dict: \"", what, "\" should hold one number, got ",
           t.defined() ? t.numel() : 0, " values");
  return t.to(kDouble).item<double>();
}

StateDict Optimizer::state_dict() const {
  StateDict out;
  int64_t index = 0;
  for (size_t gi = 0; gi < param_groups_.size(); ++gi) {
    const auto& g = param_groups_[gi];
    std::string gp = "param_groups." + std::to_string(gi) + ".";
    for (const auto& [name, value] : g.options().hyperparameters()) out.insert(gp + name, scalar_state(value));
    if (g.initial_lr()) out.insert(gp + "initial_lr", scalar_state(*g.initial_lr()));
    std::vector<int64_t> ids;
    for (const auto& p : g.params()) {
      auto it = state_.find(p.unsafe_impl());
      if (it != state_.end())
        for (const auto& [name, t] : it->second->tensors())
          if (t.defined()) out.insert("state." + std::to_string(index) + "." + name, t);
      ids.push_back(index++);
    }
    out.insert(gp + "params", gb::tensor(ids).to(kLong));
  }
  return out;
}

void Optimizer::load_state_dict(const StateDict& sd) {
  // Check everything first: a failed load changes nothing.
  size_t groups = 0;
  while (sd.contains("param_groups." + std::to_string(groups) + ".params")) ++groups;
  GB_CHECK(groups == param_groups_.size(), "loaded state dict has a different number of parameter groups (",
           groups, ") than the optimizer (", param_groups_.size(), "); build the optimizer with the same groups");
  std::vector<std::vector<int64_t>> group_ids(groups);
  for (size_t gi = 0; gi < groups; ++gi) {
    const Tensor& ids = sd["param_groups." + std::to_string(gi) + ".params"];
    GB_CHECK(ids.numel() == int64_t(param_groups_[gi].params().size()),
             "loaded state dict contains a parameter group that doesn't match the size of optimizer's group (group ",
             gi, ": ", ids.numel(), " saved parameters, ", param_groups_[gi].params().size(), " in the optimizer)");
    Tensor l = ids.to(kLong).contiguous();
    group_ids[gi].assign(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
  }
  for (const auto& item : sd) {
    const std::string& k = item.key();
    if (k.rfind("state.", 0) == 0 || k.rfind("param_groups.", 0) == 0) continue;
    throw Error("optimizer load_state_dict: unexpected key \"" + k +
                "\" (an optimizer state dict holds only state.* and param_groups.* entries)");
  }

  std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>> fresh;
  for (size_t gi = 0; gi < groups; ++gi) {
    auto& params = param_groups_[gi].params();
    for (size_t j = 0; j < params.size(); ++j) {
      std::string prefix = "state." + std::to_string(group_ids[gi][j]) + ".";
      std::unique_ptr<OptimizerParamState> st;
      for (const auto& item : sd) {
        if (item.key().rfind(prefix, 0) != 0) continue;
        if (!st) st = make_param_state();
        const Tensor& src = item.value();
        Tensor value;
        {
          NoGradGuard no_grad;
          memory::CategoryGuard cat(memory::Category::optimizer_state);
          // Floating state follows its parameter's device and dtype (PyTorch's cast in load_state_dict);
          // "step" and other scalars stay as they are.
          bool follow = src.dim() > 0 && is_floating_point(src.scalar_type());
          value = follow ? src.to(params[j].device(), params[j].scalar_type(), false, true)
                         : src.to(src.device(), src.scalar_type(), false, true);
        }
        st->set_tensor(item.key().substr(prefix.size()), value);
      }
      if (st) fresh.emplace(params[j].unsafe_impl(), std::move(st));
    }
  }
  for (size_t gi = 0; gi < groups; ++gi) {
    std::string gp = "param_groups." + std::to_string(gi) + ".";
    std::optional<double> initial_lr;
    for (const auto& item : sd) {
      if (item.key().rfind(gp, 0) != 0 || item.key() == gp + "params") continue;
      if (item.key() == gp + "initial_lr")
        initial_lr = scalar_value(item.value(), item.key());
      else
        param_groups_[gi].options().set_hyperparameter(item.key().substr(gp.size()),
                                                       scalar_value(item.value(), item.key()));
    }
    param_groups_[gi].set_initial_lr(initial_lr);
  }
  state_ = std::move(fresh);
}

}  // namespace gb::optim
