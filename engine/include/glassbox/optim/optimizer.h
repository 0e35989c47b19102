// glassbox/optim/optimizer.h — the optimizer base (torch::optim::Optimizer): parameter groups with their own
// hyperparameters, per-parameter state, zero_grad, and a flat state_dict.
//
//   gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9));
//   std::vector<gb::optim::OptimizerParamGroup> groups{{body_params}, {head_params, std::make_unique<AdamOptions>(1e-4)}};
//   opt.param_groups()[0].options().set_lr(0.01);
//   auto sd = opt.state_dict();     // "state.0.momentum_buffer", "param_groups.0.lr", "param_groups.0.params"
//
// State dict layout (PyTorch's, flattened with dots so it saves as one safetensors file): parameters are numbered
// 0.. across the groups in order; "state.<i>.<name>" holds parameter i's state tensors (scalars such as `step`
// as 0-dim float64 tensors); "param_groups.<g>.<hyperparameter>" holds each group's hyperparameters as 0-dim
// float64 tensors (bools as 0/1) and "param_groups.<g>.params" the int64 indices of its parameters; a group a
// scheduler has seen also holds "param_groups.<g>.initial_lr" (PyTorch keeps it in the group too).
// load_state_dict checks the group count and sizes first and names the mismatch (PyTorch's messages); on error
// nothing is changed.
//
// State tensors are created under gb::memory::CategoryGuard(Category::optimizer_state), so the allocator and the
// trace count them as optimizer state.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/nn/ordered_dict.h"

namespace gb::optim {

// One group's hyperparameters. Each optimizer's Options derive from OptimizerCloneableOptions<Options>.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // Every hyperparameter as (name, value) for the state dict; load sets them back by name.
  virtual std::vector<std::pair<std::string, double>> hyperparameters() const = 0;
  virtual void set_hyperparameter(const std::string& name, double value) = 0;
};

template <typename Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// One parameter's state (momentum buffer, exp_avg, step, ...).
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const = 0;
  // Named tensors of this state ("exp_avg", "step" as a 0-dim float64 tensor); set_tensors takes them back.
  virtual std::vector<std::pair<std::string, Tensor>> tensors() const = 0;
  virtual void set_tensor(const std::string& name, const Tensor& value) = 0;
};

template <typename Derived>
class OptimizerCloneableParamState : public OptimizerParamState {
 public:
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& o)
      : params_(o.params_), options_(o.options_ ? o.options_->clone() : nullptr), initial_lr_(o.initial_lr_) {}
  OptimizerParamGroup& operator=(const OptimizerParamGroup& o) {
    params_ = o.params_;
    options_ = o.options_ ? o.options_->clone() : nullptr;
    initial_lr_ = o.initial_lr_;
    return *this;
  }
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  // PyTorch's group["initial_lr"]: the learning rate the first scheduler found (set once, by LRScheduler).
  const std::optional<double>& initial_lr() const { return initial_lr_; }
  void set_initial_lr(std::optional<double> lr) { initial_lr_ = lr; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  // Groups without options get a copy of `defaults`. A parameter in two groups is an error (PyTorch's).
  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient. The closure (re-evaluating the loss) is optional; its
  // loss is returned (undefined without one).
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  // The optimizer's name in traces and messages ("SGD").
  virtual const char* name() const = 0;

  void add_param_group(const OptimizerParamGroup& group);
  // set_to_none=true (PyTorch 2's default) drops each .grad; false zeroes it in place.
  void zero_grad(bool set_to_none = true);

  // All parameters, group by group.
  std::vector<Tensor> parameters() const;
  size_t size() const;  // number of parameters
  OptimizerOptions& defaults() { return *defaults_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  // Per-parameter state, keyed by the parameter's TensorImpl (created on its first step).
  std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>>& state() { return state_; }
  const std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>>& state() const { return state_; }

  StateDict state_dict() const;
  void load_state_dict(const StateDict& state_dict);

 protected:
  // An empty state of this optimizer's kind, for load_state_dict to fill.
  virtual std::unique_ptr<OptimizerParamState> make_param_state() const = 0;
  // step()'s closure, evaluated with grad mode on (PyTorch's `with torch.enable_grad(): loss = closure()`).
  static Tensor evaluate_closure(const LossClosure& closure);

  std::vector<OptimizerParamGroup> param_groups_;
  std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>> state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

// A 0-dim float64 tensor for scalar state ("step", hyperparameters), and back.
Tensor scalar_state(double value);
double scalar_value(const Tensor& t, const std::string& what);

}  // namespace gb::optim
