// engine/optim/fused_list.h — internal: how a fused optimizer pass walks a parameter list (adam_update.cpp,
// rmsprop_update.cpp). The list is one range of 256-element blocks split across the pool, so small parameters share
// a thread instead of one task each; a task runs, for each item it covers, the item's kernel over its part of the
// item, and when statistics are wanted the parts' StepPartials are added into the item's total.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "glassbox/core/parallel.h"
#include "optim/step_sums.h"

namespace gb::optim::detail {

constexpr int64_t kFusedBlock = 256;
constexpr int64_t kFusedGrainBlocks = 128;  // 32768 elements: below that the whole list stays on one thread

// run(i, lo, hi, part) for every part [lo, hi) of item i (lo on a block boundary; numels[i] > 0), its statistics
// added to `part`. totals: nullptr, or resized to the item count and filled with each item's sums.
template <class Run>
void for_each_fused_part(const std::vector<int64_t>& numels, std::vector<StepPartial>* totals, const Run& run) {
  const size_t n_items = numels.size();
  std::vector<int64_t> first(n_items + 1, 0);  // item i holds blocks [first[i], first[i + 1])
  for (size_t i = 0; i < n_items; ++i) first[i + 1] = first[i] + (numels[i] + kFusedBlock - 1) / kFusedBlock;
  if (totals) totals->assign(n_items, StepPartial{});
  std::mutex mu;
  parallel_for(0, first[n_items], kFusedGrainBlocks, [&](int64_t b, int64_t e) {
    size_t i = size_t(std::upper_bound(first.begin(), first.end(), b) - first.begin()) - 1;
    for (; b < e; ++i) {
      const int64_t hi_block = std::min(e, first[i + 1]);
      const int64_t lo = (b - first[i]) * kFusedBlock, hi = std::min(numels[i], (hi_block - first[i]) * kFusedBlock);
      StepPartial part;
      run(i, lo, hi, part);
      if (totals) {
        std::lock_guard lock(mu);
        (*totals)[i].add(part);
      }
      b = hi_block;
    }
  });
}

}  // namespace gb::optim::detail
