// engine/distributed/collective_trace.cpp — a collective's span and collectives row (contract in collective_trace.h).
#include "distributed/collective_trace.h"

#include <string>

#include "instrument/probe.h"

namespace gb::distributed::detail {

namespace {
thread_local std::optional<int64_t> t_bucket;
thread_local const char* t_name = nullptr;

// The engine's ScalarType order is the trace's DType order (engine/monitor/grad_stats.cpp asserts it).
trace::DType trace_dtype(ScalarType t) { return static_cast<trace::DType>(static_cast<int>(t)); }
}  // namespace

CollectiveTag::CollectiveTag(std::optional<int64_t> bucket, const char* name)
    : prev_bucket_(t_bucket), prev_name_(t_name) {
  t_bucket = bucket;
  if (name) t_name = name;
}
CollectiveTag::~CollectiveTag() {
  t_bucket = prev_bucket_;
  t_name = prev_name_;
}

CollectiveTrace describe_collective(const char* op, const Tensor& t, std::optional<ReduceOp> reduce, int64_t seq,
                                    int64_t peers) {
  CollectiveTrace c;
  c.name = t_name ? t_name : op;
  if (t.defined()) {
    c.bytes = t.nbytes();
    c.dtype = t.scalar_type();
  }
  c.op = reduce;
  c.bucket = t_bucket;
  c.seq = seq;
  c.peers = peers;
  c.queued_ticks = trace::ticks();
  return c;
}

void name_communication_thread() { trace::set_thread_name("communication", trace::ThreadRole::communication); }

void run_traced(const CollectiveTrace& c, const std::function<void()>& fn) {
  if (!trace::enabled()) {
    fn();
    return;
  }
  trace::Span span(trace::location(c.name, trace::SpanKind::collective), c.seq);
  fn();
  emit_collective_row(c, span.id());
}

void emit_collective_row(const CollectiveTrace& c, std::int64_t span) {
  if (!span) return;
  trace::CollectiveRecord r;
  r.span_id = span;
  r.bytes = c.bytes;
  r.dtype = trace_dtype(c.dtype);
  if (c.op) r.reduce_op = trace::intern(reduce_op_name(*c.op));
  r.bucket = c.bucket;
  r.peers = c.peers;
  r.queued_ns = c.queued_ticks;  // ticks: the collector converts (probe.h)
  trace::emit(r);
}

}  // namespace gb::distributed::detail
