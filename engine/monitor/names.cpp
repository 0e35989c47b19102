// engine/monitor/names.cpp — what the monitor calls modules and parameters: module paths and types for messages,
// and each parameter's params.id and "path.name" label for grad_stats rows. Filled by the module scope
// (nn/module_call.cpp) when a module first runs under a trace; kept for the process, like the trace registry.
#include <mutex>
#include <unordered_map>

#include "monitor/monitor.h"

namespace gb::monitor::detail {

namespace {
struct ModuleName {
  std::string path, type;
};
struct ParamName {
  int64_t param_id;
  uint32_t module_id;
  std::string name;
};
struct Names {
  std::mutex mu;
  std::unordered_map<uint32_t, ModuleName> modules;
  std::unordered_map<const TensorImpl*, ParamName> params;
  std::unordered_map<const TensorImpl*, std::string> labels;  // every parameter of a traced root module, by path
};
Names& names() {
  static Names* n = new Names;  // never destroyed: modules may run during static destruction
  return *n;
}
}  // namespace

void note_module(uint32_t id, std::string path, std::string type) {
  Names& n = names();
  std::lock_guard lock(n.mu);
  n.modules[id] = {std::move(path), std::move(type)};
}

void note_param(const TensorImpl* param, int64_t param_id, uint32_t module_id, const std::string& name) {
  Names& n = names();
  std::lock_guard lock(n.mu);
  n.params[param] = {param_id, module_id, name};
}

std::string module_label(int64_t module_id) {
  if (module_id < 0) return "no module";
  Names& n = names();
  std::lock_guard lock(n.mu);
  auto it = n.modules.find(static_cast<uint32_t>(module_id));
  if (it == n.modules.end()) return "module #" + std::to_string(module_id);
  if (it->second.path.empty()) return "the root module (" + it->second.type + ")";
  return "module " + it->second.path + " (" + it->second.type + ")";
}

void note_param_label(const TensorImpl* param, std::string label) {
  Names& n = names();
  std::lock_guard lock(n.mu);
  n.labels.emplace(param, std::move(label));
}

bool param_label(const TensorImpl* param, std::string& label) {
  Names& n = names();
  std::lock_guard lock(n.mu);
  auto it = n.labels.find(param);
  if (it == n.labels.end()) return false;
  label = it->second;
  return true;
}

namespace {
// A copy of a module's names (empty when unknown).
ModuleName module_name(int64_t module_id) {
  if (module_id < 0) return {};
  Names& n = names();
  std::lock_guard lock(n.mu);
  auto it = n.modules.find(static_cast<uint32_t>(module_id));
  return it == n.modules.end() ? ModuleName{} : it->second;
}
}  // namespace

std::string module_path(int64_t module_id) { return module_name(module_id).path; }
std::string module_type(int64_t module_id) { return module_name(module_id).type; }

// For grad_stats.cpp: a parameter's id, module and "path.name" label; false when no module owns it.
bool param_name(const TensorImpl* param, int64_t& param_id, int64_t& module_id, std::string& label) {
  Names& n = names();
  std::lock_guard lock(n.mu);
  auto it = n.params.find(param);
  if (it == n.params.end()) return false;
  param_id = it->second.param_id;
  module_id = it->second.module_id;
  auto m = n.modules.find(it->second.module_id);
  std::string path = m == n.modules.end() ? "" : m->second.path;
  label = path.empty() ? it->second.name : path + "." + it->second.name;
  return true;
}

}  // namespace gb::monitor::detail
