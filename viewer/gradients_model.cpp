// viewer/gradients_model.cpp — GradientsModel (contract in gradients_model.h): grad_stats read once into a dense
// heatmap, its reduction to pixel columns, and a parameter's update ratio.
#include "viewer/gradients_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "traces/reader.h"
#include "viewer/trace_model.h"

namespace gb::viewer {

using namespace gb::trace;

void GradientsModel::load(const gb::query::TraceDb* db) {
  try {
    if (db) heatmap_ = read_heatmap(*db);
  } catch (const std::exception&) {  // stopped, or the file changed under us: an empty heatmap
    heatmap_ = GradHeatmap{};
  }
  ready_.store(true, std::memory_order_release);
}

const GradHeatmap& GradientsModel::heatmap() const {
  static const GradHeatmap kEmpty;
  return loading() ? kEmpty : heatmap_;
}

const GradColumns* GradientsModel::columns(int columns) {
  if (loading()) return nullptr;
  const std::int64_t span = heatmap_.cols() ? heatmap_.steps.back() - heatmap_.steps.front() + 1 : 1;
  columns = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(columns, span)));
  return columns_.get(columns, compute_, [this, columns](const gb::query::TraceDb*) { return reduce(columns); });
}

GradColumns GradientsModel::reduce(int columns) const {
  const GradHeatmap& h = heatmap();
  GradColumns g;
  g.first_step = h.cols() ? h.steps.front() : 0;
  g.step_span = h.cols() ? h.steps.back() - h.steps.front() + 1 : 1;
  columns = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(columns, g.step_span)));
  g.columns = columns;
  g.bounds.resize(static_cast<std::size_t>(columns) + 1);
  for (int c = 0; c <= columns; ++c)
    g.bounds[static_cast<std::size_t>(c)] =
        static_cast<std::size_t>(std::lower_bound(h.steps.begin(), h.steps.end(), g.step_at(c)) - h.steps.begin());
  g.bounds.back() = h.cols();
  g.best.assign(h.rows() * static_cast<std::size_t>(columns), std::nan(""));
  g.flag.assign(h.rows() * static_cast<std::size_t>(columns), 0);
  for (std::size_t r = 0; r < h.rows(); ++r)
    for (int c = 0; c < columns; ++c) {
      auto [a, b] = g.steps(c, h.cols());
      const std::size_t i = r * static_cast<std::size_t>(columns) + static_cast<std::size_t>(c);
      for (std::size_t k = a; k < b; ++k) {
        const std::uint8_t f = h.flag_at(r, k);
        g.flag[i] = f == 1 || g.flag[i] == 1 ? 1 : std::max(g.flag[i], f);
        if (std::isfinite(h.at(r, k)) && !(h.at(r, k) <= g.best[i])) g.best[i] = h.at(r, k);
      }
    }
  return g;
}

GradHeatmap GradientsModel::read_heatmap(const gb::query::TraceDb& db) const {
  GradHeatmap h;
  std::vector<GradStatRecord> stats = db.reader().grad_stats();
  std::unordered_map<Id, std::size_t> row;
  for (const ParamRecord& p : model_.params()) {
    row.emplace(p.id, h.param_ids.size());
    h.param_ids.push_back(p.id);
    h.labels.push_back(model_.module_path(p.module_id) + "." + p.name);
  }
  for (const GradStatRecord& g : stats)  // grad stats of params missing from the params table still get a row
    if (row.emplace(g.param_id, h.param_ids.size()).second) {
      h.param_ids.push_back(g.param_id);
      h.labels.push_back("param " + std::to_string(g.param_id));
    }
  for (const GradStatRecord& g : stats) h.steps.push_back(g.step);
  std::sort(h.steps.begin(), h.steps.end());
  h.steps.erase(std::unique(h.steps.begin(), h.steps.end()), h.steps.end());
  h.norm.assign(h.rows() * h.cols(), std::nan(""));
  h.flag.assign(h.rows() * h.cols(), 0);
  h.ratio.assign(h.rows() * h.cols(), std::nan(""));
  h.min_positive = std::numeric_limits<double>::infinity();
  for (const GradStatRecord& g : stats) {
    const auto c = static_cast<std::size_t>(std::lower_bound(h.steps.begin(), h.steps.end(), g.step) - h.steps.begin());
    const std::size_t i = row[g.param_id] * h.cols() + c;
    h.norm[i] = g.norm;
    if (g.update_norm && std::isfinite(*g.update_norm) && std::isfinite(g.param_norm) && g.param_norm > 0)
      h.ratio[i] = *g.update_norm / g.param_norm;
    if (g.nan_count > 0 || std::isnan(g.norm)) h.flag[i] = 1;
    else if (g.inf_count > 0 || std::isinf(g.norm)) h.flag[i] = 2;
    else if (g.norm > 0) h.min_positive = std::min(h.min_positive, g.norm), h.max = std::max(h.max, g.norm);
  }
  if (!std::isfinite(h.min_positive)) h.min_positive = 0;
  return h;
}

UpdateRatio GradientsModel::update_ratio(Id param_id) const {
  UpdateRatio u;
  const GradHeatmap& h = heatmap();
  auto row = std::find(h.param_ids.begin(), h.param_ids.end(), param_id);
  if (row == h.param_ids.end() || h.ratio.empty()) return u;
  const auto r = static_cast<std::size_t>(row - h.param_ids.begin());
  for (std::size_t c = 0; c < h.cols(); ++c) {
    const double x = h.ratio[r * h.cols() + c];
    if (std::isfinite(x)) {
      u.steps.push_back(h.steps[c]);
      u.ratio.push_back(x);
    } else if (!std::isnan(h.at(r, c)) || h.flag_at(r, c)) {  // a row exists for this step
      u.skipped.push_back(h.steps[c]);
    }
  }
  return u;
}

}  // namespace gb::viewer
