// traces/query/memory_replay.h — the one replay of memory_events: which blocks are live, and how many bytes each
// allocation category holds, after each event of one device.
//
// Contract (the allocator's events, traces/SCHEMA.md):
//   - alloc adds a block at addr with its size and category; an alloc over a live block replaces it (its bytes
//     leave their category first: a damaged or merged trace must not count them twice).
//   - retag moves a live block's bytes to the event's category (the engine retags parameters, activations and
//     gradients after allocating them).
//   - free removes the live block at addr and subtracts its size from its own category, whatever category the free
//     row names. A free with no live block changes nothing and is reported (`glassbox check` lists them).
//   - resume (detail resumes after a gap in a long run's trace: schema version 5) forgets every live block; the
//     live rows that follow it at the same time are the blocks live then, each added as an alloc adds one. So a
//     replay that meets the windows of a long run one after the other is exact inside each.
//   - segment and cache events (segment_alloc, segment_free, live_segment, oom, empty_cache) do not change blocks.
//   - a category outside the schema's (a damaged file) counts as unknown.
// Events are applied in time order (ORDER BY t_ns, id: the index on (device, t_ns) serves it), one device per
// replay — not in id order, which is the collector's write order and interleaves threads. Each block carries an Extra payload the caller chooses
// (the viewer keeps the allocation's time, op span and module, to name the largest live blocks).
//
//   gb::query::MemoryReplay<> r;
//   db.each("SELECT action, addr, size, category FROM memory_events WHERE device = 0 ORDER BY t_ns, id", [&](const Row& e) {
//     r.apply(action_of(e.i64(0)), e.i64(1), e.i64(2), category_of(e.i64(3)));
//     use(r.by_category());  // bytes per category after this event
//   });
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "traces/records.h"

namespace gb::query {

// Bytes per allocation category (index: gb::trace::MemCategory).
using CategoryBytes = std::array<std::int64_t, gb::trace::kMemCategories>;

// A stored action or category, as read from a file that may be damaged.
inline gb::trace::MemAction mem_action(std::int64_t v) { return static_cast<gb::trace::MemAction>(v); }
inline gb::trace::MemCategory mem_category(std::int64_t v) {
  return v >= 0 && v < gb::trace::kMemCategories ? static_cast<gb::trace::MemCategory>(v)
                                                 : gb::trace::MemCategory::unknown;
}

struct NoExtra {};

template <class Extra = NoExtra>
class MemoryReplay {
 public:
  struct Block {
    std::int64_t size = 0;
    gb::trace::MemCategory category = gb::trace::MemCategory::unknown;
    Extra extra{};
  };

  // Applies one event. Returns false for a free (or retag) that found no live block at addr.
  bool apply(gb::trace::MemAction action, std::int64_t addr, std::int64_t size, gb::trace::MemCategory category,
             const Extra& extra = {}) {
    using gb::trace::MemAction;
    switch (action) {
      case MemAction::resume:
        live_.clear();
        bytes_ = {};
        return true;
      case MemAction::alloc:
      case MemAction::live: {
        auto [it, fresh] = live_.try_emplace(addr);
        if (!fresh) add(it->second.category, -it->second.size);
        it->second = Block{size, category, extra};
        add(category, size);
        return true;
      }
      case MemAction::retag: {
        auto it = live_.find(addr);
        if (it == live_.end()) return false;
        add(it->second.category, -it->second.size);
        it->second.category = category;
        add(category, it->second.size);
        return true;
      }
      case MemAction::free: {
        auto it = live_.find(addr);
        if (it == live_.end()) return false;
        add(it->second.category, -it->second.size);
        live_.erase(it);
        return true;
      }
      default: return true;
    }
  }

  const CategoryBytes& by_category() const { return bytes_; }  // bytes per category now
  const CategoryBytes& peaks() const { return peaks_; }        // the largest each category reached
  const std::unordered_map<std::int64_t, Block>& live() const { return live_; }  // addr -> block

 private:
  void add(gb::trace::MemCategory c, std::int64_t delta) {
    auto& b = bytes_[static_cast<std::size_t>(c)];
    b += delta;
    auto& p = peaks_[static_cast<std::size_t>(c)];
    if (b > p) p = b;
  }

  std::unordered_map<std::int64_t, Block> live_;
  CategoryBytes bytes_{}, peaks_{};
};

}  // namespace gb::query
