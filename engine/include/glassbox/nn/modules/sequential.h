// glassbox/nn/modules/sequential.h — AnyModule (a type-erased Tensor -> Tensor module) and Sequential.
//
//   gb::nn::Sequential net(gb::nn::Linear(784, 128), gb::nn::ReLU(), gb::nn::Linear(128, 10));
//   auto y = net->forward(x);          // each child called as module(x): its hooks run, as in PyTorch
//   net->push_back("head", gb::nn::Linear(10, 2));
//   gb::nn::Sequential named({{"fc", gb::nn::Linear(4, 8)}, {"act", gb::nn::ReLU()}});
//
// Children are named "0", "1", ... unless named; named_parameters() reads "0.weight", "head.bias" as PyTorch's.
// Every child must take one Tensor and return one Tensor (a module with another signature belongs in a custom
// Module's forward).
#pragma once

#include <functional>
#include <ostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "glassbox/nn/module.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

class AnyModule {
 public:
  AnyModule() = default;
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, M>>>
  AnyModule(std::shared_ptr<M> m)  // NOLINT
      : ptr_(m),
        call_([raw = m.get()](const Tensor& x) { return Tensor(detail::call_module(*raw, x)); }),
        clone_([raw = m.get()](const std::optional<Device>& device) {
          auto copy = std::dynamic_pointer_cast<M>(raw->clone(device));
          GB_CHECK(copy != nullptr, "AnyModule::clone: ", raw->name(), "::clone() returned another type");
          return AnyModule(std::move(copy));
        }) {}
  template <typename M>
  AnyModule(const ModuleHolder<M>& h) : AnyModule(h.ptr()) {}  // NOLINT
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, M>>>
  AnyModule(M&& m) : AnyModule(std::make_shared<M>(std::forward<M>(m))) {}  // NOLINT

  // module(x): hooks, the module span, then forward.
  Tensor forward(const Tensor& x) const {
    GB_CHECK(call_ != nullptr, "AnyModule: calling an empty module (construct it from a module first)");
    return call_(x);
  }
  const std::shared_ptr<Module>& ptr() const { return ptr_; }
  bool is_empty() const { return ptr_ == nullptr; }
  // An AnyModule over a clone of the module (Module::clone), of the same type.
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const {
    GB_CHECK(clone_ != nullptr, "AnyModule::clone: the AnyModule is empty");
    return clone_(device);
  }
  template <typename T>
  T* as() const { return dynamic_cast<T*>(ptr_.get()); }

 private:
  std::shared_ptr<Module> ptr_;
  std::function<Tensor(const Tensor&)> call_;
  std::function<AnyModule(const std::optional<Device>&)> clone_;
};

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <typename First, typename... Rest,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<First>, SequentialImpl>>>
  explicit SequentialImpl(First&& first, Rest&&... rest) {
    push_back(std::forward<First>(first));
    (push_back(std::forward<Rest>(rest)), ...);
  }
  // Named children, in order: Sequential({{"fc", Linear(4, 8)}, {"act", ReLU()}}).
  SequentialImpl(std::initializer_list<std::pair<std::string, AnyModule>> named) {
    for (const auto& [name, m] : named) push_back(name, m);
  }

  void push_back(AnyModule m) { push_back(std::to_string(modules_.size()), std::move(m)); }
  void push_back(std::string name, AnyModule m) {
    GB_CHECK(!m.is_empty(), "Sequential::push_back: empty module for \"", name, "\"");
    register_module(std::move(name), m.ptr());
    modules_.push_back(std::move(m));
  }
  // Appends every module of another Sequential (sharing them, as libtorch's extend).
  void extend(const SequentialImpl& other) {
    for (const auto& m : other.modules_) push_back(m);
  }

  Tensor forward(Tensor x) {
    GB_CHECK(!modules_.empty(), "Sequential::forward: the Sequential is empty; push_back modules first");
    for (const auto& m : modules_) x = m.forward(x);
    return x;
  }

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  const std::shared_ptr<Module>& ptr(size_t i) const { return at_index(i).ptr(); }
  std::shared_ptr<Module> operator[](size_t i) const { return at_index(i).ptr(); }
  template <typename T>
  T& at(size_t i) const {
    T* p = at_index(i).as<T>();
    GB_CHECK(p != nullptr, "Sequential::at<T>(", i, "): the module there is a ", at_index(i).ptr()->name(),
             ", not the requested type");
    return *p;
  }
  const AnyModule& module_at(size_t i) const { return at_index(i); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

  void pretty_print(std::ostream& os) const override { os << "Sequential"; }
  // A new Sequential of each module's clone, under the same names.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    auto copy = std::make_shared<SequentialImpl>();
    const auto names = named_children().keys();
    for (size_t i = 0; i < modules_.size(); ++i) copy->push_back(names[i], modules_[i].clone(device));
    copy->copy_state_from(*this, device, /*recurse=*/false);
    return copy;
  }

 private:
  const AnyModule& at_index(size_t i) const {
    GB_CHECK_INDEX(i < modules_.size(), "Sequential: index ", i, " is out of range (size ", modules_.size(), ")");
    return modules_[i];
  }
  std::vector<AnyModule> modules_;
};
GB_MODULE(Sequential);

}  // namespace gb::nn
