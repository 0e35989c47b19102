// glassbox/nn/pimpl.h — ModuleHolder<Impl> and GB_MODULE: the `gb::nn::Linear` that wraps a
// std::shared_ptr<LinearImpl> (libtorch's TORCH_MODULE pattern).
//
//   gb::nn::Linear fc(4, 8);          // constructs LinearImpl(4, 8)
//   gb::nn::Linear later{nullptr};    // empty; assign before use
//   fc->weight;  fc(x);  fc->forward(x);   // fc(x) runs hooks (PyTorch's __call__), ->forward is the raw forward
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "glassbox/core/error.h"
#include "glassbox/nn/module.h"

namespace gb::nn {

template <typename Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  // Default-constructs Impl when it has a default constructor (like libtorch); otherwise use {nullptr}.
  ModuleHolder() : impl_(default_construct()) {}
  ModuleHolder(std::nullptr_t) {}  // NOLINT: empty holder
  template <typename Head, typename... Tail,
            typename = std::enable_if_t<!(std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                                          std::is_same_v<std::decay_t<Head>, ModuleHolder> ||
                                          std::is_same_v<std::decay_t<Head>, std::shared_ptr<Impl>>)>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  ModuleHolder(std::shared_ptr<Impl> module) : impl_(std::move(module)) {}  // NOLINT

  explicit operator bool() const noexcept { return impl_ != nullptr; }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  Impl* operator->() { return get(); }
  const Impl* operator->() const { return get(); }
  Impl& operator*() { return *get(); }
  const Impl& operator*() const { return *get(); }
  const std::shared_ptr<Impl>& ptr() const {
    check();
    return impl_;
  }
  Impl* get() {
    check();
    return impl_.get();
  }
  const Impl* get() const {
    check();
    return impl_.get();
  }

  // Indexing forwards to the module (Sequential, ModuleList): seq[1].
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*get())[std::forward<Arg>(arg)];
  }

  // module(args...): forward with hooks and a module span.
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    return detail::call_module(*get(), std::forward<Args>(args)...);
  }

 private:
  static std::shared_ptr<Impl> default_construct() {
    if constexpr (std::is_default_constructible_v<Impl>) return std::make_shared<Impl>();
    else return nullptr;
  }
  void check() const {
    GB_CHECK(impl_ != nullptr, "Accessing an empty ModuleHolder (a module declared as `Type name{nullptr}` and never "
             "assigned): assign it first, e.g. `fc = register_module(\"fc\", gb::nn::Linear(4, 8));`");
  }
  std::shared_ptr<Impl> impl_;
};

template <typename Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& m) {
  return os << *m;
}

}  // namespace gb::nn

// GB_MODULE(Name): declares `Name`, a ModuleHolder of NameImpl (TORCH_MODULE).
#define GB_MODULE_IMPL(Name, ImplType)                  \
  class Name : public ::gb::nn::ModuleHolder<ImplType> { \
   public:                                              \
    using ::gb::nn::ModuleHolder<ImplType>::ModuleHolder; \
  }
#define GB_MODULE(Name) GB_MODULE_IMPL(Name, Name##Impl)
