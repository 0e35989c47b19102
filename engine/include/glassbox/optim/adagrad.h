// glassbox/optim/adagrad.h — Adagrad (torch.optim.Adagrad / torch::optim::Adagrad, PyTorch 1.13's single-tensor
// formulas): learning-rate decay, L2 weight decay, an initial accumulator value, maximize.
//
//   gb::optim::Adagrad opt(net->parameters(), gb::optim::AdagradOptions(1e-2).lr_decay(1e-4));
//
// Per parameter p with gradient g (parameters without .grad are skipped):
//   g = maximize ? -g : g;  step += 1;  g += weight_decay * p;  clr = lr / (1 + (step - 1) * lr_decay)
//   sum += g * g;  p -= clr * g / (sqrt(sum) + eps)
// State: "step", "sum" (initial_accumulator_value to start, as optimizer_state memory).
// Hyperparameters in the state dict: lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize.
#pragma once

#include <vector>

#include "glassbox/nn/options.h"
#include "glassbox/optim/optimizer.h"

namespace gb::optim {

struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2);  // NOLINT(google-explicit-constructor)
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::pair<std::string, double>> hyperparameters() const override;
  void set_hyperparameter(const std::string& name, double value) override;

  GB_ARG(double, lr);
  GB_ARG(double, lr_decay) = 0;
  GB_ARG(double, weight_decay) = 0;
  GB_ARG(double, initial_accumulator_value) = 0;
  GB_ARG(double, eps) = 1e-10;
  GB_ARG(bool, maximize) = false;
};

struct AdagradParamState : public OptimizerCloneableParamState<AdagradParamState> {
  std::vector<std::pair<std::string, Tensor>> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;

  GB_ARG(double, step) = 0;
  GB_ARG(Tensor, sum);
};

class Adagrad : public Optimizer {
 public:
  Adagrad(const std::vector<OptimizerParamGroup>& param_groups, AdagradOptions defaults = {});
  Adagrad(const std::vector<Tensor>& params, AdagradOptions defaults = {})
      : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(params)}, std::move(defaults)) {}

  Tensor step(LossClosure closure = nullptr) override;
  const char* name() const override { return "Adagrad"; }

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdagradParamState>();
  }
};

}  // namespace gb::optim
