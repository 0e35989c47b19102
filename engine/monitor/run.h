// engine/monitor/run.h — internal: the state of one traced run (reset when a session starts), shared by the
// monitor's files: per-parameter baselines and streaks, the loss window, the graph of the current step, the
// anomaly counts. One mutex guards it; the hot per-op path takes it only when it finds something.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/monitor/monitor.h"
#include "instrument/detail.h"
#include "instrument/probe.h"

namespace gb::monitor::detail {

// The last `capacity` finite values (a rolling window) and their robust centre and spread. The values are also
// kept sorted (an insertion and an erasure per push, no allocation once full), so the median is a lookup and the
// MAD a walk outwards from it over half the window: this runs for every parameter at every step.
class Window {
 public:
  Window() = default;
  explicit Window(size_t capacity) : cap_(capacity) {}
  void push(double v);  // non-finite values are not pushed
  size_t size() const { return values_.size(); }
  double median() const;
  double mad() const;  // median absolute deviation from the median, times 1.4826 (a standard deviation for normal data)
  void set_capacity(size_t c) { cap_ = c; }
  size_t capacity() const { return cap_; }

 private:
  size_t cap_ = 20;
  size_t next_ = 0;
  std::vector<double> values_;  // in arrival order (a ring once full)
  std::vector<double> sorted_;  // the same values, ascending
};

struct ParamState {
  int64_t param_id = 0;  // params.id
  int64_t module_id = -1;
  std::string label;  // "fc1.weight"
  Window log_norms;   // log of finite, positive gradient norms
  int64_t seen = 0;   // steps with statistics
  int64_t high_streak = 0;
  double streak_ref = 0;   // the baseline median when the streak began
  double streak_loss = 0;  // the median (log) loss when it began
  int64_t ratio_streak = 0;
  int64_t quiet_until = -1;        // no further norm alarm before this step
  int64_t ratio_quiet_until = -1;  // no further update-ratio alarm before this step
  // what param_rules.cpp and depth.cpp judge besides the norm
  double peak_median = -std::numeric_limits<double>::infinity();  // the highest median of log_norms: the gradients
                                                                  // the layer learned with
  double max_log_norm = -std::numeric_limits<double>::infinity();  // the largest log norm it had
  Window log_shares;          // log of its share of the step's whole gradient (norm / the norm of all gradients)
  int64_t vanish_streak = 0;  // steps in a row its share collapsed
  bool vanished = false;      // alarmed, and not recovered since (one alarm per collapse)
  int64_t vanish_from = 0;
  double initial_norm = -1;  // the parameter's norm before its first measured update (-1: not seen yet)
  int64_t dims = 0;          // of the parameter
  bool embedding = false;    // owned by an Embedding (a sparse gradient by design)
  bool weight = false;       // a layer's weight: 2+ dims, named "weight" or "..._weight", not an embedding's
  int64_t first_step = -1;   // the step it was first measured
  Window log_depth;          // log(|g| / |w|): the depth rule's
  int64_t held = 0, with_grad = 0, nonzero = 0;  // optimizer steps that held it, with a gradient, a non-zero one
  bool no_gradient_named = false;
};

// One measured parameter at an optimizer step (grad_stats.cpp), what the rules judge.
struct Measured {
  ParamState* st = nullptr;
  size_t group = 0;         // its parameter group's index
  bool has_grad = false;    // .grad defined
  bool requires_grad = true;
  bool scanned = false;     // its gradient was measured (norm, zeros, n)
  double norm = 0, param_norm = 0;  // param_norm: before the update
  std::optional<double> update;
  int64_t zeros = 0, n = 0;
};

// An op of the step's forward, where the module or the op changes (forward.cpp): the order of the layers.
struct ForwardOp {
  int64_t module = -1;
  const char* op = nullptr;  // a static name
};

// An anomaly row written this run, for the ones after it to name as their cause (causes.cpp).
struct Alarm {
  trace::Id id = 0;
  trace::AnomalyKind kind = trace::AnomalyKind::nonfinite_forward;
  int64_t step = -1, module = -1;
  int64_t position = -1;  // dead_relu: the ReLU's place in the forward
  bool once = false;      // update_ratio: one outsized update (not the sustained rule)
  int64_t group = -1;     // update_ratio: the parameter group
  std::string what;       // "one update of fc2.weight was 13x its norm"
};
// What a finding knows beyond its row: for linking it, and for later rows to link to it.
struct AlarmFacts {
  int64_t position = -1;  // a dead ReLU's place in the forward
  bool once = false;      // an outsized update
  bool zero = false;      // no_gradient: defined but exactly zero (not: never received)
  int64_t group = -1;     // update_ratio: the parameter group
  std::string what;
};

struct ReluState {
  int64_t zeros = 0, total = 0;  // this step
  int64_t streak = 0;
  bool alarmed = false;
};

// The autograd graph of the current step, captured at each backward's discovery; written when the step ends if
// it is due (first steps, every N, the first anomaly's step).
struct GraphCapture {
  std::vector<trace::GraphNodeRecord> nodes;  // step set when written
  std::vector<trace::GraphEdgeRecord> edges;
  bool forced = false;  // an anomaly needs this step's graph
  void clear() {        // keeps the vectors' capacity: a graph is captured at every step
    nodes.clear();
    edges.clear();
    forced = false;
  }
};

// The node that sent a parameter its gradient in the last backward (backward.cpp), for a non-finite gradient that
// grad_stats finds at the optimizer step.
struct LeafProducer {
  std::string node;
  const char* forward_op = nullptr;
  uint64_t forward_span_id = 0;
  int64_t module_id = -1;
  int64_t graph_node_id = 0;  // 0: not captured
  bool received_nonfinite = false;
  bool scaled = false;  // the backward started from a GradScaler's scaled loss
  int64_t step = -1;
};

// Where on its thread a check was made: the innermost open span and the module. A finding judged later is
// emitted from there (the trace fills a row's missing span and module from the emitting thread's).
struct CheckSite {
  trace::detail::ThreadBuffer* buffer = trace::detail::t_buffer;
  std::uint32_t span = trace::detail::t_buffer ? trace::detail::t_buffer->current : 0;
  std::int32_t module = trace::detail::t_module;
};
// Makes `site` the thread's current span and module for a scope (span 0 when judged on another thread).
class AtSite {
 public:
  explicit AtSite(const CheckSite& site)
      : buffer_(trace::detail::t_buffer), span_(buffer_ ? buffer_->current : 0), module_(trace::detail::t_module) {
    if (buffer_) buffer_->current = site.buffer == buffer_ ? site.span : 0;
    trace::detail::t_module = site.module;
  }
  ~AtSite() {
    if (buffer_) buffer_->current = span_;
    trace::detail::t_module = module_;
  }
  AtSite(const AtSite&) = delete;
  AtSite& operator=(const AtSite&) = delete;

 private:
  trace::detail::ThreadBuffer* buffer_;
  std::uint32_t span_;
  std::int32_t module_;
};

// A detector's finding-to-be whose scans were deferred (deferred.h): judged when the step's scans are read back, in
// the order the checks happened (a forward op's output, a loss, a whole backward), at the site it was made.
struct PendingCheck {
  CheckSite site;
  virtual ~PendingCheck() = default;
  virtual void judge() = 0;  // run().mu NOT held; may throw gb::AnomalyError (raise mode)
};

struct RunState {
  Config cfg;
  // steps
  bool auto_started = false;  // the engine numbers steps (no StepScope)
  // A StepScope has ended a step: the program numbers its steps, so the engine never starts its own (ops after
  // the last StepScope, e.g. an evaluation pass, belong to no step).
  bool scoped_steps = false;
  double last_loss = std::numeric_limits<double>::quiet_NaN();
  bool have_loss = false;
  const void* scaled_loss = nullptr;  // TensorImpl of the GradScaler's last scaled loss
  double loss_scale = 0;              // its scale (0: no GradScaler)
  bool backward_scaled = false;       // the last backward started from the scaled loss
  double step_scale = 0;              // grad_scale of the step being run
  std::optional<double> step_lr;      // the first group's lr at the step's optimizer.step()
  Window losses;
  int64_t loss_quiet_until = -1;
  // anomalies
  std::array<int64_t, trace::kAnomalyKinds> counts{};
  int64_t anomalies = 0;
  int64_t forward_finding_step = -2;   // the step of the last forward non-finite finding (one per step)
  bool entered_reported = false;       // a NaN/Inf that no traced op made (data or parameters) was reported
  bool loss_nonfinite = false;         // the last loss was NaN/Inf (a row is written when it becomes so)
  int64_t tainted_step = -2;           // a step whose forward or loss already went non-finite
  int64_t zero_grad_step = -2;         // the step of the last missing-zero_grad row (one per step)
  int64_t backward_finding_step = -2;  // the step of the last nonfinite_backward row
  std::unordered_map<const void*, LeafProducer> leaf_producers;  // parameter TensorImpl -> who sent its gradient
  // the graph
  GraphCapture graph;
  int64_t next_node_id = 1;
  int64_t forced_graphs = 0;
  std::unordered_map<std::string, trace::Id> node_names;
  std::unordered_map<const char*, trace::Id> node_literals;  // the same, keyed by a node's static name (no string)
  // parameters and ReLUs
  std::unordered_map<const void*, ParamState> params;
  std::map<std::pair<int64_t, const char*>, ReluState> relus;  // (module id, op) -> this step's zeros
  // memory at step end, per device (-1 cpu, -2 meta)
  struct Memory {
    int64_t last = -1, streak = 0, streak_start = 0;
    std::map<std::string, int64_t> held_at_start;  // "category op module" -> bytes, when the streak began
    bool alarmed = false;
  };
  std::map<int, Memory> memory;
  // AMP
  int64_t skip_streak = 0;
  bool collapse_alarmed = false;
  // checks whose scans run on a device, to judge at the step's end (or at once in raise mode)
  std::vector<std::unique_ptr<PendingCheck>> pending;
  // the step's gradient statistics: measured at every optimizer step, written when due (grad_stats_due)
  std::vector<trace::GradStatRecord> step_grads;
  int64_t step_grads_of = -1;        // the step they belong to
  double step_grad_sumsq = 0;        // sum of the gradients' squared norms (steps.grad_norm)
  bool step_grad_measured = false, step_grad_finite = true;
  int64_t anomaly_step = -1;         // the last step an anomaly row was written for
  // diagnosis: the layers' order, the alarms so far, the loss's highest median, the depth rule's streaks
  std::vector<ForwardOp> forward;  // the last step's forward (module and op at each change)
  std::unordered_map<int64_t, int64_t> forward_first;  // module -> its first place in `forward`
  std::vector<Alarm> alarms;
  trace::Id next_anomaly_id = 1;
  double loss_peak = -std::numeric_limits<double>::infinity();  // highest median of log losses
  std::deque<double> loss_history;  // the last 2 x window log losses (a degrading run: one window against the last)
  double max_jump = -std::numeric_limits<double>::infinity();  // the largest log(loss / median) the run had
  int64_t loss_judged_step = -2;  // judge_loss ran for this step
  std::array<int64_t, 2> depth_streak{};  // vanishing, exploding with depth
  std::array<bool, 2> depth_alarmed{};
};
struct Run : RunState {
  std::mutex mu;
};

Run& run();
// A parameter's params.id, module and "path.name" label (names.cpp); false when no traced module owns it.
bool param_name(const TensorImpl* param, int64_t& param_id, int64_t& module_id, std::string& label);
Config session_config();  // the settings read at session start (environment, then set_config)

// Queues an anomalies row (the step defaults to the current one) unless its kind has reached max_per_kind: gives it
// its id, links it to an earlier alarm that explains it (link_cause) and remembers it for later ones. Returns its
// id, 0 when not queued. Call with run().mu held.
trace::Id report(trace::AnomalyRecord r, const AlarmFacts& facts = {});
// A warning row about one parameter (its param_id and module), with its value and message.
trace::AnomalyRecord param_anomaly(trace::AnomalyKind kind, const ParamState& st, double value, std::string message);
// report() and, in raise mode, throw gb::AnomalyError with the message. Call with run().mu NOT held.
void report_nonfinite(trace::AnomalyRecord r);

int64_t current_step();
std::string shape_text(const Tensor& t);           // "[64, 784] float32"
std::string count_text(int64_t nan, int64_t inf);  // "12 NaN and 3 Inf"
std::string number_text(double v, int digits);     // "%.<digits>g": 0.0095, 1.2e+03

// backward.cpp: what usually makes a NaN/Inf in this backward node, and what to do about it.
std::string node_hint(const std::string& node_name);

// Queues a deferred check (raise mode: judges everything queued at once). mu NOT held; may throw in raise mode.
void defer_check(std::unique_ptr<PendingCheck> check);
// Judges every queued check in order (reading the deferred scans back: one wait per device). mu NOT held.
void judge_pending();

// Whether step's grad_stats rows are written (the statistics are measured at every step): the detail policy's
// first steps and windows, every grad_stats_every steps, and a step where an anomaly fired. Call with mu held.
bool grad_stats_due(const Run& r, int64_t step, const trace::DetailPolicy& detail);

// param_rules.cpp: exploding, vanishing, updates too large, no gradient; depth.cpp: gradient flow through depth.
// Once per optimizer step over every parameter it holds (lrs: each group's). Call with mu held.
void judge_params(Run& r, std::vector<Measured>& measured, const std::vector<double>& lrs, int64_t step);
void judge_depth(Run& r, const std::vector<Measured>& measured, int64_t step);

// causes.cpp: the earlier alarm that explains a new row (cause_id, cause), from the layers' order and the steps.
void link_cause(Run& r, trace::AnomalyRecord& a, const AlarmFacts& facts);
int64_t forward_position(const Run& r, int64_t module);                 // its first op in r.forward; -1: none
int64_t relu_position(const Run& r, int64_t module, const char* op);   // a ReLU op's place in r.forward
int64_t layer_before(const Run& r, int64_t position);                   // the layer the forward calls before it
int64_t layer_after(const Run& r, int64_t position);                    // the next layer the forward calls after it

// forward.cpp: this thread's record of the step's forward into r.forward (when it has one). Call with mu held.
void take_forward_locked(Run& r);

// steps.cpp
// The step's loss against its window (a loss spike): at the optimizer step, before the gradients' rules (a bad
// batch explains the gradients it makes), or at the step's end without one. Once per step. Call with mu held.
void judge_loss(Run& r, int64_t step);
void start_auto_steps_locked();                                                          // step 0 begins (no StepScope)
void end_step(std::optional<double> lr, bool skipped, trace::StepRecord* scope_record);  // mu NOT held
void emit_graph_locked(int64_t step);
void reset_step_memory();  // the allocators' step peaks start over (a session's start)

}  // namespace gb::monitor::detail
