// engine/nn/activation.cpp — the activation modules over the pointwise ops.
#include "glassbox/nn/modules/activation.h"

#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"

namespace gb::nn {

Tensor ReLUImpl::forward(Tensor input) {
  detail::ModuleCallScope scope(*this);
  if (options.inplace()) return input.relu_();
  return gb::relu(input);
}
void ReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "ReLU(" << (options.inplace() ? "inplace=true" : "") << ")";
}

GELUImpl::GELUImpl(const GELUOptions& options_) : options(options_) {
  GB_CHECK(options.approximate() == "none" || options.approximate() == "tanh",
           "approximate argument must be either none or tanh (got \"", options.approximate(), "\")");
}
Tensor GELUImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::gelu(input, options.approximate());
}
void GELUImpl::pretty_print(std::ostream& stream) const {
  stream << "GELU(";
  if (options.approximate() != "none") stream << "approximate='" << options.approximate() << "'";
  stream << ")";
}

Tensor SiLUImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::silu(input);
}
void SiLUImpl::pretty_print(std::ostream& stream) const { stream << "SiLU()"; }

Tensor TanhImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::tanh(input);
}
void TanhImpl::pretty_print(std::ostream& stream) const { stream << "Tanh()"; }

Tensor SigmoidImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::sigmoid(input);
}
void SigmoidImpl::pretty_print(std::ostream& stream) const { stream << "Sigmoid()"; }

Tensor LeakyReLUImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::leaky_relu(input, options.negative_slope());
}
void LeakyReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "LeakyReLU(negative_slope=" << options.negative_slope() << ")";
}

ELUImpl::ELUImpl(const ELUOptions& options) : options(options) {
  GB_CHECK(!options.inplace(), "ELU: inplace=true is not supported; leave it false (the result is a new tensor)");
}
Tensor ELUImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::elu(input, options.alpha());
}
void ELUImpl::pretty_print(std::ostream& stream) const { stream << "ELU(alpha=" << options.alpha() << ")"; }

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options) : options(options) {
  GB_CHECK(!options.inplace(), "Hardtanh: inplace=true is not supported; leave it false (the result is a new tensor)");
  GB_CHECK(options.max_val() > options.min_val(), "Hardtanh: max_val (", options.max_val(),
           ") must be greater than min_val (", options.min_val(), ")");
}
Tensor HardtanhImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::hardtanh(input, options.min_val(), options.max_val());
}
void HardtanhImpl::pretty_print(std::ostream& stream) const {
  stream << "Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val() << ")";
}

Tensor SoftmaxImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::softmax(input, options.dim());
}
void SoftmaxImpl::pretty_print(std::ostream& stream) const { stream << "Softmax(dim=" << options.dim() << ")"; }

Tensor LogSoftmaxImpl::forward(const Tensor& input) {
  detail::ModuleCallScope scope(*this);
  return gb::log_softmax(input, options.dim());
}
void LogSoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "LogSoftmax(dim=" << options.dim() << ")";
}

}  // namespace gb::nn
