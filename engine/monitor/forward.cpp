// engine/monitor/forward.cpp — the forward pass: the first automatic step, the op that made the first NaN/Inf
// (its output holds one while its inputs did not), the zero fraction of ReLU outputs (dead ReLUs), and the order of
// the step's modules and ops (which layer comes after which: the depth rule and the links between alarms).
//
// Only ops of the training forward are checked: inside a module call, or recording autograd (grad mode on and an
// input that requires grad). The optimizer's in-place updates and DataLoader transforms are not.
#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "glassbox/autograd/grad_mode.h"
#include "monitor/deferred.h"
#include "monitor/monitor.h"
#include "monitor/run.h"
#include "monitor/scan.h"

namespace gb::monitor::detail {

namespace {

bool is_relu(const char* op) { return std::strcmp(op, "relu") == 0 || std::strcmp(op, "relu_") == 0; }

// What usually makes a NaN or an Inf in this op, and what to do about it.
std::string hint(const char* op) {
  std::string o(op);
  if (o.find("log") != std::string::npos)
    return "log of zero or of a negative value: clamp its input (x.clamp_min(1e-12)) or use a log-space op";
  if (o.rfind("div", 0) == 0 || o == "reciprocal") return "division by zero: add an epsilon to the denominator";
  if (o.find("sqrt") != std::string::npos) return "sqrt of a negative value: clamp its input to >= 0";
  if (o.rfind("pow", 0) == 0) return "a power of zero or of a negative number: clamp its input";
  if (o.find("exp") != std::string::npos || o.find("softmax") != std::string::npos)
    return "an overflow: subtract the maximum first (log-sum-exp) or use a wider dtype";
  return "an overflow or an invalid value: check this op's inputs and the learning rate";
}

}  // namespace

void on_node_recorded() noexcept {
  if (!active() || trace::detail::g_step_scopes.load(std::memory_order_relaxed) > 0) return;
  Run& r = run();
  if (r.auto_started || r.scoped_steps) return;  // racy reads: the locked path below decides
  std::lock_guard lock(r.mu);
  start_auto_steps_locked();
}

namespace {

// One input of a checked op, as the finding's message needs it.
struct InputFacts {
  int64_t ticket = -1;  // deferred: its scan (the producing op's, when a checked op made it this step)
  bool has_grad_fn = false, requires_grad = false;
  std::vector<int64_t> sizes;
  ScalarType dtype = ScalarType::Float;
};

InputFacts facts_of(const Tensor& in) {
  InputFacts f;
  f.has_grad_fn = in.defined() && in.grad_fn() != nullptr;
  f.requires_grad = in.defined() && in.requires_grad();
  if (in.defined()) {
    f.sizes = in.sizes().vec();
    f.dtype = in.scalar_type();
  }
  return f;
}

std::string shape_of(const InputFacts& in) {
  std::ostringstream o;
  o << IntArrayRef(in.sizes) << " " << gb::detail::dtype_name(in.dtype);
  return o.str();
}

// The finding of an op whose output s holds NaN/Inf: made here from finite inputs (the first of the step), or a
// NaN that entered from outside any traced op (once per run). scan_input(i) scans input i (at most once each).
template <class ScanInput>
void judge_nonfinite(const char* op, trace::Id span_id, int64_t module, int64_t step, const ScanResult& s,
                     const std::vector<InputFacts>& inputs, const ScanInput& scan_input) {
  Run& r = run();
  std::string shapes;
  int bad_input = -1;
  ScanResult bad;
  for (size_t i = 0; i < inputs.size(); ++i) {
    shapes += (i ? ", " : "") + shape_of(inputs[i]);
    if (bad_input < 0) {
      ScanResult in = scan_input(i);
      if (in.scanned && in.nonfinite()) {
        bad_input = static_cast<int>(i);
        bad = in;
      }
    }
  }
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::nonfinite_forward;
  a.severity = trace::Severity::error;
  if (step >= 0) a.step = step;
  a.span_id = span_id ? trace::OptId(span_id) : std::nullopt;
  a.module_id = module >= 0 ? trace::OptId(module) : std::nullopt;
  {
    std::lock_guard lock(r.mu);
    r.tainted_step = step;
    if (bad_input < 0) {
      if (r.forward_finding_step == step) return;  // one maker per step: the first
      r.forward_finding_step = step;
    } else {
      // The op passed on what it received. Report where a NaN entered from outside any traced op (the data, or a
      // parameter an earlier update broke) once per run, at the first op that saw it.
      if (r.entered_reported || r.forward_finding_step == step) return;
      const InputFacts& in = inputs[static_cast<size_t>(bad_input)];
      if (in.has_grad_fn) return;  // made by an op that was not checked (e.g. outside a module, without grad)
      r.entered_reported = true;
      r.forward_finding_step = step;
      a.value = static_cast<double>(bad.nonfinite());
      a.message = "input " + std::to_string(bad_input) + " of " + op + " in " + module_label(module) + " at step " +
                  std::to_string(step) + " already held " + count_text(bad.nan, bad.inf) + " (" + shape_of(in) +
                  ", " +
                  (in.requires_grad ? "a parameter: an earlier update made it non-finite; look at the "
                                      "first anomalies of the run and lower the learning rate"
                                    : "data that entered the model: check the batch and its transforms") +
                  ")";
    }
  }
  if (bad_input < 0) {
    a.value = static_cast<double>(s.nonfinite());
    a.message = std::string(op) + " in " + module_label(module) + " made " + count_text(s.nan, s.inf) +
                " from finite inputs at step " + std::to_string(step) + " (inputs " + shapes + "): likely " + hint(op);
  }
  report_nonfinite(std::move(a));
}

void add_relu_zeros(int64_t module, const char* op, int64_t zeros, int64_t n) {
  Run& r = run();
  std::lock_guard lock(r.mu);
  ReluState& st = r.relus[{module, op}];
  st.zeros += zeros;
  st.total += n;
}

// An op output checked on a device (deferred.h): judged when the step's scans are read back.
struct ForwardCheck final : PendingCheck {
  const char* op = nullptr;
  trace::Id span_id = 0;
  int64_t module = -1, step = -1, out = -1;
  std::vector<InputFacts> inputs;
  void judge() override {
    const ScanResult s = deferred_result(out);
    if (is_relu(op)) add_relu_zeros(module, op, s.zeros, s.n);
    if (!s.nonfinite()) return;
    judge_nonfinite(op, span_id, module, step, s, inputs, [&](size_t i) { return deferred_result(inputs[i].ticket); });
  }
};

// The outputs of the deferred checks of this step (their scans serve as their consumers' input scans), and the
// inputs scanned already (a parameter used by several ops is scanned once a step).
struct Produced {
  std::weak_ptr<TensorImpl> impl;
  uint32_t version = 0;
  int64_t ticket = -1;
};
thread_local std::unordered_map<const TensorImpl*, Produced> t_produced;
thread_local int64_t t_produced_step = -3;

int64_t ticket_of(const Tensor& t, int64_t step) {
  if (t_produced_step != step || t_produced.size() > 4096) {  // a cache: a tensor not found is scanned again
    t_produced.clear();
    t_produced_step = step;
  }
  auto it = t_produced.find(t.unsafe_impl());
  if (it != t_produced.end() && it->second.impl.lock() == t.impl_ptr() && it->second.version == t._version() &&
      !deferred_forgotten(it->second.ticket))
    return it->second.ticket;
  const int64_t ticket = defer_scan(t);
  t_produced[t.unsafe_impl()] = Produced{t.impl_ptr(), t._version(), ticket};
  return ticket;
}

void defer_output(const char* op, trace::Id span_id, int64_t module, int64_t step, const Tensor* const* inputs,
                  int n_inputs, const Tensor& out) {
  auto check = std::make_unique<ForwardCheck>();
  check->op = op;
  check->span_id = span_id;
  check->module = module;
  check->step = step;
  for (int i = 0; i < n_inputs; ++i) {
    check->inputs.push_back(facts_of(*inputs[i]));
    if (inputs[i]->defined()) check->inputs.back().ticket = ticket_of(*inputs[i], step);
  }
  check->out = defer_scan(out);
  t_produced[out.unsafe_impl()] = Produced{out.impl_ptr(), out._version(), check->out};
  defer_check(std::move(check));
}

// The step's forward on this thread: an entry where the module or the op changes (a few per layer, no allocation
// once the vector has grown). Bounded: a thread that never reaches an optimizer step (inference) starts over.
thread_local std::vector<ForwardOp> t_forward;
void note_forward(int64_t module, const char* op) {
  if (!t_forward.empty() && t_forward.back().module == module && t_forward.back().op == op) return;
  if (t_forward.size() >= (1u << 16)) t_forward.clear();
  t_forward.push_back({module, op});
}

}  // namespace

void take_forward_locked(Run& r) {
  if (t_forward.empty()) return;  // an optimizer step on a thread that ran no forward: keep the last one known
  const bool same = t_forward.size() == r.forward.size() &&
                    std::equal(t_forward.begin(), t_forward.end(), r.forward.begin(), [](const ForwardOp& a, const ForwardOp& b) {
                      return a.module == b.module && a.op == b.op;
                    });
  r.forward.swap(t_forward);
  t_forward.clear();
  if (same) return;  // the usual step: the same forward as the last, its positions known
  r.forward_first.clear();
  for (size_t i = 0; i < r.forward.size(); ++i) r.forward_first.emplace(r.forward[i].module, static_cast<int64_t>(i));
}

void check_output(const char* op, trace::Id span_id, const Tensor* const* inputs, int n_inputs, const Tensor& out) {
  if (!active() || !out.is_contiguous()) return;
  const bool deferred = deferrable(out);
  if (!deferred && !scannable(out)) return;
  const auto module = static_cast<int64_t>(trace::detail::t_module);
  if (module < 0) {
    bool records = false;
    if (GradMode::is_enabled())
      for (int i = 0; i < n_inputs && !records; ++i) records = inputs[i]->requires_grad();
    if (!records) return;
  }
  Run& r = run();
  if (!r.auto_started) on_node_recorded();  // the training forward begins: step 0
  note_forward(module, op);
  // A composite op hands on its inner op's result (linear -> addmm): that very tensor, unchanged, was just scanned.
  // (A weak reference: an address a freed tensor's block is reused at is never mistaken for it, and no tensor lives
  // longer because of it.)
  thread_local std::weak_ptr<TensorImpl> last;
  thread_local uint32_t last_version = 0;
  if (auto l = last.lock(); l && l.get() == out.unsafe_impl() && out._version() == last_version) return;
  last = out.impl_ptr();
  last_version = out._version();
  Busy busy;
  if (deferred) {
    defer_output(op, span_id, module, current_step(), inputs, n_inputs, out);
    return;
  }
  if (is_relu(op)) {  // its zeros (dead units) and finiteness in one pass
    const ZeroCount z = count_zeros(out);
    add_relu_zeros(module, op, z.zeros, z.n);
    if (z.finite) return;
  } else if (all_finite(out)) {
    return;  // the common case: one cheap pass
  }
  // The rare path: the counts for the message, and which inputs were already non-finite.
  std::vector<InputFacts> facts;
  for (int i = 0; i < n_inputs; ++i) facts.push_back(facts_of(*inputs[i]));
  judge_nonfinite(op, span_id, module, current_step(), scan(out), facts,
                  [&](size_t i) { return scannable(*inputs[i]) ? scan(*inputs[i]) : ScanResult{}; });
}

}  // namespace gb::monitor::detail
