// instrument/past_span.h — a span recorded after it happened, at times measured elsewhere.
//
// record_past_span(loc, t0, t1, seq, step) writes a root span (no parent) [t0, t1], both in ticks() (clock.h), on the
// calling thread's track, as if it had been open then: for work whose start and end the calling thread learns
// later, e.g. a GPU collective timed by CUDA events (engine/distributed/nccl_backend.cpp). The caller keeps the
// thread's past spans from overlapping each other and from the thread's ordinary spans (the trace nests spans by
// time per thread). Returns the span's spans.id, 0 when nothing records; a full ring drops it as any span.
#pragma once

#include "instrument/probe.h"

namespace gb::trace {

#ifndef GLASSBOX_NO_PROBES

inline Id record_past_span(const SourceLocation* loc, std::int64_t t0, std::int64_t t1, std::int64_t seq,
                           std::int32_t step) noexcept {
  if (!loc || !(detail::g_span_sinks.load(std::memory_order_relaxed) & detail::kRecordSpans)) return 0;
  detail::ThreadBuffer* buf = detail::this_thread();
  if (!buf) return 0;
  const std::uint32_t n = ++buf->next_span;
  detail::Event* e = buf->reserve(1, ShedKind::span);
  if (!e) return 0;
  e->loc = loc;
  e->t0 = t0;
  e->t1 = t1 < t0 ? t0 : t1;
  e->seq = seq;
  e->id = n;
  e->parent = 0;
  e->step = step;
  e->module = -1;
  e->type = detail::EventType::span;
  buf->commit(1);
  return span_id(buf->thread_id, n);
}

#else

inline Id record_past_span(const SourceLocation*, std::int64_t, std::int64_t, std::int64_t, std::int32_t) noexcept {
  return 0;
}

#endif

}  // namespace gb::trace
