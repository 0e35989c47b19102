// engine/core/op_scope.cpp — the op context: allocation stamping and the op's trace span.
#include "core/op_scope.h"

#include <unordered_map>

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

OpScope::OpScope(const char* op) noexcept
    : prev_op_(memory::detail::thread_context().op),
      span_(trace::enabled() ? op_location(op) : nullptr) {
  memory::detail::thread_context().op = op_name_id(op);
}

OpScope::~OpScope() { memory::detail::thread_context().op = prev_op_; }

}  // namespace gb::detail
