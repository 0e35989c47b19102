// viewer/gradients_model.h — the gradients domain of TraceModel: the grad_stats table as a heatmap (parameters by
// steps), reduced to pixel columns off the frame, and one parameter's update/parameter ratio. No ImGui.
//
// Contract:
//   - load(db, stop) is the model's loader thread: it reads grad_stats once, then loading() turns false (also when
//     the read fails: the panel shows an empty heatmap). Until then heatmap() is empty.
//   - heatmap(): rows = params in model order (params.id), then params that only grad_stats names; columns = steps
//     in order; values = gradient L2 norms; NaN/Inf cells flagged; update_norm / param_norm per cell.
//   - columns(n) answers at once (async_cache.h's AsyncSlot): the heatmap reduced to n pixel columns (computed on
//     the compute worker), the last finished reduction for another n while pending(), nullptr before the first or
//     while loading. reduce(n) is the computation (any thread once loaded). Columns split the step axis
//     [first step, last step + 1) evenly (a long run's grad_stats are sparse: every 10 steps, every step in its
//     detail windows), so n is clamped to [1, last - first + 1]: with more steps than columns a column aggregates
//     its bucket of steps (the largest finite norm, any NaN / Inf), with fewer each column is one step (a step
//     without a row is an empty column).
//   - update_ratio(param) is read from the heatmap (empty while loading or for an unknown param).
//
//   if (const GradColumns* g = m.gradients().columns(px / 4)) draw(m.gradients().heatmap(), *g);
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/query/trace_db.h"
#include "traces/records.h"
#include "viewer/async_cache.h"
#include "viewer/worker.h"

namespace gb::viewer {

class TraceModel;

struct GradHeatmap {
  std::vector<gb::trace::Id> param_ids;  // rows, in model order
  std::vector<std::string> labels;       // "layers.0.weight"
  std::vector<std::int64_t> steps;       // columns
  std::vector<double> norm;              // rows * steps, row-major; NaN where the trace has no row
  std::vector<std::uint8_t> flag;        // 0 ok / missing, 1 NaN, 2 Inf (nan_count, inf_count or a non-finite norm)
  std::vector<double> ratio;             // update_norm / param_norm, rows * steps; NaN where either is missing
                                         // (NULL in SQL), non-finite, or param_norm <= 0
  double min_positive = 0, max = 0;      // finite, > 0 norms
  std::size_t rows() const { return param_ids.size(); }
  std::size_t cols() const { return steps.size(); }
  double at(std::size_t r, std::size_t c) const { return norm[r * steps.size() + c]; }
  std::uint8_t flag_at(std::size_t r, std::size_t c) const { return flag[r * steps.size() + c]; }
};

// The heatmap reduced to pixel columns: per row and column, the largest finite norm of the column's steps (NaN
// when none) and the worst flag (NaN over Inf over none).
struct GradColumns {
  int columns = 0;
  std::int64_t first_step = 0, step_span = 0;  // column c holds steps [first + span * c / columns, ...)
  std::vector<std::size_t> bounds;             // columns + 1: the heatmap's step columns of column c are
                                               // [bounds[c], bounds[c + 1])
  std::vector<double> best;        // rows * columns
  std::vector<std::uint8_t> flag;  // rows * columns
  std::pair<std::size_t, std::size_t> steps(int c, std::size_t = 0) const {  // step columns [a, b) of column c
    return {bounds[static_cast<std::size_t>(c)], bounds[static_cast<std::size_t>(c) + 1]};
  }
  std::int64_t step_at(int c) const {  // the first step of column c's bucket
    return first_step + step_span * c / std::max(1, columns);
  }
};

// One parameter's update/parameter ratio (update_norm / param_norm) per step: the steps with a finite ratio, and
// the steps that have a grad_stats row but no usable ratio (NaN norms: NULL in SQL), drawn as markers.
struct UpdateRatio {
  std::vector<std::int64_t> steps;
  std::vector<double> ratio;
  std::vector<std::int64_t> skipped;
};

class GradientsModel {
 public:
  GradientsModel(const TraceModel& model, Worker& compute) : model_(model), compute_(compute) {}
  void load(const gb::query::TraceDb* db);  // db nullptr: nothing to load

  bool loading() const { return !ready_.load(std::memory_order_acquire); }
  const GradHeatmap& heatmap() const;
  const GradColumns* columns(int columns);
  bool pending() const { return columns_.pending(); }
  GradColumns reduce(int columns) const;
  UpdateRatio update_ratio(gb::trace::Id param_id) const;
  GradHeatmap read_heatmap(const gb::query::TraceDb& db) const;  // any thread

 private:
  const TraceModel& model_;  // params and module paths: read-only after open
  Worker& compute_;
  std::atomic<bool> ready_{false};
  GradHeatmap heatmap_;
  AsyncSlot<int, GradColumns> columns_;
};

}  // namespace gb::viewer
