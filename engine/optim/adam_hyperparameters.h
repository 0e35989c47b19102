// engine/optim/adam_hyperparameters.h — internal: the state-dict names of the hyperparameters Adam and AdamW share
// (lr, beta1, beta2, eps, weight_decay, amsgrad, maximize), read and written through the options' public setters.
#pragma once

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "glassbox/core/error.h"

namespace gb::optim::detail {

template <typename Options>
std::vector<std::pair<std::string, double>> adam_hyperparameters(const Options& o) {
  return {{"lr", o.lr()},
          {"beta1", std::get<0>(o.betas())},
          {"beta2", std::get<1>(o.betas())},
          {"eps", o.eps()},
          {"weight_decay", o.weight_decay()},
          {"amsgrad", o.amsgrad() ? 1.0 : 0.0},
          {"maximize", o.maximize() ? 1.0 : 0.0}};
}

template <typename Options>
void set_adam_hyperparameter(Options& o, const char* optimizer, const std::string& name, double value) {
  auto betas = o.betas();
  if (name == "lr") o.lr(value);
  else if (name == "beta1") o.betas(std::make_tuple(value, std::get<1>(betas)));
  else if (name == "beta2") o.betas(std::make_tuple(std::get<0>(betas), value));
  else if (name == "eps") o.eps(value);
  else if (name == "weight_decay") o.weight_decay(value);
  else if (name == "amsgrad") o.amsgrad(value != 0);
  else if (name == "maximize") o.maximize(value != 0);
  else
    throw Error(std::string(optimizer) + " has no hyperparameter \"" + name +
                "\" (it has lr, beta1, beta2, eps, weight_decay, amsgrad, maximize)");
}

}  // namespace gb::optim::detail
