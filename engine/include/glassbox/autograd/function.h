// glassbox/autograd/function.h — custom differentiable ops (torch::autograd::Function<T>).
//
//   struct ScaleBy : gb::autograd::Function<ScaleBy> {
//     static gb::Tensor forward(gb::autograd::AutogradContext* ctx, gb::Tensor x, double k) {
//       ctx->save_for_backward({x});
//       ctx->saved_data["k"] = k;
//       return x * k;
//     }
//     static gb::variable_list backward(gb::autograd::AutogradContext* ctx, gb::variable_list grad_outputs) {
//       double k = ctx->saved_data["k"].toDouble();
//       return {grad_outputs[0] * k, gb::Tensor()};   // one gradient per forward argument; undefined = none
//     }
//   };
//   auto y = ScaleBy::apply(x, 3.0);
//
// forward runs with grad recording off. backward gets one gradient per forward output (zeros for outputs that got
// none, unless set_materialize_grads(false)); a gradient whose shape can be summed down to the input's is
// reduced, any other mismatch is an error naming the function, the index and both shapes.
//
// apply is an op like the built-in ones: it runs forward and records the node inside an op scope named after the
// class ("ScaleBy": a span of kind op in a trace, sharing its seq with the ScaleByBackward node).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <variant>
#include <vector>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/autograd/node.h"
#include "glassbox/core/tensor.h"

namespace gb::autograd {

// A small IValue: the values a forward may stash in ctx->saved_data for backward.
class IValue {
 public:
  IValue() = default;
  IValue(double v) : v_(v) {}                           // NOLINT
  IValue(int64_t v) : v_(v) {}                          // NOLINT
  IValue(int v) : v_(int64_t(v)) {}                     // NOLINT
  IValue(bool v) : v_(v) {}                             // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}           // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}         // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}                // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}  // NOLINT

  double toDouble() const;
  int64_t toInt() const;
  bool toBool() const;
  const std::string& toStringRef() const;
  const Tensor& toTensor() const;
  const std::vector<int64_t>& toIntVector() const;
  bool isNone() const { return v_.index() == 0; }

 private:
  std::variant<std::monostate, double, int64_t, bool, std::string, Tensor, std::vector<int64_t>> v_;
};

class AutogradContext {
 public:
  void save_for_backward(variable_list to_save);
  variable_list get_saved_variables() const;  // libtorch's name
  variable_list saved_tensors() const { return get_saved_variables(); }
  void mark_non_differentiable(const variable_list& outputs);
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  bool needs_input_grad(size_t index) const;
  std::map<std::string, IValue> saved_data;

 private:
  template <class T>
  friend struct CppNode;
  template <class T>
  friend struct Function;
  variable_list to_save_;
  std::vector<SavedVariable> saved_;
  std::vector<const TensorImpl*> non_differentiable_;
  bool materialize_grads_ = true;
  bool has_freed_buffers_ = false;
  std::weak_ptr<Node> node_;
};

namespace detail {
std::string demangle(const char* name);
// Runs a custom function's backward result through PyTorch's checks (count, shape, dtype).
variable_list validate_custom_outputs(const std::string& fn_name, variable_list grads, const edge_list& edges,
                                      const std::vector<std::vector<int64_t>>& input_sizes);
// Attaches the outputs to node (their grad_fn) and links node to the op running (run_as_op's).
void set_history_for_outputs(const std::shared_ptr<Node>& node, variable_list& outputs,
                             const std::vector<const TensorImpl*>& non_differentiable);
Tensor zeros_for(const std::vector<int64_t>& sizes, ScalarType dtype, Device device);

// Runs body(arg) as the op `name`: inside an op scope (the engine's detail::OpScope: allocation stamps, the trace's
// op span). inputs: the op's tensor arguments (the first six are recorded); outputs, filled by body: its result.
void run_as_op(const char* name, const Tensor* const* inputs, size_t n_inputs, const variable_list& outputs,
               void (*body)(void*), void* arg);

// The op name of Function<T>: T's class name, one string per type for the whole process (op names key caches by
// address).
template <class T>
const char* function_op_name() {
  static const std::string name = demangle(typeid(T).name());
  return name.c_str();
}
}  // namespace detail

template <class T>
struct CppNode final : Node {
  CppNode() : Node({}, 0) {}
  std::string name() const override { return detail::demangle(typeid(T).name()) + "Backward"; }
  variable_list apply(variable_list&& grads) override {
    if (ctx_.materialize_grads_) {
      for (size_t i = 0; i < grads.size(); ++i)
        if (!grads[i].defined()) grads[i] = detail::zeros_for(output_sizes_[i], output_dtypes_[i], output_devices_[i]);
    }
    auto self = shared_from_this();
    ctx_.to_save_.clear();
    for (auto& s : ctx_.saved_) ctx_.to_save_.push_back(s.unpack(self));
    variable_list out = T::backward(&ctx_, std::move(grads));
    ctx_.to_save_.clear();
    return detail::validate_custom_outputs(name(), std::move(out), next_edges_, input_sizes_);
  }
  void release_variables() override {
    for (auto& s : ctx_.saved_) s.reset_data();
    ctx_.has_freed_buffers_ = true;
  }

  AutogradContext ctx_;
  std::vector<std::vector<int64_t>> input_sizes_;
  std::vector<std::vector<int64_t>> output_sizes_;
  std::vector<ScalarType> output_dtypes_;
  std::vector<Device> output_devices_;
  void set_num_inputs(uint32_t n) { num_inputs_ = n; }
};

template <class T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    bool any_grad = false;
    edge_list edges;
    std::vector<std::vector<int64_t>> in_sizes;
    const Tensor* inputs[6];
    size_t n_inputs = 0;
    auto visit = [&](const auto& a) {
      using A = std::decay_t<decltype(a)>;
      if constexpr (std::is_same_v<A, Tensor>) {
        Edge e = a.defined() ? gradient_edge(a) : Edge{};
        any_grad = any_grad || e.is_valid();
        edges.push_back(std::move(e));
        in_sizes.push_back(a.defined() ? a.sizes().vec() : std::vector<int64_t>{});
        if (n_inputs < 6) inputs[n_inputs++] = &a;
      } else {
        edges.push_back(Edge{});
        in_sizes.emplace_back();
      }
    };
    (visit(args), ...);
    any_grad = any_grad && GradMode::is_enabled();

    std::shared_ptr<CppNode<T>> node;
    using Ret = decltype(T::forward(&node->ctx_, std::forward<Args>(args)...));
    Ret result;
    variable_list outputs;
    // the op: forward and the node's recording, inside the op scope named after T
    auto body = [&] {
      node = std::make_shared<CppNode<T>>();
      node->ctx_.node_ = node;
      {
        AutoGradMode no_grad(false);
        result = T::forward(&node->ctx_, std::forward<Args>(args)...);
      }
      if constexpr (std::is_same_v<Ret, Tensor>)
        outputs = {result};
      else
        outputs = result;

      if (any_grad) {
        node->mutable_next_edges() = std::move(edges);
        node->input_sizes_ = std::move(in_sizes);
        node->set_num_inputs(uint32_t(outputs.size()));
        for (auto& o : outputs) {
          node->output_sizes_.push_back(o.defined() ? o.sizes().vec() : std::vector<int64_t>{});
          node->output_dtypes_.push_back(o.defined() ? o.scalar_type() : kFloat);
          node->output_devices_.push_back(o.defined() ? o.device() : Device(kCPU));
        }
        detail::set_history_for_outputs(node, outputs, node->ctx_.non_differentiable_);
        for (const auto& t : node->ctx_.to_save_) {
          bool is_output = false;
          for (const auto& o : outputs)
            if (t.defined() && o.defined() && t.storage() == o.storage() && t.sizes() == o.sizes() &&
                t.strides() == o.strides() && t.storage_offset() == o.storage_offset())
              is_output = true;
          node->ctx_.saved_.emplace_back(is_output ? outputs_match(outputs, t) : t, is_output);
        }
      } else {
        for (const auto& t : node->ctx_.to_save_) node->ctx_.saved_.emplace_back(t, false);
      }
      node->ctx_.to_save_.clear();
    };
    detail::run_as_op(
        detail::function_op_name<T>(), inputs, n_inputs, outputs, [](void* b) { (*static_cast<decltype(body)*>(b))(); },
        &body);
    if constexpr (std::is_same_v<Ret, Tensor>)
      return outputs[0];
    else
      return outputs;
  }

 private:
  static const Tensor& outputs_match(const variable_list& outputs, const Tensor& t) {
    for (const auto& o : outputs)
      if (o.defined() && o.storage() == t.storage() && o.sizes() == t.sizes() && o.strides() == t.strides() &&
          o.storage_offset() == t.storage_offset())
        return o;
    return t;
  }
};

}  // namespace gb::autograd
