// engine/core/op_scope.h — internal: what every op entry opens first.
//
// detail::OpScope scope("add", {a, b}) stamps the allocations made while it lives with the op's name (memory
// snapshots, OOM reports: "the largest live allocations with the op that made them"), and, while a trace session
// records, makes the op a span of kind op in the trace, with an op_details row (input shapes, dtypes, device, FLOPs,
// bytes read + written) when it is an op of the forward pass (inside a module call, or an input requires grad
// while grad mode is on) and not a view. Nested ops nest (linear -> addmm); the innermost names an allocation. A view
// op (reshape, transpose, ...) inside another op or a backward node's formula (NodeScope), recording no autograd
// node, has no span: it is that op's implementation, and computes nothing. `op` must be a string literal or otherwise
// live for the whole process: its address keys the caches.
//
// Contract for op authors (engine/ops/):
//   - Open the scope in the public op function, around both the computation and its autograd::record(...): the
//     node recorded inside the scope gets the op span's id, and the span gets the node's sequence number (seq),
//     which is how a forward op and its backward node are linked in a trace.
//   - Pass the op's tensor inputs (undefined ones are skipped). They must outlive the scope (function arguments do).
//   - The op's result reaches the scope through autograd::record (its outputs) or detail::op_output(out), which the
//     shared kernel helpers call; call it yourself where neither runs. While the monitor is on (engine/monitor/),
//     op_output checks floating results for NaN/Inf (the forward non-finite detector) and may throw
//     gb::AnomalyError under GLASSBOX_ANOMALY=raise.
//   - FLOPs: elementwise ops and reductions count one per element of the larger of output and inputs by default;
//     ops with a formula (mm, bmm, addmm, matmul, linear, conv2d, attention) call set_flops.
// Cost when tracing is off: a thread-local cache probe and a few stores (a few ns).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>

#include "glassbox/core/tensor.h"
#include "instrument/probe.h"

namespace gb::autograd {
struct Node;
}

namespace gb::detail {

const trace::SourceLocation* op_location(const char* op);  // one per op name, cached by address
uint32_t op_name_id(const char* op);                       // gb::memory::intern_name(op), cached by address

class OpScope {
 public:
  using Inputs = std::initializer_list<std::reference_wrapper<const Tensor>>;
  explicit OpScope(const char* op) noexcept : OpScope(op, Inputs{}) {}
  OpScope(const char* op, Inputs inputs) noexcept;
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  // The op's floating-point operations, by formula (2*M*N*K for a matmul). Cheap: call it unconditionally.
  void set_flops(int64_t flops) noexcept { flops_ = flops; }
  // The op's result (first call wins): op_details' output bytes, and the forward non-finite check.
  void set_output(const Tensor& out);
  // Links the node recorded for this op: the span's seq, the node's forward span and module.
  void set_node(autograd::Node& node) noexcept;

  const char* name() const noexcept { return op_; }
  trace::Id span_id() const noexcept { return span_.id(); }
  OpScope* parent() const noexcept { return parent_; }
  static OpScope* current() noexcept;  // the innermost open op on this thread, nullptr outside ops

 private:
  static constexpr int kMaxInputs = 6;
  const char* op_;
  OpScope* parent_;
  uint32_t prev_op_;
  int64_t flops_ = -1;
  const Tensor* inputs_[kMaxInputs];
  uint8_t n_inputs_ = 0;
  bool has_output_ = false;
  Tensor output_;
  trace::Span span_;
};

// "float32", "int64", ...: dtypes as op_details and messages write them.
const char* dtype_name(ScalarType t);

// The innermost open op's result (OpScope::set_output); nothing outside an op. Kernel helpers call it.
void op_output(const Tensor& out);

// While it lives, this thread runs a backward node's formula (the autograd engine opens one around Node::apply): the
// view ops the formula calls have no span unless they record a node (create_graph).
class NodeScope {
 public:
  NodeScope() noexcept;
  ~NodeScope();
  NodeScope(const NodeScope&) = delete;
  NodeScope& operator=(const NodeScope&) = delete;

 private:
  bool prev_;
};

}  // namespace gb::detail
