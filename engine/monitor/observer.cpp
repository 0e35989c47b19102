// engine/monitor/observer.cpp — the monitor's side of the engine's observer interface (core/observer.h): one
// EngineObserver that forwards each event to the hook that judges it (forward.cpp, backward.cpp, grad_stats.cpp).
// run.cpp's session hook connects it when a session starts recording and disconnects it when it stops, so an
// untraced op or backward pays the observer list's one load; each hook still starts with active() (the mode, the
// monitor's own work).
#include <memory>

#include "core/observer.h"
#include "monitor/monitor.h"

namespace gb::monitor::detail {
namespace {

// One backward, watched (BackwardWatch: the graph, the first node that makes a NaN/Inf gradient).
struct Watch final : gb::detail::BackwardObserver {
  BackwardWatch watch;
  void discovered(const std::vector<autograd::Node*>& order) override { watch.discovered(order); }
  void node_done(autograd::Node* node, const variable_list& sent) override { watch.node_done(node, sent); }
  void finish() override { watch.finish(); }
};

struct Monitor final : gb::detail::EngineObserver {
  void on_node_recorded() noexcept override { detail::on_node_recorded(); }
  void on_op_output(const char* op, trace::Id span_id, const Tensor* const* inputs, int n_inputs,
                    const Tensor& out) override {
    if (active()) check_output(op, span_id, inputs, n_inputs, out);
  }
  void on_backward_roots(const variable_list& roots) override { detail::on_backward_roots(roots); }
  std::unique_ptr<gb::detail::BackwardObserver> on_backward_start() override {
    if (!active()) return nullptr;
    auto w = std::make_unique<Watch>();
    if (!w->watch.on()) return nullptr;
    return w;
  }
  void on_accumulate(const Tensor& param) override { detail::on_accumulate(param); }
};

}  // namespace

void connect_engine(bool on) {
#ifdef GLASSBOX_NO_PROBES
  (void)on;  // active() is always false: nothing to listen for
#else
  static Monitor* monitor = new Monitor;  // never destroyed: a session may stop during static destruction
  if (on)
    gb::detail::add_observer(monitor);
  else
    gb::detail::remove_observer(monitor);
#endif
}

}  // namespace gb::monitor::detail
