// engine/monitor/monitor.h — internal: the hooks the engine calls so that a traced run writes its gradient
// statistics, steps, autograd graphs and anomalies (the public side is glassbox/monitor/monitor.h).
//
// Who calls what:
//   observer.cpp          the forward and backward hooks, for core and autograd: they never include this header but
//                         report to the observers of core/observer.h, and connect_engine makes the monitor one of
//                         them while a session records —
//                           core/op_scope.cpp    on_node_recorded (the first step starts), check_output (forward
//                                                non-finite, dead ReLUs)
//                           autograd/engine.cpp  on_backward_roots (the loss), BackwardWatch (non-finite backward,
//                                                the graph)
//                           autograd/node.cpp    on_accumulate (a missing zero_grad)
//   nn/parallel/distributed.cpp  on_reduced_nonfinite (another rank's NaN, arrived through the all-reduce)
//   optim/*.cpp           OptimizerStep around each step(); note_update (or note_step_sums) for each parameter
//   amp/grad_scaler.cpp   on_scaled_loss, on_skipped_step, on_scale_update
//   nn/module_call.cpp    note_module / note_param (names for messages, param ids for grad_stats)
// Every hook starts with active() — one relaxed load when no trace records — and does nothing when it is false.
// The state of a run (baselines, streaks, the graph of the current step) lives in run.h and is reset when a
// session starts.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "glassbox/autograd/node.h"
#include "glassbox/core/tensor.h"
#include "glassbox/monitor/monitor.h"
#include "instrument/probe.h"

namespace gb::optim {
class Optimizer;
}

namespace gb::monitor::detail {

extern std::atomic<int> g_mode;           // Mode of the session that records (Mode::off when none)
inline thread_local bool t_busy = false;  // the monitor's own work (a scan's contiguous copy) is not monitored
// False, always, in a build without probes (-DGLASSBOX_PROBES=OFF): nothing the monitor finds could be written.
inline bool active() noexcept {
#ifdef GLASSBOX_NO_PROBES
  return false;
#else
  return trace::enabled() && g_mode.load(std::memory_order_relaxed) != static_cast<int>(Mode::off) && !t_busy;
#endif
}
// Marks the monitor's own work on this thread for its lifetime.
struct Busy {
  bool prev = t_busy;
  Busy() { t_busy = true; }
  ~Busy() { t_busy = prev; }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
};

// Registers (on) or removes the monitor's engine observer (observer.cpp); run.cpp's session hook calls it.
void connect_engine(bool on);

// ---- names (names.cpp): what messages and grad_stats rows call modules and parameters ----
void note_module(uint32_t id, std::string path, std::string type);
void note_param(const TensorImpl* param, int64_t param_id, uint32_t module_id, const std::string& name);
// Every parameter of a root module that runs traced, by its path ("unused.weight"): names the parameters of
// submodules that never run (a branch the forward skips) in messages. param_label: false when none is known.
void note_param_label(const TensorImpl* param, std::string label);
bool param_label(const TensorImpl* param, std::string& label);
std::string module_label(int64_t module_id);  // "module encoder.fc1 (Linear)", "the root module (Net)", "no module"
std::string module_path(int64_t module_id);   // "encoder.fc1"; "" for the root or an unknown module
std::string module_type(int64_t module_id);   // "Linear"; "" when unknown

// ---- forward (forward.cpp) ----
void on_node_recorded() noexcept;  // a node was recorded while tracing: the first automatic step begins
// The result of op `op` (span `span_id`, inputs as given to its OpScope): NaN/Inf made from finite inputs, and the
// zero fraction of ReLU outputs. May throw gb::AnomalyError (raise mode).
void check_output(const char* op, trace::Id span_id, const Tensor* const* inputs, int n_inputs, const Tensor& out);

// ---- backward (backward.cpp) ----
void on_backward_roots(const variable_list& roots);  // the loss (a scalar root): its value, a non-finite loss
class BackwardWatch {
 public:
  BackwardWatch();  // inactive unless active()
  ~BackwardWatch();
  bool on() const { return on_; }
  void discovered(const std::vector<autograd::Node*>& order);  // the graph, before anything runs or is released
  // After node ran: the gradients it sends along its next edges.
  void node_done(autograd::Node* node, const variable_list& sent);
  // Emits what this backward found; may throw gb::AnomalyError (raise mode). A backward whose gradients are on a
  // device (deferred.h) is judged when the step's scans are read back.
  void finish();

  struct State;  // backward.cpp

 private:
  std::unique_ptr<State> s_;
  bool on_ = false;
};

// ---- leaves (grad_stats.cpp) ----
void on_accumulate(const Tensor& param);  // before backward adds into param.grad
// An all-reduce (DistributedDataParallel's bucket `bucket`) wrote a gradient holding NaN/Inf into param.grad where
// this rank's own was finite: another rank's was not. Reported once per step as where this rank's non-finite
// gradients came from, and the leaf check does not blame this rank's backward node for them.
void on_reduced_nonfinite(const Tensor& param, int64_t bucket);

// ---- optimizer steps (grad_stats.cpp, steps.cpp) ----
// Open for the duration of one Optimizer::step(): gradient statistics and the per-parameter detectors when it
// ends, the grads marked as used (missing zero_grad), and the end of an automatic step.
class OptimizerStep {
 public:
  explicit OptimizerStep(const optim::Optimizer& opt);
  ~OptimizerStep();
  OptimizerStep(const OptimizerStep&) = delete;
  OptimizerStep& operator=(const OptimizerStep&) = delete;

 private:
  trace::PhaseScope phase_{trace::Phase::optimizer};  // the step's optimizer_ns, whether the monitor is on or not
  const optim::Optimizer* opt_ = nullptr;
  int uncaught_ = 0;
};
// The update the optimizer applies to param: coef_p * param + coef_a * a / b (b undefined: 1). Its L2 norm goes to
// grad_stats.update_norm. Call before param changes; free unless the step's statistics are due.
void note_update(const Tensor& param, double coef_p, const Tensor& a, const Tensor& b, double coef_a);
// An optimizer that fuses its update with the statistics (optim/sgd_update.h) asks step_stats_due() and, when it
// is true, hands over what its one pass measured: the gradient as a scan would have read it, the update's norm and
// the parameter's norm before the update. grad_stats then reads neither the gradient nor the parameter again.
struct ScanResult;
bool step_stats_due();
void note_step_sums(const Tensor& param, const ScanResult& grad, double update_norm, double param_norm_before);

// ---- AMP (steps.cpp) ----
void on_scaled_loss(const Tensor& scaled, double scale);
void on_skipped_step(const optim::Optimizer& opt, double scale);  // GradScaler::step found inf/NaN
void on_scale_update(double new_scale, bool found_inf);

}  // namespace gb::monitor::detail
