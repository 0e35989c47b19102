// glassbox/nn/modules/functional.h — Functional: a function as a module (libtorch's torch::nn::Functional), so a
// Sequential can hold gb::relu, or gb::max_pool2d with its arguments after the input bound:
//
//   gb::nn::Sequential net(gb::nn::Conv2d(gb::nn::Conv2dOptions(3, 8, 3)), gb::nn::Functional(gb::relu),
//                          gb::nn::Functional(gb::max_pool2d, 2, 2, 0, 1, false), gb::nn::Flatten());
//
// Each call is a module call like any other (its hooks run, and a trace shows a span of module "Functional"). It
// has no parameters, and the function is called as given (the bound arguments are copies made at construction).
#pragma once

#include <functional>
#include <ostream>
#include <type_traits>
#include <utility>

#include "glassbox/nn/module.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function);
  // f(input, args...): the arguments after the input, bound now.
  template <typename SomeFunction, typename... Args, typename = std::enable_if_t<(sizeof...(Args) > 0)>>
  explicit FunctionalImpl(SomeFunction original_function, Args&&... args)
      : FunctionalImpl(Function(std::bind(original_function, std::placeholders::_1, std::forward<Args>(args)...))) {}

  Tensor forward(Tensor input);
  Tensor operator()(Tensor input) { return forward(std::move(input)); }
  void pretty_print(std::ostream& stream) const override;
  // Another Functional calling the same function (with the same bound arguments).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

 private:
  Function function_;
};
GB_MODULE(Functional);

}  // namespace gb::nn
