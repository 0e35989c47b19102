// engine/core/observer.h — internal: how the forward ops and the backward driver report to whoever listens (the
// training monitor while a trace records; a test), without depending on it.
//
// Core and autograd call the notify functions below; they never include engine/monitor (tests/engine/autograd/
// layering_test.cpp fails when one does). The monitor registers one EngineObserver in its session hook
// (engine/monitor/observer.cpp) and removes it when the session stops, as the allocator's event observer
// (glassbox/memory/events.h) is connected only while a trace records.
//
// Contract:
//   - With no observer registered every notification costs one relaxed atomic load and a branch (observers()).
//   - Observers run synchronously on the thread that makes the event, in the order they were added. They may
//     throw (gb::AnomalyError in raise mode): the exception leaves the op or backward() that notified.
//   - add/remove are rare (a session's start and stop) and take a mutex; an observer list replaced while another
//     thread walks it stays valid (old lists are kept). An observer must outlive its registration and any call
//     that may still be inside it (the monitor's is static).
//   - One backward: the driver asks every observer for a BackwardObserver at its start (nullptr: not interested)
//     and reports to those only, in the order discovered → node_done... → finish (engine/autograd/engine.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "glassbox/core/tensor.h"
#include "instrument/probe.h"

namespace gb::autograd {
struct Node;
}

namespace gb::detail {

// What one backward reports, after discovery and before anything ran or was released.
struct BackwardObserver {
  virtual ~BackwardObserver() = default;
  // Every node the backward found, in discovery order (before inputs= filtering).
  virtual void discovered(const std::vector<autograd::Node*>& order) = 0;
  // node ran; sent are the gradients it returns for its next edges (before any dtype cast).
  virtual void node_done(autograd::Node* node, const variable_list& sent) = 0;
  // Every node ran (and the streams were joined); the graph's bookkeeping is still alive.
  virtual void finish() = 0;
};

struct EngineObserver {
  virtual ~EngineObserver() = default;
  // ---- forward (core/op_scope.cpp; only for ops that have a trace span) ----
  virtual void on_node_recorded() noexcept {}  // an op recorded its autograd node
  // The result of op `op` (span `span_id`, inputs as given to its OpScope).
  virtual void on_op_output(const char* /*op*/, trace::Id /*span_id*/, const Tensor* const* /*inputs*/,
                            int /*n_inputs*/, const Tensor& /*out*/) {}
  // ---- backward (autograd/engine.cpp, autograd/node.cpp) ----
  virtual void on_backward_roots(const variable_list& /*roots*/) {}  // backward() without explicit gradients
  virtual std::unique_ptr<BackwardObserver> on_backward_start() { return nullptr; }
  virtual void on_accumulate(const Tensor& /*param*/) {}  // before a gradient is added into param's defined .grad
};

// The registered observers, in order (a snapshot: never changed once published).
struct ObserverList {
  std::vector<EngineObserver*> list;
};
extern std::atomic<const ObserverList*> g_observers;

// nullptr when nobody listens: the hot path's one load.
inline const ObserverList* observers() noexcept { return g_observers.load(std::memory_order_acquire); }

void add_observer(EngineObserver* observer);     // appends; adding one already there does nothing
void remove_observer(EngineObserver* observer);  // removing one not there does nothing

// Calls f(observer) for each registered observer; nothing (one load) when there is none.
template <class F>
inline void notify(F&& f) {
  if (const ObserverList* l = observers()) [[unlikely]]
    for (EngineObserver* o : l->list) f(*o);
}

}  // namespace gb::detail
