// engine/memory/trace_events.cpp — memory in the trace (glassbox/memory/events.h, traces/SCHEMA.md).
//
// A session hook (gb::trace::add_session_hook) installs the allocator observers when a trace starts recording and
// removes them before it stops: each MemoryEvent becomes a memory_events row with the allocator's running totals
// (inside a span, the collector gives it the span's id), each OomReport an oom_reports row with the full text, the
// step that ran out and the bytes earlier steps kept (glassbox/memory/age.h), and
// each device's allocator writes meta rows (device_total_bytes.<device>, context_bytes.<device>,
// capacity_bytes.<device>, rewritten when set_capacity / set_context_bytes change them; the unsuffixed
// device_total_bytes and context_bytes describe cuda:0 when it exists, else the cpu). Observers run under the allocator's lock: they copy into the trace's ring and return.
#include <mutex>
#include <string>

#include "glassbox/memory/memory.h"
#include "instrument/probe.h"

namespace gb::memory {

int trace_device(Device d) {
  if (d.is_cpu()) return trace::kCpu;
  if (d.is_meta()) return trace::kMeta;
  return d.has_index() ? d.index() : 0;
}

namespace detail {

// Set by memory.cpp: calls f for every allocator made so far (never makes one).
void for_each_allocator(void (*f)(CachingAllocator&));

namespace {

// The allocator's enums are written as the schema's: every value must agree.
#define GB_SAME(engine, trace_enum) static_assert(static_cast<int>(engine) == static_cast<int>(trace_enum))
GB_SAME(MemoryAction::alloc, trace::MemAction::alloc);
GB_SAME(MemoryAction::free, trace::MemAction::free);
GB_SAME(MemoryAction::segment_alloc, trace::MemAction::segment_alloc);
GB_SAME(MemoryAction::segment_free, trace::MemAction::segment_free);
GB_SAME(MemoryAction::oom, trace::MemAction::oom);
GB_SAME(MemoryAction::empty_cache, trace::MemAction::empty_cache);
GB_SAME(MemoryAction::retag, trace::MemAction::retag);
GB_SAME(Category::unknown, trace::MemCategory::unknown);
GB_SAME(Category::parameter, trace::MemCategory::parameter);
GB_SAME(Category::gradient, trace::MemCategory::gradient);
GB_SAME(Category::activation, trace::MemCategory::activation);
GB_SAME(Category::optimizer_state, trace::MemCategory::optimizer_state);
GB_SAME(Category::temporary, trace::MemCategory::temporary);
GB_SAME(Category::input, trace::MemCategory::input);
GB_SAME(Category::autograd_detail, trace::MemCategory::autograd_detail);
#undef GB_SAME
static_assert(kNumCategories == trace::kMemCategories);

void on_event(const MemoryEvent& e) {
  trace::MemoryEventRecord r;
  r.action = static_cast<trace::MemAction>(static_cast<int>(e.action));  // the same values (asserted above)
  r.device = trace_device(e.device);
  r.addr = static_cast<std::int64_t>(e.addr);
  r.size = e.size;
  r.requested = e.requested;
  if (e.segment_id >= 0) r.segment_id = e.segment_id;
  r.stream = e.stream;
  r.category = static_cast<trace::MemCategory>(static_cast<int>(e.category));
  r.allocated = e.allocated;
  r.reserved = e.reserved;
  trace::emit(r);
}

void on_oom(const OomReport& rep) {
  trace::OomReportRecord r;
  r.requested = rep.alloc_size;  // what "Tried to allocate" says (the caller's bytes are in the report text)
  r.capacity = rep.capacity;
  r.free = rep.free;
  r.allocated = rep.allocated;
  r.reserved = rep.reserved;
  r.largest_free_block = rep.largest_free_block;
  r.report = rep.message();
  if (rep.by_age.step >= 0) {  // outside a step there is no "earlier": both stay NULL
    r.step = rep.by_age.step;
    r.kept_bytes = rep.by_age.kept;
  }
  trace::emit(r);
}

void write_meta(CachingAllocator& a) {
  const Device d = a.device();
  const std::string name = d.str();
  const int64_t total = a.raw().total_bytes(), context = a.context_bytes();
  trace::set_meta("device_total_bytes." + name, std::to_string(total));
  trace::set_meta("context_bytes." + name, std::to_string(context));
  trace::set_meta("capacity_bytes." + name, std::to_string(a.capacity()));
  if (d.is_cpu() || (d.is_cuda() && d.index() <= 0)) {  // allocators are visited cpu first: cuda:0 replaces it
    trace::set_meta("device_total_bytes", std::to_string(total));
    trace::set_meta("context_bytes", std::to_string(context));
  }
}

void start() {
  set_event_observer(on_event);
  set_oom_observer(on_oom);
  for_each_allocator(write_meta);
}

void stop() {
  set_event_observer({});
  set_oom_observer({});
}

}  // namespace

void connect_tracer() {
  static std::once_flag once;
  std::call_once(once, [] { trace::add_session_hook(start, stop); });
}

void trace_device_changed(Device d) {
  if (trace::enabled()) write_meta(caching_allocator(d));
}

void trace_allocator_made(Device d) {
  if (trace::enabled()) write_meta(caching_allocator(d));
}

}  // namespace detail
}  // namespace gb::memory
