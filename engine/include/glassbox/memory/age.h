// glassbox/memory/age.h — live memory by the step that allocated it (this step, earlier steps, outside any step),
// each part by category; and what earlier steps kept, by the op and module that made it.
//
// Every block remembers gb::trace::current_step() at its allocation (BlockSnapshot::step: a StepScope's step, or
// the training monitor's automatic step while a trace records; -1 outside any step). A training step frees by its
// end what it allocates in the categories a step owns (activation, temporary, autograd_detail, input, unknown);
// what earlier steps allocated in them and is still alive, the program kept across steps: an output or a loss
// stored with its graph (outputs.push_back(net(x)), total = total + loss), an evaluation run without
// gb::NoGradGuard. Parameters, gradients and optimizer state live across steps by design: never kept.
//
// The rule, one for the OOM report (oom.h), the monitor's memory_growth alarm and `glassbox report`'s story
// (traces/SCHEMA.md, oom_reports.kept_bytes): memory is a leak across steps when kept bytes are more than half of
// what is allocated. Then checkpointing or a smaller batch only delays the failure; keeping numbers (loss.item()),
// detached tensors (.detach()) or evaluating under gb::NoGradGuard ends it.
//
//   auto age = gb::memory::memory_by_age(gb::memory::snapshot(gb::kCPU), gb::trace::current_step());
//   if (age.leak()) std::cout << gb::memory::kept_text(age);  // "95.00 MiB from 91 earlier steps (0..90) ..."
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/memory/category.h"
#include "glassbox/memory/snapshot.h"

namespace gb::memory {

enum class Age : uint8_t {
  this_step,      // allocated by the step the split is made at
  earlier_steps,  // by another step (before it; or a previous session's numbering)
  outside_steps,  // with no step running: set-up (the model, data made before the loop), or between StepScopes
};
constexpr int kNumAges = 3;
const char* to_string(Age a);  // "this step", "earlier steps", "outside any step"

// The categories a step frees by its end (activation, temporary, autograd_detail, input, unknown): earlier steps'
// live blocks in them are kept.
bool step_owned(Category c);

// The kept blocks one (op, module) made.
struct KeptOrigin {
  std::string op, module;  // the AllocationContext they were made in ("" if none)
  Category category = Category::unknown;  // the category holding most of their bytes
  int64_t bytes = 0, blocks = 0;
  int64_t steps = 0;                      // distinct steps that allocated them
  int64_t first_step = -1, last_step = -1;
};

struct MemoryByAge {
  int64_t step = -1;       // the step the split is made at; -1: none (every block is then outside_steps)
  int64_t allocated = 0;   // bytes of every live block
  std::array<std::array<int64_t, kNumCategories>, kNumAges> bytes{};  // [Age][Category]
  int64_t kept = 0;        // earlier steps' bytes in the step-owned categories
  int64_t kept_steps = 0;  // distinct steps that allocated them
  int64_t first_kept_step = -1, last_kept_step = -1;
  std::vector<KeptOrigin> kept_origins;  // up to kKeptOrigins, largest first

  int64_t total(Age a) const;
  // Kept bytes are more than half of the allocated ones: a leak across steps, not one step's peak.
  bool leak() const { return step >= 0 && 2 * kept > allocated; }
};
constexpr std::size_t kKeptOrigins = 5;

// The snapshot's live blocks split at `step` (one pass over the blocks; sorting per origin).
MemoryByAge memory_by_age(const Snapshot& snapshot, int64_t step);

// "91 steps (0..90)", "step 4", "no step".
std::string steps_text(int64_t steps, int64_t first, int64_t last);
// Non-zero categories largest first: "activation 60.00 MiB, temporary 30.00 MiB" ("" when all are zero).
std::string categories_text(const std::array<int64_t, kNumCategories>& bytes);
// "relu in act1 (activation): 40.00 MiB from 91 steps (0..90)"; "no op" / no module part where unknown.
std::string to_string(const KeptOrigin& o);
// "95.00 MiB (97% of the 98.00 MiB allocated) from 91 earlier steps (0..90): activation 60.00 MiB, temporary
// 35.00 MiB; made by relu in act1 (activation): 40.00 MiB from 91 steps (0..90); ..." (up to `origins` of them;
// one step: "from earlier step 4"). Meant for age.kept > 0.
std::string kept_text(const MemoryByAge& age, std::size_t origins = kKeptOrigins);

}  // namespace gb::memory
