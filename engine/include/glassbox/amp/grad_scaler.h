// glassbox/amp/grad_scaler.h — loss scaling for mixed precision (torch.amp.GradScaler): small float16 gradients
// would flush to zero, so the loss is multiplied by a large scale before backward, the gradients are divided by it
// before the optimizer uses them, and a step whose gradients overflowed (inf/NaN) is skipped while the scale
// backs off.
//
//   gb::amp::GradScaler scaler;                      // init_scale 65536, growth x2 every 2000 clean steps
//   for (...) {
//     opt.zero_grad();
//     { gb::autocast ac(gb::kCUDA); loss = loss_fn(model(x), y); }
//     scaler.scale(loss).backward();
//     scaler.unscale_(opt);                          // optional: the .grad are now the true gradients,
//     ...                                            // clip or inspect them here
//     bool stepped = scaler.step(opt);               // skips opt.step() if any gradient is inf/NaN
//     scaler.update();
//   }
//
// Semantics are PyTorch's: unscale_ once per optimizer per iteration (multiplies each .grad of the optimizer's
// param_groups by 1/scale in place and records whether any is non-finite); step unscales if that has not happened,
// then runs optimizer.step() only when every gradient was finite; update() multiplies the scale by backoff_factor
// after a skipped step (resetting the growth tracker) or by growth_factor after growth_interval finite ones in a
// row. update(new_scale) sets the scale directly. step returns whether optimizer.step() ran (PyTorch returns the
// step's return value, None when skipped; closures are not accepted, as PyTorch refuses them while enabled).
// float16 gradients are refused ("Attempting to unscale FP16 gradients."): keep fp32 master weights.
// The scale is kept as a float32 number, as PyTorch's scale tensor is.
//
// On cuda the check and the unscale of an optimizer's gradients are one kernel per device and dtype (PyTorch's
// _amp_foreach_non_finite_check_and_unscale_) writing a flag on the device; unscale_ does not wait for it, step()
// reads it (the one synchronization of a step, as in PyTorch).
//
// enabled=false makes scale() return its argument, unscale_/update do nothing, step just call optimizer.step(),
// get_scale() 1.0 and state_dict() empty. While a trace records, update() emits the counters "amp.grad_scale"
// (the new scale) and "amp.found_inf" (1 when the step was skipped).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/ordered_dict.h"
#include "glassbox/optim/optimizer.h"

namespace gb::amp {

struct GradScalerOptions {
  GB_ARG(double, init_scale) = 65536.0;
  GB_ARG(double, growth_factor) = 2.0;   // must be > 1
  GB_ARG(double, backoff_factor) = 0.5;  // must be < 1
  GB_ARG(int64_t, growth_interval) = 2000;
  GB_ARG(bool, enabled) = true;
};

class GradScaler {
 public:
  explicit GradScaler(const GradScalerOptions& options = {});

  // outputs * scale (differentiable; the dtype of outputs is kept).
  Tensor scale(const Tensor& outputs) const;
  variable_list scale(const variable_list& outputs) const;
  void unscale_(optim::Optimizer& optimizer);
  bool step(optim::Optimizer& optimizer);
  void update(std::optional<double> new_scale = std::nullopt);

  double get_scale() const;
  int64_t get_growth_tracker() const { return growth_tracker_; }
  bool is_enabled() const { return options_.enabled(); }
  double get_growth_factor() const { return options_.growth_factor(); }
  double get_backoff_factor() const { return options_.backoff_factor(); }
  int64_t get_growth_interval() const { return options_.growth_interval(); }
  void set_growth_factor(double v) { options_.growth_factor(v); }
  void set_backoff_factor(double v) { options_.backoff_factor(v); }
  void set_growth_interval(int64_t v) { options_.growth_interval(v); }

  // "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker" as 0-dim float64 tensors.
  StateDict state_dict() const;
  void load_state_dict(const StateDict& state_dict);

 private:
  enum class Stage { ready, unscaled, stepped };
  struct PerOptimizer {
    Stage stage = Stage::ready;
    bool found_inf = false;
    std::vector<Tensor> device_flags;  // cuda: the fused checks' flags, read (one sync) when the verdict is needed
  };
  // found_inf with the device flags folded in (and cleared).
  static bool resolve(PerOptimizer& st);

  GradScalerOptions options_;
  float scale_;
  int64_t growth_tracker_ = 0;
  std::unordered_map<const optim::Optimizer*, PerOptimizer> per_optimizer_;
};

}  // namespace gb::amp
