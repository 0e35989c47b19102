// TEMPORARY (removed by the core work): throwing placeholders so the library links while these are written.
#include "glassbox/glassbox.h"
#define GB_PENDING(name) throw gb::Error(#name ": not implemented yet")
namespace gb {
Tensor& Tensor::uniform_(double, double) { GB_PENDING(uniform_); }
Tensor& Tensor::normal_(double, double) { GB_PENDING(normal_); }
Tensor& Tensor::bernoulli_(double) { GB_PENDING(bernoulli_); }
std::ostream& operator<<(std::ostream& os, const Tensor&) { GB_PENDING(print); }
const char* version() { return GLASSBOX_VERSION; }
namespace autograd {
double IValue::toDouble() const { GB_PENDING(IValue); }
int64_t IValue::toInt() const { GB_PENDING(IValue); }
bool IValue::toBool() const { GB_PENDING(IValue); }
const std::string& IValue::toStringRef() const { GB_PENDING(IValue); }
const Tensor& IValue::toTensor() const { GB_PENDING(IValue); }
const std::vector<int64_t>& IValue::toIntVector() const { GB_PENDING(IValue); }
void AutogradContext::save_for_backward(variable_list) { GB_PENDING(ctx); }
variable_list AutogradContext::get_saved_variables() const { GB_PENDING(ctx); }
void AutogradContext::mark_non_differentiable(const variable_list&) { GB_PENDING(ctx); }
bool AutogradContext::needs_input_grad(size_t) const { GB_PENDING(ctx); }
bool gradcheck(const GradcheckFn&, const variable_list&, const GradcheckOptions&) { GB_PENDING(gradcheck); }
bool gradgradcheck(const GradcheckFn&, const variable_list&, const GradcheckOptions&) { GB_PENDING(gradgradcheck); }
}  // namespace autograd
}  // namespace gb
