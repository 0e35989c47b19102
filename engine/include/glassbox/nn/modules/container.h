// glassbox/nn/modules/container.h — ModuleList and ModuleDict: children held in order, for a forward you write.
//
//   gb::nn::ModuleList layers;
//   for (int i = 0; i < 3; ++i) layers->push_back(gb::nn::Linear(8, 8));
//   layers = register_module("layers", layers);          // named_parameters: "layers.0.weight", ...
//   for (const auto& m : *layers) x = std::dynamic_pointer_cast<gb::nn::LinearImpl>(m)->forward(x);
//   x = layers->at<gb::nn::LinearImpl>(1).forward(x);  gb::nn::Linear(layers->ptr<gb::nn::LinearImpl>(2))(x);
//
//   gb::nn::ModuleDict heads({{"cls", gb::nn::Linear(8, 2)}, {"box", gb::nn::Linear(8, 4)}});
//   heads["cls"];  heads->contains("box");  heads->pop("box");   // children named by key, in insertion order
//
// ModuleList children are named "0", "1", ... (insert renumbers, as PyTorch's). Neither has a forward.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassbox/nn/module.h"
#include "glassbox/nn/ordered_dict.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

namespace detail {
// A module given as a holder (Linear(4, 8)) or a shared_ptr, for the initializer lists of ModuleDict.
struct ModulePtr {
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, M>>>
  ModulePtr(std::shared_ptr<M> m) : ptr(std::move(m)) {}  // NOLINT
  template <typename M>
  ModulePtr(const ModuleHolder<M>& h) : ptr(h.ptr()) {}  // NOLINT
  std::shared_ptr<Module> ptr;
};

template <typename T>
T* checked_as(const std::shared_ptr<Module>& m, const char* where, const std::string& at) {
  T* p = dynamic_cast<T*>(m.get());
  GB_CHECK(p != nullptr, where, ": the module at ", at, " is a ", m->name(), ", not the requested type");
  return p;
}
}  // namespace detail

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() = default;
  template <typename... Modules>
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  template <typename M>
  void push_back(const ModuleHolder<M>& module) {
    push_back(std::shared_ptr<Module>(module.ptr()));
  }
  // Inserts before `index` (0..size()); the ones after move up a name, as PyTorch's ModuleList.insert.
  void insert(size_t index, std::shared_ptr<Module> module);
  template <typename M>
  void insert(size_t index, const ModuleHolder<M>& module) {
    insert(index, std::shared_ptr<Module>(module.ptr()));
  }
  // Appends the modules of another list (shared, not copied), or of a vector.
  void extend(const ModuleListImpl& other);
  template <typename Container>
  requires(!std::is_base_of_v<Module, Container>) void extend(const Container& modules) {
    for (const auto& m : modules) push_back(m);
  }

  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  const std::shared_ptr<Module>& ptr(size_t index) const;
  template <typename T>
  std::shared_ptr<T> ptr(size_t index) const {
    auto m = std::dynamic_pointer_cast<T>(ptr(index));
    GB_CHECK(m != nullptr, "ModuleList::ptr<T>(", index, "): the module there is a ", ptr(index)->name(),
             ", not the requested type");
    return m;
  }
  template <typename T>
  T& at(size_t index) const {
    return *detail::checked_as<T>(ptr(index), "ModuleList::at<T>", std::to_string(index));
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

  void pretty_print(std::ostream& stream) const override { stream << "ModuleList"; }
  // A new list of each module's clone.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
GB_MODULE(ModuleList);

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() = default;
  ModuleDictImpl(std::initializer_list<std::pair<std::string, detail::ModulePtr>> modules) {
    for (const auto& [key, module] : modules) insert(key, module.ptr);
  }
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
    update(modules);
  }

  // Adds each (key, module); an existing key keeps its place and gets the new module (PyTorch's update).
  template <typename Container>
  void update(const Container& modules) {
    for (const auto& [key, module] : modules) insert(key, module);
  }
  void update(std::initializer_list<std::pair<std::string, detail::ModulePtr>> modules) {
    for (const auto& [key, module] : modules) insert(key, module.ptr);
  }
  void update(const ModuleDictImpl& other) { update(other.items()); }
  void insert(const std::string& key, std::shared_ptr<Module> module);
  template <typename M>
  void insert(const std::string& key, const ModuleHolder<M>& module) {
    insert(key, std::shared_ptr<Module>(module.ptr()));
  }
  // Removes and returns the module under key.
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();

  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <typename T>
  T& at(const std::string& key) const {
    return *detail::checked_as<T>((*this)[key], "ModuleDict::at<T>", key);
  }
  bool contains(const std::string& key) const noexcept { return modules_.contains(key); }
  std::vector<std::string> keys() const { return modules_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return modules_.values(); }
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const;
  size_t size() const noexcept { return modules_.size(); }
  bool empty() const noexcept { return modules_.is_empty(); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

  void pretty_print(std::ostream& stream) const override { stream << "ModuleDict"; }
  // A new dict of each module's clone, under the same keys.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

 private:
  OrderedDict<std::string, std::shared_ptr<Module>> modules_{"Module"};
};
// The holder also takes the braced list: ModuleDict({{"cls", Linear(8, 2)}, {"box", Linear(8, 4)}}).
class ModuleDict : public ModuleHolder<ModuleDictImpl> {
 public:
  using ModuleHolder<ModuleDictImpl>::ModuleHolder;
  ModuleDict(std::initializer_list<std::pair<std::string, detail::ModulePtr>> modules)
      : ModuleHolder(std::make_shared<ModuleDictImpl>(modules)) {}
};

}  // namespace gb::nn
