// tests/support/module_scope.h — which module paths the allocations made by a piece of code were stamped with
// (the built-in layers' forward opens a ModuleCallScope, so even a raw ->forward() attributes its memory).
#pragma once

#include <functional>
#include <set>
#include <string>

#include <glassbox/glassbox.h>

namespace gbtest {

inline std::set<std::string> allocation_modules(const std::function<void()>& body) {
  std::set<std::string> names;
  gb::memory::set_event_observer([&](const gb::memory::MemoryEvent& e) {
    if (e.action == gb::memory::MemoryAction::alloc) names.insert(gb::memory::name_of(e.module_id));
  });
  try {
    body();
  } catch (...) {
    gb::memory::set_event_observer(nullptr);
    throw;
  }
  gb::memory::set_event_observer(nullptr);
  return names;
}

}  // namespace gbtest
