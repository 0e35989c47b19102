// engine/core/op_scope.cpp — the op context: allocation stamping, the op's trace span, its link to its node.
#include "core/op_scope.h"

#include "glassbox/autograd/node.h"
#include "memory/context.h"

namespace gb::detail {

namespace {
// A direct-mapped cache per thread, keyed by the name's address: op names are literals, so one probe and a
// pointer compare find them.
template <class V>
struct AddressCache {
  struct Slot {
    const char* key = nullptr;
    V value{};
  };
  Slot slots[256];
  Slot& at(const char* key) { return slots[(reinterpret_cast<std::uintptr_t>(key) >> 3) & 255]; }
};

thread_local OpScope* t_current = nullptr;
}  // namespace

uint32_t op_name_id(const char* op) {
  thread_local AddressCache<uint32_t> cache;
  auto& slot = cache.at(op);
  if (slot.key != op) {
    slot.value = memory::intern_name(op);
    slot.key = op;
  }
  return slot.value;
}

const trace::SourceLocation* op_location(const char* op) {
  thread_local AddressCache<const trace::SourceLocation*> cache;
  auto& slot = cache.at(op);
  if (slot.key != op) {
    slot.value = trace::location(op, trace::SpanKind::op);
    slot.key = op;
  }
  return slot.value;
}

OpScope::OpScope(const char* op, Inputs inputs) noexcept
    : op_(op),
      parent_(t_current),
      prev_op_(memory::detail::thread_context().op),
      span_(trace::enabled() ? op_location(op) : nullptr) {
  memory::detail::thread_context().op = op_name_id(op);
  t_current = this;
  if (span_.id() != 0)
    for (const Tensor& t : inputs)
      if (t.defined() && n_inputs_ < kMaxInputs) inputs_[n_inputs_++] = &t;
}

OpScope::~OpScope() {
  t_current = parent_;
  memory::detail::thread_context().op = prev_op_;
}

OpScope* OpScope::current() noexcept { return t_current; }

void OpScope::set_output(const Tensor& out) {
  if (has_output_ || !out.defined()) return;
  has_output_ = true;
  if (span_.id() != 0) output_ = out;
}

void OpScope::set_node(autograd::Node& node) noexcept {
  if (span_.id() == 0) return;
  span_.set_seq(static_cast<int64_t>(node.sequence_nr()));
  node.forward_span_id = static_cast<uint64_t>(span_.id());
}

void op_output(const Tensor& out) {
  if (OpScope* s = t_current) s->set_output(out);
}

}  // namespace gb::detail
