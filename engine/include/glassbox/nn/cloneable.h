// glassbox/nn/cloneable.h — deep copies of modules: libtorch's Cloneable<Derived> for modules of your own, and the
// base every built-in module clones through.
//
//   struct NetImpl : gb::nn::Cloneable<NetImpl> {
//     NetImpl() { reset(); }
//     void reset() override { fc = register_module("fc", gb::nn::Linear(4, 2)); }  // everything registered here
//     gb::Tensor forward(gb::Tensor x) { return fc(x); }
//     gb::nn::Linear fc{nullptr};
//   };
//   GB_MODULE(Net);
//   Net target = std::dynamic_pointer_cast<NetImpl>(net->clone());   // or net->clone(gb::Device("cuda:0"))
//
// Cloneable's clone, as libtorch's: copy-construct Derived (plain members such as options and counters are
// copied; the Module part starts with nothing registered), call reset() to register fresh parameters, buffers and
// children, then copy every value over (Module::copy_state_from, which checks the names match). A built-in module
// (detail::Builtin) is rebuilt from its options instead, then gets the values the same way.
#pragma once

#include <memory>
#include <optional>

#include "glassbox/core/device.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/nn/module.h"

namespace gb::nn {

template <typename Derived>
class Cloneable : public Module {
 public:
  using Module::Module;

  // Registers every parameter, buffer and child (called by your constructor, and by clone() on the copy).
  virtual void reset() = 0;

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    NoGradGuard no_grad;
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->reset();
    copy->copy_state_from(*this, device);
    return copy;
  }
};

namespace detail {

// The base of each built-in module type Derived (over Base: Module, or a shared base such as RNNBase): clone()
// constructs a new Derived from the original's options (or by default), then copies the state over.
template <typename Derived, typename Base = Module>
class Builtin : public Base {
 public:
  using Base::Base;

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    NoGradGuard no_grad;
    const auto& self = static_cast<const Derived&>(*this);
    std::shared_ptr<Derived> copy;
    if constexpr (requires { std::make_shared<Derived>(self.options); })
      copy = std::make_shared<Derived>(self.options);
    else
      copy = std::make_shared<Derived>();
    copy->copy_state_from(self, device);
    return copy;
  }
};

}  // namespace detail
}  // namespace gb::nn
