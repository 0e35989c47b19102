// glassbox/memory/events.h — the allocator's event hook, for the tracer (memory_events in the trace file).
//
// One observer for all devices. With none installed an allocation pays one relaxed atomic load. The observer is
// called synchronously, with the allocator's lock held, right after the event: it must be quick and must not
// allocate on a glassbox device (copy the struct into a buffer and return). Installing is rare (the tracer at
// start and stop); an observer replaced while another thread is inside it stays valid (old ones are kept).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "glassbox/core/device.h"
#include "glassbox/memory/category.h"

namespace gb {
struct OomReport;
}

namespace gb::memory {

// empty_cache follows the segment_free events of one release of the cache: an empty_cache() call, or the release
// before the retry of a refused segment (then it precedes the retry's segment_alloc, or the oom).
// retag: a live block's category changed (set_category: a parameter, an activation, a gradient); category is the
// new one, size and requested the block's. Replaying alloc, retag and free gives the bytes per category at any time.
enum class MemoryAction : uint8_t { alloc, free, segment_alloc, segment_free, oom, empty_cache, retag };
const char* to_string(MemoryAction a);

struct MemoryEvent {
  MemoryAction action = MemoryAction::alloc;
  Device device;
  uint64_t addr = 0;       // block or segment address (0 for oom, empty_cache)
  int64_t size = 0;        // block size (rounded), segment size; oom: the segment it tried to get; empty_cache: bytes released
  int64_t requested = 0;   // alloc/free/oom: what the caller asked for
  int64_t segment_id = -1;
  int64_t stream = 0;
  Category category = Category::unknown;  // retag: the new category
  uint32_t op_id = 0, module_id = 0;  // name_of(id) gives the strings
  int64_t allocated = 0;   // allocated_bytes.all.current after the event
  int64_t reserved = 0;    // reserved_bytes.all.current after the event
};

using EventObserver = std::function<void(const MemoryEvent&)>;

// Installs (or, with an empty function, removes) the observer.
void set_event_observer(EventObserver observer);
bool has_event_observer();

// Called with the report of every gb::OutOfMemoryError, right before it is thrown (after the oom event), under the
// allocator's lock like the event observer. One for all devices; an empty function removes it.
using OomObserver = std::function<void(const OomReport&)>;
void set_oom_observer(OomObserver observer);

// The tracer's observers (engine/memory/trace_events.cpp): while a gb::trace session records, every event is a
// memory_events row and every OOM an oom_reports row, and meta rows give each device's total, context and
// capacity bytes. Installed only while a session records, so an untraced allocation pays one relaxed load.
// Trace device numbers: cpu -1, cuda:N N, meta -2 (traces/SCHEMA.md).
int trace_device(Device d);

namespace detail {
extern std::atomic<const EventObserver*> g_event_observer;
extern std::atomic<const OomObserver*> g_oom_observer;
void connect_tracer();                 // once, when the first allocator is made
void trace_allocator_made(Device d);   // meta rows for a device whose allocator appears during a session
void trace_device_changed(Device d);  // capacity or context changed: rewrite its meta rows (when recording)
}  // namespace detail

}  // namespace gb::memory
