// glassbox/memory/snapshot.h — an allocator's layout at one moment: segments, each tiled by its blocks
// (torch.cuda.memory_snapshot()'s shape, as plain structs).
//
// Segments come in the order they were made (by id), blocks in address order inside their segment; the blocks'
// sizes add up to the segment's total_size exactly. A meta run and a cpu run of the same program give the same
// snapshot except for the addresses (offsets are equal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/memory/category.h"

namespace gb::memory {

enum class BlockState : uint8_t { active_allocated, inactive };
const char* to_string(BlockState s);

// A block lives on its segment's stream (SegmentSnapshot::stream).
struct BlockSnapshot {
  uint64_t address = 0;
  int64_t offset = 0;          // from the segment's start
  int64_t size = 0;            // rounded to 512 B
  int64_t requested_size = 0;  // what the caller asked for (0 for inactive blocks)
  BlockState state = BlockState::inactive;
  Category category = Category::unknown;  // unknown for inactive blocks
  std::string op, module;                 // the AllocationContext it was made in ("" if none)
  int64_t step = -1;  // the training step that allocated it (gb::trace::current_step(): a StepScope's, or the
                      // monitor's automatic step); -1 outside any step, and for inactive blocks
};

struct SegmentSnapshot {
  int64_t id = 0;               // increasing per allocator, never reused
  uint64_t address = 0;
  int64_t total_size = 0;
  int64_t allocated_size = 0;   // sum of its active blocks' sizes
  int64_t requested_size = 0;
  int64_t stream = 0;
  bool is_small = false;        // small pool (2 MiB segments for requests <= 1 MiB)
  std::vector<BlockSnapshot> blocks;
};

struct Snapshot {
  std::vector<SegmentSnapshot> segments;
};

}  // namespace gb::memory
