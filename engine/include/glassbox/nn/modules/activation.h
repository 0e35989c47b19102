// glassbox/nn/modules/activation.h — elementwise activations as modules (ReLU, GELU, SiLU, Tanh, Sigmoid, LeakyReLU,
// ELU, Hardtanh) and Softmax / LogSoftmax along a dim.
//
//   gb::nn::Sequential mlp(gb::nn::Linear(4, 8), gb::nn::GELU(gb::nn::GELUOptions().approximate("tanh")),
//                          gb::nn::Linear(8, 2), gb::nn::Softmax(1));
//
// Not here: LeakyReLU's, ELU's and Hardtanh's inplace (the functionals refuse it too).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/functional.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  GB_ARG(bool, inplace);
};
class ReLUImpl : public detail::Builtin<ReLUImpl> {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : options(options) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;
  ReLUOptions options;
};
GB_MODULE(ReLU);

struct GELUOptions {
  GB_ARG(std::string, approximate) = "none";  // "none" (erf) or "tanh"
};
class GELUImpl : public detail::Builtin<GELUImpl> {
 public:
  explicit GELUImpl(const GELUOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  GELUOptions options;
};
GB_MODULE(GELU);

class SiLUImpl : public detail::Builtin<SiLUImpl> {
 public:
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
GB_MODULE(SiLU);

class TanhImpl : public detail::Builtin<TanhImpl> {
 public:
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
GB_MODULE(Tanh);

class SigmoidImpl : public detail::Builtin<SigmoidImpl> {
 public:
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
GB_MODULE(Sigmoid);

struct LeakyReLUOptions {
  GB_ARG(double, negative_slope) = 0.01;
};
class LeakyReLUImpl : public detail::Builtin<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  LeakyReLUOptions options;
};
GB_MODULE(LeakyReLU);

using ELUOptions = functional::ELUFuncOptions;  // the same fields (libtorch aliases them the other way round)
class ELUImpl : public detail::Builtin<ELUImpl> {
 public:
  explicit ELUImpl(const ELUOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  ELUOptions options;
};
GB_MODULE(ELU);

using HardtanhOptions = functional::HardtanhFuncOptions;
class HardtanhImpl : public detail::Builtin<HardtanhImpl> {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  HardtanhOptions options;
};
GB_MODULE(Hardtanh);

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  GB_ARG(int64_t, dim);
};
class SoftmaxImpl : public detail::Builtin<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(int64_t dim) : SoftmaxImpl(SoftmaxOptions(dim)) {}
  explicit SoftmaxImpl(const SoftmaxOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  SoftmaxOptions options;
};
GB_MODULE(Softmax);

using LogSoftmaxOptions = SoftmaxOptions;
class LogSoftmaxImpl : public detail::Builtin<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : LogSoftmaxImpl(LogSoftmaxOptions(dim)) {}
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  LogSoftmaxOptions options;
};
GB_MODULE(LogSoftmax);

}  // namespace gb::nn
