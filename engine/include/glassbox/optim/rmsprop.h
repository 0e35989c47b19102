// glassbox/optim/rmsprop.h — RMSprop (torch.optim.RMSprop, PyTorch 1.13's single-tensor formulas): centered,
// momentum, L2 weight decay, maximize.
//
//   gb::optim::RMSprop opt(net->parameters(), gb::optim::RMSpropOptions(1e-2).momentum(0.9).centered(true));
//
// Per parameter p with gradient g (parameters without .grad are skipped):
//   g = maximize ? -g : g;  g += weight_decay * p;  s = alpha * s + (1 - alpha) * g * g
//   centered: a = alpha * a + (1 - alpha) * g;  avg = sqrt(s - a * a) + eps   else avg = sqrt(s) + eps
//   momentum > 0: buf = momentum * buf + g / avg;  p -= lr * buf             else p -= lr * g / avg
// State: "step", "square_avg", "momentum_buffer" (momentum > 0), "grad_avg" (centered), as optimizer_state memory.
// Hyperparameters in the state dict: lr, alpha, eps, weight_decay, momentum, centered, maximize.
#pragma once

#include <vector>

#include "glassbox/nn/options.h"
#include "glassbox/optim/optimizer.h"

namespace gb::optim {

struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2);  // NOLINT(google-explicit-constructor)
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::pair<std::string, double>> hyperparameters() const override;
  void set_hyperparameter(const std::string& name, double value) override;

  GB_ARG(double, lr);
  GB_ARG(double, alpha) = 0.99;
  GB_ARG(double, eps) = 1e-8;
  GB_ARG(double, weight_decay) = 0;
  GB_ARG(double, momentum) = 0;
  GB_ARG(bool, centered) = false;
  GB_ARG(bool, maximize) = false;
};

struct RMSpropParamState : public OptimizerCloneableParamState<RMSpropParamState> {
  std::vector<std::pair<std::string, Tensor>> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;

  GB_ARG(double, step) = 0;
  GB_ARG(Tensor, square_avg);
  GB_ARG(Tensor, momentum_buffer);
  GB_ARG(Tensor, grad_avg);
};

class RMSprop : public Optimizer {
 public:
  RMSprop(const std::vector<OptimizerParamGroup>& param_groups, RMSpropOptions defaults = {});
  RMSprop(const std::vector<Tensor>& params, RMSpropOptions defaults = {})
      : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(params)}, std::move(defaults)) {}

  Tensor step(LossClosure closure = nullptr) override;
  const char* name() const override { return "RMSprop"; }

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<RMSpropParamState>();
  }
};

}  // namespace gb::optim
