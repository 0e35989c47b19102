// samples/lessons/memory_layers.cpp — the three layers of a caching allocator's memory: live tensors, the cache,
// and what a reference you forgot keeps alive.
//
// The claim, from PyTorch's "CUDA semantics: memory management" note and the torch.cuda.memory_allocated /
// memory_reserved / empty_cache docs: freeing a tensor returns its block to the caching allocator, not to the
// system — memory_allocated falls, memory_reserved stays — and only empty_cache() releases the unused cached
// segments; and a tensor stays allocated as long as anything references it, here a closure (a std::function whose
// lambda captured it by value, as a Python lambda or a hook keeps it), until the closure goes. glassbox's cpu
// device has the same caching allocator, so the same stats (gb::memory::memory_stats, torch.cuda.memory_stats'
// names) show it here without a GPU.
//
//   ./build/samples/lessons/lesson_memory_layers
//
// Prints allocated and reserved bytes (cpu allocator, above the start) after each step: a 1000x1000 float32 tensor
// made, dropped, empty_cache(); a second one captured by a closure, our handle dropped, the closure dropped. The
// verdict holds when each step moves the layer the claim says and only that one. The sizes are PyTorch's: the
// 4,000,000-byte request is rounded to 512 B (4,000,256), and a request between 1 and 10 MiB gets a 20 MiB segment;
// the closure's sum() adds a small-pool segment (2 MiB) that stays reserved at the end.
#include <glassbox/glassbox.h>

#include <cstdint>
#include <functional>
#include <string>

#include "lesson.h"

namespace {

struct Layers {
  int64_t allocated = 0, reserved = 0;
};

Layers now() {
  const gb::memory::MemoryStats s = gb::memory::memory_stats(gb::kCPU);
  return {s.allocated_bytes[gb::memory::kAll].current, s.reserved_bytes[gb::memory::kAll].current};
}

}  // namespace

int main() {
  lesson::Lesson l("memory_layers",
                   "a dropped tensor leaves allocated but stays reserved until empty_cache(); a tensor a closure "
                   "captured stays allocated until the closure goes");
  gb::memory::empty_cache(gb::kCPU);
  const Layers base = now();
  auto show = [&](const std::string& after) {
    const Layers n = now();
    l.measured(after, "allocated " + std::to_string(n.allocated - base.allocated) + " bytes, reserved " +
                          std::to_string(n.reserved - base.reserved) + " bytes");
    return Layers{n.allocated - base.allocated, n.reserved - base.reserved};
  };

  gb::Tensor t = gb::ones({1000, 1000});  // 4,000,000 bytes of float32
  const Layers made = show("after t = ones({1000, 1000})");
  t = gb::Tensor();
  const Layers dropped = show("after dropping t");
  gb::memory::empty_cache(gb::kCPU);
  const Layers emptied = show("after empty_cache()");

  gb::Tensor u = gb::ones({1000, 1000});
  std::function<double()> closure = [u] { return u.sum().item<double>(); };  // captures u by value
  u = gb::Tensor();
  const Layers held = show("after dropping u, the closure still holding it");
  l.measured("the closure still reads its tensor: sum", closure());
  closure = nullptr;
  const Layers released = show("after the closure goes");

  const int64_t bytes = 1000 * 1000 * 4;
  const bool cache_layer = made.allocated >= bytes && made.reserved >= made.allocated && dropped.allocated == 0 &&
                           dropped.reserved == made.reserved && emptied.reserved == 0;
  const bool closure_layer = held.allocated >= bytes && released.allocated == 0;
  return l.verdict(cache_layer && closure_layer,
                   "dropping t took allocated from " + lesson::bytes(double(made.allocated)) + " to " +
                       lesson::bytes(double(dropped.allocated)) + " while reserved stayed " +
                       lesson::bytes(double(dropped.reserved)) + " until empty_cache() made it " +
                       lesson::bytes(double(emptied.reserved)) + "; the closure kept " +
                       lesson::bytes(double(held.allocated)) + " allocated until it went (then " +
                       lesson::bytes(double(released.allocated)) + ")");
}
