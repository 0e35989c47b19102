// engine/autograd/function.cpp — the runtime side of custom Functions: IValue access, the context, and PyTorch's
// checks on what a custom backward returns.
#include "glassbox/autograd/function.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include "autograd/record.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/reduce.h"

namespace gb::autograd {

namespace {
template <typename T>
const T& get(const std::variant<std::monostate, double, int64_t, bool, std::string, Tensor, std::vector<int64_t>>& v,
             const char* want) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw Error(gb::detail::str_cat("IValue: expected ", want, " but the stored value is of another type (index ",
                                  v.index(), "); read it back with the accessor matching what forward stored"));
}
}  // namespace

double IValue::toDouble() const {
  if (auto* i = std::get_if<int64_t>(&v_)) return double(*i);
  return get<double>(v_, "a double");
}
int64_t IValue::toInt() const { return get<int64_t>(v_, "an int"); }
bool IValue::toBool() const { return get<bool>(v_, "a bool"); }
const std::string& IValue::toStringRef() const { return get<std::string>(v_, "a string"); }
const Tensor& IValue::toTensor() const { return get<Tensor>(v_, "a Tensor"); }
const std::vector<int64_t>& IValue::toIntVector() const { return get<std::vector<int64_t>>(v_, "an int list"); }

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

variable_list AutogradContext::get_saved_variables() const {
  GB_CHECK(!has_freed_buffers_,
           "Trying to backward through the graph a second time (or directly access saved tensors after they have "
           "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
           "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
           "you need to access saved tensors after calling backward.");
  return to_save_;
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const auto& t : outputs)
    if (t.defined()) non_differentiable_.push_back(t.unsafe_impl());
}

bool AutogradContext::needs_input_grad(size_t index) const {
  auto node = node_.lock();
  return node && node->should_compute_output(index);
}

namespace detail {

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  auto colon = out.rfind("::");
  return colon == std::string::npos ? out : out.substr(colon + 2);
}

variable_list validate_custom_outputs(const std::string& fn_name, variable_list grads, const edge_list& edges,
                                      const std::vector<std::vector<int64_t>>& input_sizes) {
  // Extra gradients after the last input are dropped when all are undefined, as libtorch does (a backward that
  // returns one slot per forward argument, tensors or not).
  if (grads.size() > edges.size() &&
      std::all_of(grads.begin() + std::ptrdiff_t(edges.size()), grads.end(), [](const Tensor& g) { return !g.defined(); }))
    grads.resize(edges.size());
  GB_CHECK(grads.size() == edges.size(), "function ", fn_name, " returned an incorrect number of gradients (expected ",
           edges.size(), ", got ", grads.size(),
           "); return one gradient per forward argument, gb::Tensor() for "
           "arguments without one");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!edges[i].is_valid()) {
      grads[i] = Tensor();
      continue;
    }
    if (!grads[i].defined()) continue;
    IntArrayRef want(input_sizes[i]);
    if (grads[i].sizes() == want) continue;
    bool reducible = grads[i].dim() >= int64_t(want.size());
    if (reducible) {
      int64_t lead = grads[i].dim() - int64_t(want.size());
      for (size_t d = 0; d < want.size(); ++d)
        if (want[d] != 1 && want[d] != grads[i].size(lead + int64_t(d))) reducible = false;
    }
    GB_CHECK(reducible, "Function ", fn_name, " returned an invalid gradient at index ", i, " - got ", grads[i].sizes(),
             " but expected shape compatible with ", want);
    grads[i] = sum_to(grads[i], want);
  }
  return grads;
}

void set_history_for_outputs(const std::shared_ptr<Node>& node, variable_list& outputs,
                             const std::vector<const TensorImpl*>& non_differentiable) {
  const Tensor* first_defined = nullptr;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& o = outputs[i];
    if (!o.defined()) continue;
    if (!first_defined) first_defined = &o;
    bool nondiff = false;
    for (const TensorImpl* p : non_differentiable)
      if (p == o.unsafe_impl()) nondiff = true;
    if (nondiff || !o.is_floating_point()) continue;
    // forward returned one of its inputs (or something with history): give the output its own handle
    if (o.requires_grad()) o = gb::detail::shallow_alias(o);
    set_history(o, node, uint32_t(i));
  }
  // the node is not made by record(): link it to the Function's op (run_as_op) here
  link_to_op(*node, first_defined);
}

Tensor zeros_for(const std::vector<int64_t>& sizes, ScalarType dtype, Device device) {
  return zeros(sizes, TensorOptions().dtype(dtype).device(device));
}

void run_as_op(const char* name, const Tensor* const* inputs, size_t n_inputs, const variable_list& outputs,
               void (*body)(void*), void* arg) {
  static const Tensor none;
  auto in = [&](size_t i) -> const Tensor& { return i < n_inputs ? *inputs[i] : none; };
  gb::detail::OpScope op_scope(name, {in(0), in(1), in(2), in(3), in(4), in(5)});
  body(arg);
  for (const Tensor& o : outputs)
    if (o.defined()) {
      op_scope.set_output(o);
      break;
    }
}

}  // namespace detail
}  // namespace gb::autograd
