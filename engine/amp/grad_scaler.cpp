// engine/amp/grad_scaler.cpp — GradScaler (glassbox/amp/grad_scaler.h): scaling, the per-optimizer unscale and
// found-inf bookkeeping, the scale update, and the state dict.
#include "glassbox/amp/grad_scaler.h"

#include <cmath>
#include <map>
#include <utility>

#include "cuda/kernels.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/factory.h"
#include "glassbox/core/error.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "instrument/probe.h"

#include "monitor/monitor.h"

namespace gb::amp {

GradScaler::GradScaler(const GradScalerOptions& options) : options_(options), scale_(float(options.init_scale())) {
  if (options_.enabled()) {
    GB_CHECK(options_.growth_factor() > 1.0, "The growth factor must be > 1.0. Got ", options_.growth_factor());
    GB_CHECK(options_.backoff_factor() < 1.0, "The backoff factor must be < 1.0. Got ", options_.backoff_factor());
    GB_CHECK(options_.growth_interval() >= 1, "GradScaler: growth_interval must be >= 1, got ",
             options_.growth_interval());
  }
}

Tensor GradScaler::scale(const Tensor& outputs) const {
  if (!is_enabled()) return outputs;
  GB_CHECK(outputs.defined(), "GradScaler.scale: outputs is undefined; pass the loss tensor");
  Tensor scaled = outputs * Scalar(double(scale_));
  monitor::detail::on_scaled_loss(scaled, double(scale_));  // traced: the step's loss is scaled / scale
  return scaled;
}

variable_list GradScaler::scale(const variable_list& outputs) const {
  variable_list out;
  out.reserve(outputs.size());
  for (const auto& t : outputs) out.push_back(scale(t));
  return out;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!is_enabled()) return;
  PerOptimizer& st = per_optimizer_[&optimizer];
  GB_CHECK(st.stage != Stage::unscaled,
           "unscale_() has already been called on this optimizer since the last "
           "update(). Call it at most once per iteration, between backward() and step().");
  GB_CHECK(st.stage != Stage::stepped,
           "unscale_() is being called after step(). Call unscale_() before step(), "
           "or not at all (step() unscales).");
  // PyTorch computes the inverse in double, then rounds it to float.
  const double inv_scale = double(float(1.0 / double(scale_)));
  bool found_inf = false;
  NoGradGuard no_grad;
  // contiguous cuda gradients: one fused check-and-unscale launch per (device, dtype) and up to kMaxUnscaleTensors
  // tensors, each device's verdict in a flag on it
  std::map<std::pair<int, int>, cuda_kernels::UnscaleLaunch> launches;
  std::map<int, Tensor> flags;
  auto launch = [](cuda_kernels::UnscaleLaunch& l) {
    cuda_kernels::non_finite_check_and_unscale(l);
    l.count = 0;
  };
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) {
      Tensor& g = p.mutable_grad();
      if (!g.defined()) continue;
      GB_CHECK(g.scalar_type() != kHalf,
               "Attempting to unscale FP16 gradients. Keep the parameters (and so their "
               "gradients) in float32 and let autocast cast them.");
      if (g.is_cuda() && g.is_contiguous() && g.is_floating_point()) {
        const int device = int(g.device().index());
        Tensor& flag = flags[device];
        if (!flag.defined()) flag = zeros({1}, TensorOptions().dtype(kFloat).device(g.device()));
        cuda_kernels::UnscaleLaunch& l = launches[{device, int(g.scalar_type())}];
        if (l.count == cuda_kernels::kMaxUnscaleTensors) launch(l);
        l.device = device;
        l.dtype = g.scalar_type();
        l.inv_scale = inv_scale;
        l.found_inf = flag.data_ptr<float>();
        l.data[l.count] = static_cast<char*>(g.data_ptr());
        l.numel[l.count] = g.numel();
        ++l.count;
        continue;
      }
      if (!found_inf && !gb::all(gb::isfinite(g)).item<bool>()) found_inf = true;
      g.mul_(inv_scale);
    }
  for (auto& [key, l] : launches) launch(l);
  st.found_inf = found_inf;
  st.device_flags.clear();
  for (auto& [device, flag] : flags) st.device_flags.push_back(flag);
  st.stage = Stage::unscaled;
}

bool GradScaler::resolve(PerOptimizer& st) {
  for (const Tensor& flag : st.device_flags) st.found_inf = st.found_inf || flag.item<float>() != 0.0f;
  st.device_flags.clear();
  return st.found_inf;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!is_enabled()) {
    optimizer.step();
    return true;
  }
  PerOptimizer& st = per_optimizer_[&optimizer];
  GB_CHECK(st.stage != Stage::stepped,
           "step() has already been called since the last update(). Call update() "
           "once per iteration, after step().");
  if (st.stage == Stage::ready) unscale_(optimizer);
  PerOptimizer& now = per_optimizer_[&optimizer];
  bool stepped = false;
  if (!resolve(now)) {
    optimizer.step();
    stepped = true;
  } else {
    monitor::detail::on_skipped_step(optimizer, double(scale_));  // traced: an amp_skipped_step row, the step ends
  }
  now.stage = Stage::stepped;
  return stepped;
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!is_enabled()) return;
  bool found_inf = false;
  if (new_scale) {
    scale_ = float(*new_scale);
  } else {
    GB_CHECK(!per_optimizer_.empty(),
             "No inf checks were recorded prior to update(). Call step(optimizer) (or "
             "unscale_(optimizer)) after backward() and before update().");
    for (auto& [opt, st] : per_optimizer_) found_inf = resolve(st) || found_inf;
    // PyTorch's _amp_update_scale_
    if (found_inf) {
      scale_ = float(double(scale_) * options_.backoff_factor());
      growth_tracker_ = 0;
    } else if (growth_tracker_ + 1 == options_.growth_interval()) {
      float grown = float(double(scale_) * options_.growth_factor());
      if (std::isfinite(grown)) scale_ = grown;
      growth_tracker_ = 0;
    } else {
      ++growth_tracker_;
    }
  }
  per_optimizer_.clear();
  if (!new_scale) monitor::detail::on_scale_update(double(scale_), found_inf);
  GB_TRACE_COUNTER("amp.grad_scale", scale_);
  GB_TRACE_COUNTER("amp.found_inf", found_inf ? 1 : 0);
}

double GradScaler::get_scale() const { return is_enabled() ? double(scale_) : 1.0; }

StateDict GradScaler::state_dict() const {
  StateDict sd;
  if (!is_enabled()) return sd;
  sd.insert("scale", optim::scalar_state(double(scale_)));
  sd.insert("growth_factor", optim::scalar_state(options_.growth_factor()));
  sd.insert("backoff_factor", optim::scalar_state(options_.backoff_factor()));
  sd.insert("growth_interval", optim::scalar_state(double(options_.growth_interval())));
  sd.insert("_growth_tracker", optim::scalar_state(double(growth_tracker_)));
  return sd;
}

void GradScaler::load_state_dict(const StateDict& state_dict) {
  if (!is_enabled()) return;
  GB_CHECK(!state_dict.is_empty(),
           "The source state dict is empty, possibly because it was saved from a disabled "
           "instance of GradScaler.");
  auto get = [&](const char* key) {
    const Tensor* t = state_dict.find(key);
    GB_CHECK(t != nullptr, "GradScaler.load_state_dict: missing key \"", key,
             "\"; expected scale, growth_factor, "
             "backoff_factor, growth_interval and _growth_tracker (a GradScaler's state_dict())");
    return optim::scalar_value(*t, key);
  };
  // read everything first: on error nothing changes
  double s = get("scale"), gf = get("growth_factor"), bf = get("backoff_factor"), gi = get("growth_interval"),
         tr = get("_growth_tracker");
  scale_ = float(s);
  options_.growth_factor(gf);
  options_.backoff_factor(bf);
  options_.growth_interval(int64_t(gi));
  growth_tracker_ = int64_t(tr);
}

}  // namespace gb::amp
