// engine/optim/fused_list.h — internal: what the fused optimizer passes over a whole parameter list share
// (adam_update.cpp, rmsprop_update.cpp, adagrad_update.cpp). The list is one range of 256-element blocks split across
// the pool, so small parameters share a thread instead of one task each; a task runs, for each item it covers, the
// item's kernel over its part of the item, and when statistics are wanted the parts' StepPartials are added into the
// item's total. fused_run is a pass as the optimizers call it: one op span, then each parameter's statistics to the
// training monitor when they are due.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/core/parallel.h"
#include "monitor/monitor.h"
#include "monitor/scan.h"
#include "optim/step_sums.h"

namespace gb::optim::detail {

constexpr int64_t kFusedBlock = 256;
constexpr int64_t kFusedGrainBlocks = 128;  // 32768 elements: below that the whole list stays on one thread

// An operand of a fused pass on cuda: float32, contiguous, on p's device, of p's shape. The device passes measure no
// statistics, so they are taken only while no training monitor is active (the ops' path runs otherwise).
inline bool cuda_fusable_operand(const Tensor& x, const Tensor& p) {
  return x.defined() && x.is_cuda() && x.scalar_type() == kFloat && x.is_contiguous() && x.device() == p.device() &&
         x.sizes() == p.sizes() && !monitor::detail::active();
}

// The statistics of one parameter's fused step (what the monitor's scans would have read).
struct FusedStepSums {
  monitor::detail::ScanResult grad;  // of the gradient as it is in .grad
  double update_sumsq = 0;           // sum (p_after - p_before)^2
  double param_sumsq = 0;            // sum p^2 before the update
};

// Splits items into those on cuda (run by on_cuda(list), no statistics) and the rest (update(rest, sums)), and puts
// the rest's statistics in their places of `sums` (the cuda items' stay empty).
template <class Item, class OnCuda, class Update>
void fused_split(const std::vector<Item>& all, std::vector<FusedStepSums>* sums, const OnCuda& on_cuda,
                 const Update& update) {
  std::vector<const Item*> cuda_items;
  std::vector<Item> rest;
  std::vector<size_t> where;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].p.is_cuda()) {
      cuda_items.push_back(&all[i]);
    } else {
      rest.push_back(all[i]);
      where.push_back(i);
    }
  }
  if (!cuda_items.empty()) on_cuda(cuda_items);
  std::vector<FusedStepSums> rest_sums;
  update(rest, sums ? &rest_sums : nullptr);
  if (sums) {
    sums->assign(all.size(), FusedStepSums{});
    for (size_t j = 0; j < where.size(); ++j) (*sums)[where[j]] = rest_sums[j];
  }
}

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

// A pass over items (each with its parameter in .p): for_each_fused_part with `run`, and `sums` (nullptr, or resized
// to items.size()) filled from the totals. Meta parameters: nothing computed or measured.
template <class Item, class Run>
void fused_pass(const std::vector<Item>& items, std::vector<FusedStepSums>* sums, const Run& run) {
  const size_t n_items = items.size();
  if (sums) sums->assign(n_items, FusedStepSums{});
  if (n_items == 0 || gb::detail::skip_kernel(items[0].p)) return;
  std::vector<int64_t> numels(n_items);
  for (size_t i = 0; i < n_items; ++i) numels[i] = items[i].p.numel();
  std::vector<StepPartial> total;
  for_each_fused_part(numels, sums ? &total : nullptr, run);
  for (size_t i = 0; sums && i < n_items; ++i)
    (*sums)[i] = FusedStepSums{total[i].grad_scan(numels[i]), total[i].uu, total[i].pp};
}

// The optimizer's call: update(items, sums) inside one op span `name` (flops_per_element counted per element), then
// each parameter's statistics to the monitor when they are due.
template <class Item, class Update>
void fused_run(const char* name, int64_t flops_per_element, const std::vector<Item>& items, const Update& update) {
  if (items.empty()) return;
  gb::detail::OpScope op_scope(name);
  int64_t n = 0;
  for (const Item& t : items) n += t.p.numel();
  op_scope.set_flops(flops_per_element * n);
  const bool due = monitor::detail::step_stats_due();
  std::vector<FusedStepSums> sums;
  update(items, due ? &sums : nullptr);
  for (size_t i = 0; due && i < items.size(); ++i)
    monitor::detail::note_step_sums(items[i].p, sums[i].grad, std::sqrt(sums[i].update_sumsq),
                                    std::sqrt(sums[i].param_sumsq));
}

}  // namespace gb::optim::detail
