// engine/core/op_scope.h — internal: what every op entry opens first.
//
// detail::OpScope scope("add") stamps the allocations made while it lives with the op's name (memory snapshots,
// OOM reports: "the largest live allocations with the op that made them"), and, while a trace session records,
// makes the op a span of kind op in the trace. Nested ops nest (linear -> matmul); the innermost names an
// allocation. `op` must be a string literal or otherwise live for the whole process: its address keys the caches.
// Cost when tracing is off: a thread-local cache probe and two stores (a few ns).
#pragma once

#include <cstdint>

#include "instrument/probe.h"

namespace gb::detail {

const trace::SourceLocation* op_location(const char* op);  // one per op name, cached by address
uint32_t op_name_id(const char* op);                        // gb::memory::intern_name(op), cached by address

class OpScope {
 public:
  explicit OpScope(const char* op) noexcept;
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  uint32_t prev_op_;
  trace::Span span_;
};

}  // namespace gb::detail
