// engine/nn/clip_grad.cpp — clip_grad_norm_ and clip_grad_value_, PyTorch 1.13's formulas (the clip coefficient
// as Python computes `max_norm / (total + 1e-6)`: a reciprocal times max_norm).
#include "glassbox/nn/utils/clip_grad.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"

namespace gb::nn::utils {

namespace {
// How Python prints a float: 2.0, inf, 1.5, 1e-06.
std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e16) return std::to_string(int64_t(v)) + ".0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::vector<Tensor> grads_of(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const auto& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  return grads;
}
}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads = grads_of(parameters);
  if (grads.empty()) return scalar_tensor(0.);
  const Device device = grads[0].device();
  Tensor total;
  std::vector<Tensor> norms;
  if (std::isinf(norm_type) && norm_type > 0) {
    for (const auto& g : grads) norms.push_back(g.detach().abs().max().to(device));
    total = norms.size() == 1 ? norms[0] : stack(norms).max();
  } else {
    for (const auto& g : grads) norms.push_back(norm(g.detach(), norm_type).to(device));
    total = norm(stack(norms), norm_type);
  }
  if (error_if_nonfinite && !total.isfinite().item<bool>())
    throw Error("The total norm of order " + python_float(norm_type) +
                " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error "
                "and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  Tensor clip_coef = (total + 1e-6).reciprocal() * max_norm;
  Tensor clip_coef_clamped = clip_coef.clamp(std::nullopt, 1.0);
  for (auto& g : grads) {
    Tensor d = g.detach();
    d.mul_(clip_coef_clamped.to(g.device()));
  }
  return total;
}

Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (auto& g : grads_of(parameters)) {
    Tensor d = g.detach();
    d.clamp_(-clip_value, clip_value);
  }
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace gb::nn::utils
