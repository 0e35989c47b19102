// engine/memory/context.h — the thread's allocation context (category, op, module) read in one call by the
// allocator's hot path. Internal to engine/memory/; the public face is glassbox/memory/category.h.
#pragma once

#include <cstdint>

#include "glassbox/memory/category.h"

namespace gb::memory::detail {

struct ThreadContext {
  Category category = Category::temporary;  // what an op output is unless the engine says otherwise
  uint32_t op = 0, module = 0;
};

ThreadContext& thread_context();

}  // namespace gb::memory::detail
