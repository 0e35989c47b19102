// glassbox/monitor/monitor.h — the training monitor: gradient statistics and anomaly detectors, on whenever a trace
// records (GLASSBOX_TRACE=run.db), with no change to the training loop.
//
// While a trace records, the engine writes (traces/SCHEMA.md):
//   - steps: without a gb::trace::StepScope, each optimizer.step() (or a step a GradScaler skips) ends a step,
//     numbered from 0, with the loss of the last scalar backward() started from and the first group's lr;
//   - op_details for every op span, and the autograd seq on the op span that recorded a node;
//   - graph_nodes / graph_edges: the autograd graph of the first `graph_first_steps` steps, of the step where the
//     first anomaly fires, and every `graph_every` steps;
//   - grad_stats for every parameter (L2 norm, max |g|, NaN/Inf counts, zero fraction, parameter norm, the norm of
//     the update the optimizer applied), measured at every step (the detectors and steps.grad_norm use them) and
//     written in the detail policy's first steps and windows (instrument/detail.h), every `grad_stats_every`
//     steps, and in a step where an anomaly fired;
//   - anomalies: the first op that made a NaN/Inf from finite inputs (forward), the first backward node that made
//     one from finite gradients (backward; info when a later node masked it), a non-finite loss, exploding and
//     vanishing gradient norms against each parameter's own rolling baseline, an update far too large for its
//     parameter, dead ReLUs, loss spikes, skipped AMP steps and a collapsing loss scale, memory growing step after
//     step, and a backward that accumulates into a .grad an optimizer step already used (a missing zero_grad).
//
// Settings: GLASSBOX_ANOMALY=off|record|raise (raise: gb::AnomalyError at the first non-finite value, with the
// message the trace gets — for a debugger), GLASSBOX_ANOMALY_CONF="key=value,..." with the keys of Config
// (e.g. GLASSBOX_ANOMALY_CONF=window=50,explode_factor=20), GLASSBOX_GRAD_STATS_EVERY=N, GLASSBOX_GRAPH_EVERY=N;
// or gb::monitor::set_config(...) in code. Read at the start of each trace session.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "glassbox/core/error.h"

namespace gb {

// Thrown under GLASSBOX_ANOMALY=raise (or Config::mode = Mode::raise) at the first non-finite value.
class AnomalyError : public Error {
 public:
  using Error::Error;
};

namespace monitor {

enum class Mode { off, record, raise };

// Every threshold of the detectors. Defaults are documented in traces/SCHEMA.md (anomalies) and tested on healthy
// runs of every sample: a healthy run raises no warning.
struct Config {
  Mode mode = Mode::record;
  int64_t grad_stats_every = 10;      // grad_stats rows every N steps after the detail's first steps (0: never)
  int64_t graph_every = 0;            // the autograd graph every N steps (0: only the first steps and the anomaly's)
  int64_t graph_first_steps = 2;      // the graph of steps 0 .. N-1
  int64_t window = 20;                // rolling window (steps) of the per-parameter and loss baselines
  int64_t warmup = 10;                // steps a baseline needs before it judges
  double explode_factor = 10;         // exploding: norm >= factor x the window's median ...
  double record_factor = 3;           // a sudden spike (a gradient norm, the loss's jump over its median) must also
                                      // be this x the largest the run had before: a noisy run's usual outliers
                                      // are not alarms
  double vanish_factor = 1e-2;        // vanishing: a parameter's share of the whole gradient <= factor x its
                                      // window's median share, for sustained_steps in a row
  double spread_mads = 6;             // exploding: beyond this many (scaled) MADs of log norm from the median
  double sustained_factor = 4;        // sustained: norm >= (or <= 1/) this x the baseline median ...
  int64_t sustained_steps = 8;        // ... for this many steps in a row
  double update_ratio_max = 1.0;      // update_norm / param_norm (before the update) above this ...
  int64_t update_ratio_steps = 3;     // ... for this many steps in a row: "learning rate too high for layer X"
  double update_ratio_once = 3;       // one update of a weight (2+ dims, not zero at first) >= this x its norm
  double depth_factor = 100;          // depth: a layer's |g|/|w| this many times below (above) the last layer's
  double converged_loss_frac = 0.1;   // the loss below this x its highest median: converged (depth not judged)
  int64_t no_gradient_steps = 10;     // a parameter with no (or an all-zero) gradient in its first N steps
  double dead_relu_zero_frac = 0.99;  // a ReLU whose outputs are this fraction zero ...
  int64_t dead_relu_steps = 5;        // ... for this many steps in a row
  double loss_spike_factor = 3;       // loss >= factor x the window's median ...
  double loss_spike_mads = 4;         // ... and beyond this many (scaled) MADs of log loss, and either ...
  double loss_spike_start_frac = 0.5; // ... >= this x the highest median loss of the run (where it started) and
                                      // record_factor x its largest jump, or the last window's median
                                      // loss_spike_factor x the window's before (the run degrades)
  int64_t memory_growth_steps = 6;    // allocated at step end rising this many steps in a row ...
  int64_t memory_growth_min_bytes = 1 << 20;  // ... by at least this much in all
  int64_t amp_skip_streak = 5;                // this many skipped AMP steps in a row, or ...
  double amp_min_scale = 1.0;                 // ... the loss scale below this: the scale is collapsing
  int64_t max_per_kind = 20;                  // at most this many anomaly rows of one kind per run
};

Config config();
void set_config(const Config& c);
// Applies "key=value,key=value" (Config's field names; mode=off|record|raise) to base; throws gb::Error naming the
// bad key or value and listing the valid keys.
Config parse_config(std::string_view text, Config base = {});

}  // namespace monitor
}  // namespace gb
