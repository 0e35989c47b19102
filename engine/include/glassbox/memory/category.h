// glassbox/memory/category.h — what an allocation is for (PyTorch's memory-profiler categories) and which op and
// module made it: a thread-local context that every allocation made inside it is stamped with.
//
//   {
//     gb::memory::CategoryGuard cat(gb::memory::Category::parameter);   // new blocks are parameters
//     gb::memory::AllocationContext ctx("aten::linear", "encoder.layers.0.fc1");
//     auto w = gb::randn({1024, 1024});   // its block: parameter, op aten::linear, module encoder.layers.0.fc1
//   }
//
// A block keeps its category until re-tagged (set_category in memory.h). The engine sets them as roles change
// (engine/autograd/memory_roles.h): new allocations are temporary by default (every op output); a leaf whose
// requires_grad is set becomes a parameter; a tensor saved for backward an activation while saved, then
// temporary again; .grad buffers are gradients; what the backward engine allocates is autograd_detail. Inputs
// and optimizer state are the caller's to name, with a guard around their creation:
//
//   { gb::memory::CategoryGuard cat(gb::memory::Category::input); x = load_batch(); }
//   { gb::memory::CategoryGuard cat(gb::memory::Category::optimizer_state); momentum = gb::zeros_like(w); }
//
// (gb::optim's optimizers do the second for their own state.) Op and module names are interned
// once per AllocationContext (never copied per allocation); the table only grows, so use it for op names and
// module paths, not for per-step strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gb::memory {

enum class Category : uint8_t {
  unknown,
  parameter,
  gradient,
  activation,       // saved for backward
  optimizer_state,
  temporary,        // an op output nobody saved
  input,
  autograd_detail,
};
constexpr int kNumCategories = 8;

// "unknown", "parameter", ... (the enum's spelling).
const char* to_string(Category c);

// The category new allocations on this thread get (Category::temporary unless a guard says otherwise).
Category current_category();

// Sets the thread's category for new allocations while it lives; restores the previous one after.
class CategoryGuard {
 public:
  explicit CategoryGuard(Category c);
  ~CategoryGuard();
  CategoryGuard(const CategoryGuard&) = delete;
  CategoryGuard& operator=(const CategoryGuard&) = delete;

 private:
  Category prev_;
};

// Interned names: id 0 is always "". name_of(id) stays valid for the life of the process.
uint32_t intern_name(std::string_view name);
const std::string& name_of(uint32_t id);

// The op and module ids new allocations on this thread are stamped with (0 = "").
uint32_t current_op_id();
uint32_t current_module_id();

// Sets the thread's op name and module path for allocations made while it lives; restores the previous ones after.
// An empty string leaves that part as it was (so a module scope and an op scope nest).
class AllocationContext {
 public:
  AllocationContext(std::string_view op, std::string_view module = {});
  ~AllocationContext();
  AllocationContext(const AllocationContext&) = delete;
  AllocationContext& operator=(const AllocationContext&) = delete;

 private:
  uint32_t prev_op_, prev_module_;
};

// The module part alone, by interned id (a module caches its path's id; no lookup per call).
class ModuleContext {
 public:
  explicit ModuleContext(uint32_t module_name_id);
  ~ModuleContext();
  ModuleContext(const ModuleContext&) = delete;
  ModuleContext& operator=(const ModuleContext&) = delete;

 private:
  uint32_t prev_module_;
};

}  // namespace gb::memory
