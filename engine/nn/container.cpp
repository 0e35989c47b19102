// engine/nn/container.cpp — ModuleList and ModuleDict: their own order kept in step with the registered children.
#include "glassbox/nn/modules/container.h"

namespace gb::nn {

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  GB_CHECK(module != nullptr, "ModuleList::push_back: the module is empty");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::insert(size_t index, std::shared_ptr<Module> module) {
  GB_CHECK(module != nullptr, "ModuleList::insert: the module is empty");
  GB_CHECK_INDEX(index <= modules_.size(), "ModuleList::insert: index ", index, " is out of range (size ",
                 modules_.size(), ")");
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
  for (size_t i = index; i + 1 < modules_.size(); ++i) replace_module(std::to_string(i), modules_[i]);
  register_module(std::to_string(modules_.size() - 1), modules_.back());
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  std::vector<std::shared_ptr<Module>> copy = other.modules_;  // other may be *this
  for (auto& m : copy) push_back(std::move(m));
}

const std::shared_ptr<Module>& ModuleListImpl::ptr(size_t index) const {
  GB_CHECK_INDEX(index < modules_.size(), "ModuleList: index ", index, " is out of range (size ", modules_.size(), ")");
  return modules_[index];
}

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  GB_CHECK(module != nullptr, "ModuleDict: the module for key \"", key, "\" is empty");
  if (modules_.contains(key)) {
    replace_module(key, module);
    modules_[key] = std::move(module);
  } else {
    register_module(key, module);
    modules_.insert(key, std::move(module));
  }
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  auto m = (*this)[key];
  unregister(key);
  modules_.erase(key);
  return m;
}

void ModuleDictImpl::clear() {
  for (const auto& k : modules_.keys()) unregister(k);
  modules_.clear();
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const auto* m = modules_.find(key);
  GB_CHECK_INDEX(m != nullptr, "ModuleDict: no module under key \"", key, "\" (keys: ", modules_.size(),
                 "); check contains(key) first");
  return *m;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> ModuleDictImpl::items() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  for (const auto& it : modules_) out.emplace_back(it.key(), it.value());
  return out;
}

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& m : modules_) copy->push_back(m->clone(device));
  copy->copy_state_from(*this, device, /*recurse=*/false);
  return copy;
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& item : modules_) copy->insert(item.key(), item.value()->clone(device));
  copy->copy_state_from(*this, device, /*recurse=*/false);
  return copy;
}

}  // namespace gb::nn
