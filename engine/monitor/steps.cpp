// engine/monitor/steps.cpp — the end of a training step: the automatic steps (without a StepScope each
// optimizer.step() ends one), the step-level detectors (loss spikes, memory growing step after step, dead ReLUs,
// a collapsing AMP loss scale), and writing the step's autograd graph when it is due.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "glassbox/memory/caching_allocator.h"
#include "instrument/session.h"
#include "glassbox/memory/memory.h"
#include "monitor/deferred.h"
#include "monitor/monitor.h"
#include "monitor/run.h"

namespace gb::memory::detail {
void for_each_allocator(void (*f)(CachingAllocator&));  // engine/memory/memory.cpp
}

namespace gb::monitor::detail {

namespace {

std::string fmt(double v) { return number_text(v, 4); }
std::string bytes_text(double b) { return memory::format_size(static_cast<int64_t>(b)); }

bool graph_due(const Run& r, int64_t step, const trace::DetailPolicy& detail) {
  if (step >= 0 && step < r.cfg.graph_first_steps) return true;
  if (r.cfg.graph_every > 0 && step >= 0 && step % r.cfg.graph_every == 0) return true;
  // the first step of each periodic detail window, so every window has the graph its spans belong to
  if (step >= detail.first && detail.every > 0 && detail.window > 0 && step % detail.every == 0) return true;
  return r.graph.forced;
}

std::vector<memory::CachingAllocator*> all_allocators() {
  std::vector<memory::CachingAllocator*> allocators;
  static thread_local std::vector<memory::CachingAllocator*>* sink = nullptr;
  sink = &allocators;
  memory::detail::for_each_allocator([](memory::CachingAllocator& a) { sink->push_back(&a); });
  sink = nullptr;
  return allocators;
}

// One step_memory row per allocator that has allocated anything: its peaks since the previous step's end.
void emit_step_memory(int64_t step) {
  for (memory::CachingAllocator* a : all_allocators()) {
    const memory::WindowPeaks w = a->take_window_peaks();
    if (w.reserved_peak == 0) continue;  // a device this run never allocated on
    trace::StepMemoryRecord m;
    m.step = step;
    const Device d = a->device();
    m.device = d.is_cpu() ? trace::kCpu : d.is_meta() ? trace::kMeta : d.index();
    m.allocated_peak = w.allocated_peak;
    m.reserved_peak = w.reserved_peak;
    m.allocated_end = w.allocated;
    m.reserved_end = w.reserved;
    using C = memory::Category;
    auto peak = [&](C c) { return w.category_peak[size_t(c)]; };
    m.unknown_peak = peak(C::unknown);
    m.parameter_peak = peak(C::parameter);
    m.gradient_peak = peak(C::gradient);
    m.activation_peak = peak(C::activation);
    m.optimizer_state_peak = peak(C::optimizer_state);
    m.temporary_peak = peak(C::temporary);
    m.input_peak = peak(C::input);
    m.autograd_detail_peak = peak(C::autograd_detail);
    trace::emit(m);
  }
}

}  // namespace

// The loss against the window of recent (log) losses: a spike is both loss_spike_factor x the median and
// loss_spike_mads (scaled) MADs above it in log space, so the heavy tail of small, noisy losses late in training
// (one misclassified sample moves a 0.01 loss by 10x) is not a spike, while a bad batch's 100x is. And it must
// matter: at least loss_spike_start_frac of the highest median loss the run had (where it started) and record_factor
// x the largest jump over the median the run had, or a degrading run (the last window's median loss_spike_factor x
// the window's before) — a converged run's brief jumps, far below where it began, and a noisy run's usual hard
// batches are noise.
void judge_loss(Run& r, int64_t step) {
  if (r.loss_judged_step == step) return;  // at the optimizer step already (before the gradients' rules)
  r.loss_judged_step = step;
  if (!r.have_loss || !std::isfinite(r.last_loss) || r.last_loss <= 0) return;
  const double loss = r.last_loss, lg = std::log(loss);
  const Config& c = r.cfg;
  if (static_cast<int64_t>(r.losses.size()) >= c.warmup && step >= r.loss_quiet_until) {
    const double med = r.losses.median();
    const double ratio = std::exp(lg - med);
    const bool spiking =  // the spread (a walk over half the window) only where the ratio could make a spike
        ratio >= c.loss_spike_factor && lg - med > c.loss_spike_mads * std::max(r.losses.mad(), 0.05);
    // a jump this run's own noise does not make: record_factor x the largest it had (a run whose batches vary a
    // lot, one hard batch at 10x the median now and then, is judged against that)
    const double jump = lg - med;
    const double before = r.max_jump;
    const bool unprecedented = jump >= before + std::log(std::max(c.record_factor, 1.0));
    const bool large = lg >= r.loss_peak + std::log(std::max(c.loss_spike_start_frac, 1e-300)) && unprecedented;
    r.max_jump = std::max(r.max_jump, jump);
    // the run degrades: the median of the last `window` losses is loss_spike_factor x the median of the window
    // before it, beyond loss_spike_mads x the noise of such a difference (a level that moved, not one hard batch,
    // nor a few), and above converged_loss_frac x where the run started
    bool degraded = false;
    if (spiking && r.loss_history.size() == 2 * r.losses.capacity()) {
      // the 2 x window losses up to this step's (not yet pushed): the oldest of the history drops out
      const auto cap = static_cast<std::ptrdiff_t>(r.losses.capacity());
      std::vector<double> older(r.loss_history.begin() + 1, r.loss_history.begin() + 1 + cap);
      std::vector<double> newer(r.loss_history.begin() + 1 + cap, r.loss_history.end());
      newer.push_back(lg);
      auto median_of = [](std::vector<double>& v) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
      };
      // by more than the medians' own noise: a converged run's losses scatter over decades, and so do the medians
      // of 20 of them (the noise of a difference of two medians of n: about 1.25 sqrt(2 / n) standard deviations)
      const double now = median_of(newer), rise = now - median_of(older);
      const double noise = 1.25 * std::sqrt(2.0 / static_cast<double>(newer.size())) * r.losses.mad();
      // and back where it matters: above converged_loss_frac of where the run started (a converged run's median
      // moving from 1e-4 to 1e-3 has lost nothing a user would see)
      const bool matters = now >= r.loss_peak + std::log(std::max(c.converged_loss_frac, 1e-300));
      degraded = rise >= std::log(c.loss_spike_factor) && rise >= c.loss_spike_mads * noise && matters;
    }
    if (spiking && (large || degraded)) {
      trace::AnomalyRecord a;
      a.kind = trace::AnomalyKind::loss_spike;
      a.severity = trace::Severity::warning;
      a.value = loss;
      a.message = "loss spiked to " + fmt(loss) + " at step " + std::to_string(step) + ", " + fmt(ratio) +
                  "x the median " + fmt(std::exp(med)) + " of the last " + std::to_string(r.losses.size()) +
                  " steps" +
                  (large ? (std::isfinite(before) && before > 0
                              ? ", " + fmt(std::exp(jump - before)) + "x the largest jump the run had before"
                              : std::string())
                         : "; the median of the last " + std::to_string(r.losses.size()) + " steps is " +
                               fmt(c.loss_spike_factor) + "x or more the one before and back above " +
                               fmt(c.converged_loss_frac) + "x where the run started: the run degrades") +
                  ": look at this step's batch (corrupt or mislabelled data) or lower the learning rate";
      report(std::move(a));
      r.loss_quiet_until = step + (degraded && !large ? r.cfg.window : 1);
    }
  }
  r.losses.push(lg);
  r.loss_history.push_back(lg);
  if (r.loss_history.size() > 2 * r.losses.capacity()) r.loss_history.pop_front();
  if (static_cast<int64_t>(r.losses.size()) >= c.warmup) r.loss_peak = std::max(r.loss_peak, r.losses.median());
}

namespace {

// Live blocks grouped by what holds them: "category, op, module" -> bytes.
std::map<std::string, int64_t> held(const memory::CachingAllocator& a) {
  std::map<std::string, int64_t> out;
  for (const auto& seg : a.snapshot().segments)
    for (const auto& b : seg.blocks)
      if (b.state == memory::BlockState::active_allocated)
        out[std::string(memory::to_string(b.category)) + " made by " + (b.op.empty() ? "no op" : b.op) +
            (b.module.empty() ? "" : " in " + b.module)] += b.size;
  return out;
}

std::vector<memory::CachingAllocator*>* g_allocators = nullptr;  // for_each_allocator's callback writes here

// What is live at the end of `step` by the step that allocated it, and what earlier steps kept (their
// activations, temporaries, inputs...), with the ops and modules that made it (glassbox/memory/age.h).
std::string age_text(const memory::CachingAllocator& a, int64_t step) {
  const memory::MemoryByAge age = memory::memory_by_age(a.snapshot(), step);
  std::string s = "; live by the step that allocated it: ";
  for (memory::Age g : {memory::Age::this_step, memory::Age::earlier_steps, memory::Age::outside_steps})
    s += std::string(g == memory::Age::this_step ? "" : ", ") + memory::to_string(g) + " " +
         bytes_text(static_cast<double>(age.total(g)));
  if (age.kept > 0) s += "; kept by earlier steps " + memory::kept_text(age, 3);
  return s;
}

void judge_memory(Run& r, int64_t step) {
  const Config& c = r.cfg;
  std::vector<memory::CachingAllocator*> allocators;
  g_allocators = &allocators;  // under r.mu: one caller at a time
  memory::detail::for_each_allocator([](memory::CachingAllocator& a) { g_allocators->push_back(&a); });
  g_allocators = nullptr;
  for (memory::CachingAllocator* alloc : allocators) {
    const Device d = alloc->device();
    const int key = d.is_cpu() ? -1 : d.is_meta() ? -2 : d.index();
    const int64_t now = alloc->stats().allocated_bytes[memory::kAll].current;
    Run::Memory& m = r.memory[key];
    if (m.last >= 0 && now > m.last) {
      if (m.streak == 0) {
        m.streak_start = m.last;
        m.held_at_start.clear();
      }
      ++m.streak;
      if (m.streak == 1) m.held_at_start = held(*alloc);  // the baseline for "what grew" (the first rise is included)
    } else {
      m.streak = 0;
    }
    m.last = now;
    const int64_t growth = now - m.streak_start;
    if (m.alarmed || m.streak < c.memory_growth_steps || growth < c.memory_growth_min_bytes) continue;
    m.alarmed = true;
    std::vector<std::pair<int64_t, std::string>> grew;
    for (const auto& [what, bytes] : held(*alloc)) {
      auto it = m.held_at_start.find(what);
      int64_t delta = bytes - (it == m.held_at_start.end() ? 0 : it->second);
      if (delta > 0) grew.emplace_back(delta, what);
    }
    std::sort(grew.rbegin(), grew.rend());
    std::string where;
    for (size_t i = 0; i < grew.size() && i < 3; ++i)
      where += (i ? "; " : "") + grew[i].second + " +" + bytes_text(static_cast<double>(grew[i].first));
    trace::AnomalyRecord a;
    a.kind = trace::AnomalyKind::memory_growth;
    a.severity = trace::Severity::warning;
    const double per_step = static_cast<double>(growth) / static_cast<double>(m.streak);
    a.value = per_step;
    a.message = std::string(d.is_cpu()    ? "cpu"
                            : d.is_meta() ? "meta"
                                          : "cuda:" + std::to_string(d.index())) +
                " memory allocated at step end grew " + std::to_string(m.streak) + " steps in a row, by " +
                bytes_text(per_step) + " per step (" + bytes_text(static_cast<double>(growth)) + " in all, now " +
                bytes_text(static_cast<double>(now)) + ", step " + std::to_string(step) +
                "); grew most: " + (where.empty() ? "(unknown)" : where) + age_text(*alloc, step) +
                ". Something keeps tensors across steps: a loss or output kept with its graph (use loss.item() or "
                ".detach()), a list that grows, or an evaluation run without gb::NoGradGuard";
    report(std::move(a));
  }
}

void judge_relus(Run& r, int64_t step) {
  const Config& c = r.cfg;
  for (auto& [key, st] : r.relus) {
    if (st.total > 0) {
      const double frac = static_cast<double>(st.zeros) / static_cast<double>(st.total);
      st.streak = frac >= c.dead_relu_zero_frac ? st.streak + 1 : 0;
      if (st.streak >= c.dead_relu_steps && !st.alarmed) {
        st.alarmed = true;
        trace::AnomalyRecord a;
        a.kind = trace::AnomalyKind::dead_relu;
        a.severity = trace::Severity::warning;
        if (key.first >= 0) a.module_id = key.first;
        a.value = frac;
        a.message = std::string(key.second) + " in " + module_label(key.first) + " output " + fmt(100 * frac) +
                    "% zeros for " + std::to_string(st.streak) + " steps in a row (step " + std::to_string(step) +
                    "): its units are dead and pass no gradient; check the bias and initialization of the layer "
                    "before it, lower the learning rate, or use LeakyReLU/GELU";
        AlarmFacts facts;
        facts.position = relu_position(r, key.first, key.second);
        const std::string path = module_path(key.first);
        facts.what = std::string(key.second) + " in " + (path.empty() ? module_label(key.first) : path) + " dead";
        report(std::move(a), facts);
      }
    }
    st.zeros = st.total = 0;
  }
}

}  // namespace

void reset_step_memory() {
  for (memory::CachingAllocator* a : all_allocators()) a->take_window_peaks();  // the first step's window starts now
}

void emit_graph_locked(int64_t step) {
  Run& r = run();
  GraphCapture& g = r.graph;
  if (g.forced) ++r.forced_graphs;
  for (auto& n : g.nodes) {
    n.step = step;
    trace::emit(n);
  }
  for (auto& e : g.edges) {
    e.step = step;
    trace::emit(e);
  }
  g.clear();
}

void start_auto_steps_locked() {
  Run& r = run();
  if (r.auto_started || r.scoped_steps || trace::detail::g_step_scopes.load(std::memory_order_relaxed) > 0) return;
  r.auto_started = true;
  if (trace::current_step() < 0) trace::set_step(0);
}

// The end of a step: detectors, the graph, and (automatic steps) the steps row and the next step's number.
// scope_record: the StepScope's row (its step; the loss and lr it lacks are filled in), or nullptr.
void end_step(std::optional<double> lr, bool skipped, trace::StepRecord* scope_record) {
  judge_pending();  // what the step's device checks found, before the step's detectors judge
  Run& r = run();
  std::lock_guard lock(r.mu);
  if (lr) r.step_lr = lr;
  const bool automatic = scope_record == nullptr;
  if (automatic && trace::detail::g_step_scopes.load(std::memory_order_relaxed) > 0) return;  // the StepScope ends it
  const int64_t step = automatic ? current_step() : scope_record->step;
  if (step < 0) return;
  judge_loss(r, step);
  judge_relus(r, step);
  judge_memory(r, step);
  const trace::DetailPolicy detail = trace::active_detail();
  if (graph_due(r, step, detail))
    emit_graph_locked(step);
  else
    r.graph.clear();
  // the gradients measured at this step's optimizer step: their rows when due, their norm always
  std::optional<double> grad_norm;
  if (r.step_grads_of == step) {
    if (grad_stats_due(r, step, detail))
      for (const trace::GradStatRecord& g : r.step_grads) trace::emit(g);
    if (r.step_grad_measured && r.step_grad_finite) grad_norm = std::sqrt(r.step_grad_sumsq);
    r.step_grads.clear();
    r.step_grads_of = -1;
  }
  emit_step_memory(step);
  std::optional<double> loss = r.have_loss ? std::optional(r.last_loss) : std::nullopt;
  if (automatic) {
    trace::StepRecord rec;
    rec.step = step;
    rec.loss = loss;
    rec.lr = lr;
    if (r.step_scale > 0) rec.grad_scale = r.step_scale;
    rec.skipped = skipped;
    rec.grad_norm = grad_norm;
    trace::detail::take_step_account(rec);  // where the time went since the previous step's end, the batch
    trace::emit(rec);
    trace::set_step(step + 1);
  } else {
    r.scoped_steps = true;
    if (!scope_record->loss) scope_record->loss = loss;
    if (!scope_record->grad_scale && r.step_scale > 0) scope_record->grad_scale = r.step_scale;
    if (!scope_record->lr) scope_record->lr = r.step_lr;
    if (!scope_record->grad_norm) scope_record->grad_norm = grad_norm;
  }
  r.have_loss = false;
  r.step_scale = 0;
  r.step_lr.reset();
  if (r.pending.empty()) deferred_reset();  // every ticket of the step was judged
}

void on_scaled_loss(const Tensor& scaled, double scale) {
  if (!active()) return;
  Run& r = run();
  std::lock_guard lock(r.mu);
  r.scaled_loss = scaled.unsafe_impl();
  r.loss_scale = scale;
  r.step_scale = scale;
}

void on_scale_update(double new_scale, bool found_inf) {
  if (!active()) return;
  Run& r = run();
  std::lock_guard lock(r.mu);
  r.skip_streak = found_inf ? r.skip_streak + 1 : 0;
  const bool streak = r.skip_streak >= r.cfg.amp_skip_streak;
  const bool tiny = new_scale < r.cfg.amp_min_scale;
  if ((!streak && !tiny) || r.collapse_alarmed) return;
  r.collapse_alarmed = true;
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::amp_scale_collapse;
  a.severity = trace::Severity::warning;
  a.value = new_scale;
  a.message = "the AMP loss scale is collapsing: " +
              (streak ? std::to_string(r.skip_streak) + " steps in a row were skipped for Inf/NaN gradients"
                      : std::string("the scale fell below ") + fmt(r.cfg.amp_min_scale)) +
              " (scale now " + fmt(new_scale) + ", step " + std::to_string(current_step()) +
              "): the gradients are non-finite at any scale; look for the first non-finite anomaly (an overflow in "
              "the forward, a bad batch) or lower the learning rate";
  report(std::move(a));
}

namespace {
void on_step_scope_end(trace::StepRecord& rec) {
  if (!active()) return;
  try {
    end_step(std::nullopt, rec.skipped, &rec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glassbox: warning: the training monitor failed at the end of step %lld: %s\n",
                 static_cast<long long>(rec.step), e.what());
  }
}
const bool g_hooked = [] {
  trace::detail::g_step_end_hook.store(on_step_scope_end, std::memory_order_release);
  return true;
}();
}  // namespace

}  // namespace gb::monitor::detail
