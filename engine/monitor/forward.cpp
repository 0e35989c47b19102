// engine/monitor/forward.cpp — the forward pass: the first automatic step, the op that made the first NaN/Inf
// (its output holds one while its inputs did not), and the zero fraction of ReLU outputs (dead ReLUs).
//
// Only ops of the training forward are checked: inside a module call, or recording autograd (grad mode on and an
// input that requires grad). The optimizer's in-place updates and DataLoader transforms are not.
#include <cstring>
#include <memory>

#include "glassbox/autograd/grad_mode.h"
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

void check_output(const char* op, trace::Id span_id, const Tensor* const* inputs, int n_inputs, const Tensor& out) {
  if (!active() || !scannable(out) || !out.is_contiguous()) return;
  const auto module = static_cast<int64_t>(trace::detail::t_module);
  if (module < 0) {
    bool records = false;
    if (GradMode::is_enabled())
      for (int i = 0; i < n_inputs && !records; ++i) records = inputs[i]->requires_grad();
    if (!records) return;
  }
  Run& r = run();
  if (!r.auto_started) on_node_recorded();  // the training forward begins: step 0
  // A composite op hands on its inner op's result (linear -> addmm): that very tensor, unchanged, was just scanned.
  // (A weak reference: an address a freed tensor's block is reused at is never mistaken for it, and no tensor lives
  // longer because of it.)
  thread_local std::weak_ptr<TensorImpl> last;
  thread_local uint32_t last_version = 0;
  if (auto l = last.lock(); l && l.get() == out.unsafe_impl() && out._version() == last_version) return;
  last = out.impl_ptr();
  last_version = out._version();
  Busy busy;
  if (is_relu(op)) {  // its zeros (dead units) and finiteness in one pass
    const ZeroCount z = count_zeros(out);
    {
      std::lock_guard lock(r.mu);
      ReluState& st = r.relus[{module, op}];
      st.zeros += z.zeros;
      st.total += z.n;
    }
    if (z.finite) return;
  } else if (all_finite(out)) {
    return;  // the common case: one cheap pass
  }
  // The rare path: the counts for the message, and which inputs were already non-finite.
  const ScanResult s = scan(out);
  std::string shapes;
  int bad_input = -1;
  ScanResult bad;
  for (int i = 0; i < n_inputs; ++i) {
    shapes += (i ? ", " : "") + shape_text(*inputs[i]);
    if (bad_input < 0 && scannable(*inputs[i])) {
      ScanResult in = scan(*inputs[i]);
      if (in.nonfinite()) {
        bad_input = i;
        bad = in;
      }
    }
  }
  const int64_t step = current_step();
  trace::AnomalyRecord a;
  a.kind = trace::AnomalyKind::nonfinite_forward;
  a.severity = trace::Severity::error;
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
      const Tensor& in = *inputs[bad_input];
      if (in.grad_fn()) return;  // made by an op that was not checked (e.g. outside a module, without grad)
      r.entered_reported = true;
      r.forward_finding_step = step;
      a.value = static_cast<double>(bad.nonfinite());
      a.message = "input " + std::to_string(bad_input) + " of " + op + " in " + module_label(module) + " at step " +
                  std::to_string(step) + " already held " + count_text(bad.nan, bad.inf) + " (" + shape_text(in) +
                  ", " +
                  (in.requires_grad() ? "a parameter: an earlier update made it non-finite; look at the "
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

}  // namespace gb::monitor::detail
