// glassbox/optim/sgd.h — stochastic gradient descent (torch.optim.SGD, PyTorch 1.13's single-tensor formulas):
// momentum, dampening, Nesterov, L2 weight decay, maximize.
//
//   gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g (parameters without .grad are skipped):
//   g = maximize ? -g : g;  g += weight_decay * p;
//   momentum: buf = g (first step) | buf = momentum * buf + (1 - dampening) * g
//             g = nesterov ? g + momentum * buf : buf
//   p -= lr * g
// State: "momentum_buffer" (only with momentum != 0), created as optimizer_state memory.
#pragma once

#include <vector>

#include "glassbox/nn/options.h"
#include "glassbox/optim/optimizer.h"

namespace gb::optim {

struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr);  // NOLINT(google-explicit-constructor): SGD(params, 0.1) as in libtorch
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // lr, momentum, dampening, weight_decay, nesterov, maximize (bools as 0/1).
  std::vector<std::pair<std::string, double>> hyperparameters() const override;
  void set_hyperparameter(const std::string& name, double value) override;

  GB_ARG(double, lr);
  GB_ARG(double, momentum) = 0;
  GB_ARG(double, dampening) = 0;
  GB_ARG(double, weight_decay) = 0;
  GB_ARG(bool, nesterov) = false;
  GB_ARG(bool, maximize) = false;
};

struct SGDParamState : public OptimizerCloneableParamState<SGDParamState> {
  std::vector<std::pair<std::string, Tensor>> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;

  GB_ARG(Tensor, momentum_buffer);
};

class SGD : public Optimizer {
 public:
  SGD(const std::vector<OptimizerParamGroup>& param_groups, SGDOptions defaults);
  SGD(const std::vector<Tensor>& params, SGDOptions defaults)
      : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(params)}, std::move(defaults)) {}

  Tensor step(LossClosure closure = nullptr) override;
  const char* name() const override { return "SGD"; }

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override { return std::make_unique<SGDParamState>(); }

 private:
  bool step_fused(const Tensor& p, const SGDOptions& o);
};

}  // namespace gb::optim
