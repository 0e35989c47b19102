// engine/nn/init.cpp — gb::nn::init: PyTorch's torch.nn.init formulas over the tensor's in-place random fills.
#include "glassbox/nn/init.h"

#include <cmath>
#include <vector>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/error.h"
#include "glassbox/core/generator.h"
#include "glassbox/ops/factory.h"

namespace gb::nn::init {
namespace {

int64_t fan_of(const Tensor& t, const FanModeType& mode) {
  const std::string& m = mode.name();
  GB_CHECK(m == "fan_in" || m == "fan_out", "Mode ", m, " not supported, please use one of fan_in, fan_out");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return m == "fan_in" ? fan_in : fan_out;
}

// erf^-1 on (-1, 1): Giles' single-precision approximation refined by two Newton steps on std::erf.
double erfinv(double y) {
  if (y <= -1) return -INFINITY;
  if (y >= 1) return INFINITY;
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      x = c + x * w;
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      x = c + x * w;
  }
  x *= y;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}

}  // namespace

double calculate_gain(NonlinearityType nonlinearity, double param) {
  const std::string& n = nonlinearity.name();
  if (n == "linear" || n == "conv1d" || n == "conv2d" || n == "conv3d" || n == "conv_transpose1d" ||
      n == "conv_transpose2d" || n == "conv_transpose3d" || n == "sigmoid")
    return 1.0;
  if (n == "tanh") return 5.0 / 3;
  if (n == "relu") return std::sqrt(2.0);
  if (n == "leaky_relu") return std::sqrt(2.0 / (1 + param * param));
  if (n == "selu") return 3.0 / 4;
  GB_CHECK(false, "Unsupported nonlinearity ", n,
           " (use linear, conv1d, conv2d, conv3d, conv_transpose1d/2d/3d, sigmoid, tanh, relu, leaky_relu or selu)");
}

std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  GB_CHECK(tensor.dim() >= 2,
           "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got a tensor of size ",
           tensor.sizes(), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  NoGradGuard guard;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard guard;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, double value) {
  NoGradGuard guard;
  tensor.fill_(value);
  return tensor;
}

Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1.0); }
Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0.0); }

Tensor eye_(Tensor matrix) {
  GB_CHECK(matrix.dim() == 2, "Only tensors with 2 dimensions are supported (got ", matrix.dim(), ")");
  NoGradGuard guard;
  matrix.copy_(gb::eye(matrix.size(0), matrix.size(1), matrix.options()));
  return matrix;
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / double(fan_in + fan_out));
  double a = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -a, a);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return normal_(std::move(tensor), 0, gain * std::sqrt(2.0 / double(fan_in + fan_out)));
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  if (tensor.numel() == 0) return tensor;  // PyTorch: "Initializing zero-element tensors is a no-op"
  double std = calculate_gain(nonlinearity, a) / std::sqrt(double(fan_of(tensor, mode)));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  if (tensor.numel() == 0) return tensor;
  double std = calculate_gain(nonlinearity, a) / std::sqrt(double(fan_of(tensor, mode)));
  return normal_(std::move(tensor), 0, std);
}

Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  GB_CHECK(a < b, "trunc_normal_: a must be below b (got a=", a, ", b=", b, ")");
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  // Uniform in [2l-1, 2u-1], then erfinv, scale and shift: the normal's inverse CDF on [a, b].
  Tensor values = gb::empty(tensor.sizes(), kFloat64);
  double* p = values.data_ptr<double>();
  Generator& gen = default_generator();
  for (int64_t i = 0; i < values.numel(); ++i) {
    double y = (2 * l - 1) + (2 * u - 2 * l) * gen.uniform_double();
    double x = erfinv(y) * std * std::sqrt(2.0) + mean;
    p[i] = std::min(std::max(x, a), b);
  }
  NoGradGuard guard;
  tensor.copy_(values);
  return tensor;
}

}  // namespace gb::nn::init
