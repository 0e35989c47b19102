// engine/memory/category.cpp — the thread's allocation context (category, op, module) and the name table that
// op names and module paths are interned in.
#include "glassbox/memory/category.h"

#include <deque>
#include <mutex>
#include <unordered_map>

#include "memory/context.h"
#include "traces/records.h"

namespace gb::memory {
namespace {

struct NameTable {
  std::mutex mu;
  std::deque<std::string> names{""};  // a deque: references stay valid as it grows
  std::unordered_map<std::string, uint32_t> ids{{"", 0}};
};

NameTable& names() {
  static NameTable* t = new NameTable;  // never destroyed: name_of() may run during static destruction
  return *t;
}

}  // namespace

namespace detail {
ThreadContext& thread_context() {
  thread_local ThreadContext ctx;
  return ctx;
}
}  // namespace detail

const char* to_string(Category c) {  // the schema's names (traces/records.h: string literals, so NUL-terminated)
  return trace::kMemCategoryNames[static_cast<std::size_t>(c) % trace::kMemCategoryNames.size()].data();
}

Category current_category() { return detail::thread_context().category; }

CategoryGuard::CategoryGuard(Category c) : prev_(detail::thread_context().category) {
  detail::thread_context().category = c;
}
CategoryGuard::~CategoryGuard() { detail::thread_context().category = prev_; }

uint32_t intern_name(std::string_view name) {
  NameTable& t = names();
  std::lock_guard<std::mutex> lock(t.mu);
  auto [it, inserted] = t.ids.try_emplace(std::string(name), uint32_t(t.names.size()));
  if (inserted) t.names.emplace_back(name);
  return it->second;
}

const std::string& name_of(uint32_t id) {
  NameTable& t = names();
  std::lock_guard<std::mutex> lock(t.mu);
  return id < t.names.size() ? t.names[id] : t.names[0];
}

uint32_t current_op_id() { return detail::thread_context().op; }
uint32_t current_module_id() { return detail::thread_context().module; }

AllocationContext::AllocationContext(std::string_view op, std::string_view module)
    : prev_op_(detail::thread_context().op), prev_module_(detail::thread_context().module) {
  detail::ThreadContext& ctx = detail::thread_context();
  if (!op.empty()) ctx.op = intern_name(op);
  if (!module.empty()) ctx.module = intern_name(module);
}

ModuleContext::ModuleContext(uint32_t module_name_id) : prev_module_(detail::thread_context().module) {
  detail::thread_context().module = module_name_id;
}
ModuleContext::~ModuleContext() { detail::thread_context().module = prev_module_; }

AllocationContext::~AllocationContext() {
  detail::ThreadContext& ctx = detail::thread_context();
  ctx.op = prev_op_;
  ctx.module = prev_module_;
}

}  // namespace gb::memory
