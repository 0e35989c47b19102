// glassbox/nn/init.h — gb::nn::init, PyTorch's torch.nn.init: in-place initializers with PyTorch's formulas and
// errors. Every one runs under NoGradGuard (parameters that require grad can be filled) and draws from gb's default
// generator, so gb::manual_seed(s) makes a model's initial weights reproducible. Each returns its tensor.
//
//   gb::nn::init::kaiming_uniform_(fc->weight, std::sqrt(5.0));   // Linear/Conv2d's default weight init
//   gb::nn::init::xavier_normal_(w, gb::nn::init::calculate_gain(gb::kTanh));
//   auto [fan_in, fan_out] = gb::nn::init::calculate_fan_in_and_fan_out(w);   // w (out, in, *kernel)
//
// Not here: orthogonal_, sparse_, dirac_.
#pragma once

#include <cstdint>
#include <tuple>

#include "glassbox/core/tensor.h"
#include "glassbox/nn/enum.h"

namespace gb::nn::init {

using NonlinearityType =
    EnumValue;  // "linear", "conv1d".."conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"
using FanModeType = EnumValue;  // "fan_in" or "fan_out"

// The recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 for tanh, sqrt(2) for relu,
// sqrt(2 / (1 + param^2)) for leaky_relu (param = negative slope, 0.01 by default), 3/4 for selu.
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (receptive field = prod(sizes[2:])).
std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);
// libtorch's spelling of the same function.
inline std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  return calculate_fan_in_and_fan_out(tensor);
}

Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor constant_(Tensor tensor, double value);
Tensor ones_(Tensor tensor);
Tensor zeros_(Tensor tensor);
Tensor eye_(Tensor matrix);  // 2-D only
// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
// U(-b, b) with b = gain(nonlinearity, a) * sqrt(3 / fan(mode)). A zero-element tensor is left as is.
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                        NonlinearityType nonlinearity = kLeakyReLU);
// N(0, std^2) with std = gain(nonlinearity, a) / sqrt(fan(mode)).
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                       NonlinearityType nonlinearity = kLeakyReLU);
// N(mean, std^2) truncated to [a, b], by inverse-CDF sampling (PyTorch's method, no rejection loop).
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2);

}  // namespace gb::nn::init
