// instrument/runtime.cpp — the probes' slow paths: thread registration, full rings, typed records, interning.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <thread>

#include "instrument/registry.h"

namespace gb::trace {
namespace detail {

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed (see registry.h)
  return *r;
}

Id Registry::intern_locked(std::string_view text) {
  std::string key(text);
  if (auto it = string_ids.find(key); it != string_ids.end()) return it->second;
  strings.push_back(key);
  Id id = static_cast<Id>(strings.size());
  strings_count.store(strings.size(), std::memory_order_release);
  string_ids.emplace(std::move(key), id);
  return id;
}

namespace {

// Marks the thread's buffer retired when the thread exits.
struct Retire {
  ThreadEntry* entry = nullptr;
  ~Retire() {
    if (!entry) return;
    t_buffer = nullptr;
    entry->retired.store(true, std::memory_order_release);
  }
};
thread_local Retire t_retire;

}  // namespace

ThreadBuffer* register_thread() noexcept {
  try {
    Registry& r = registry();
    auto e = std::make_unique<ThreadEntry>();
    const std::uint64_t n = base_ring_events();
    e->oldest = e->buf.ring = new Ring(n);
    e->buf.limit = n;
    e->buf.os_tid = static_cast<std::int64_t>(syscall(SYS_gettid));
    bool is_main = e->buf.os_tid == static_cast<std::int64_t>(getpid());
    e->role = is_main ? ThreadRole::main : ThreadRole::other;
    e->name = is_main ? "main" : "thread " + std::to_string(e->buf.os_tid);
    ThreadEntry* raw = e.get();
    {
      std::lock_guard lock(r.mu);
      e->buf.thread_id = r.next_thread_id++;
      r.threads.push_back(std::move(e));
    }
    r.threads_version.fetch_add(1, std::memory_order_release);
    t_retire.entry = raw;
    t_buffer = &raw->buf;
    return t_buffer;
  } catch (...) {  // out of memory: this thread records nothing
    return nullptr;
  }
}

std::uint64_t base_ring_events() noexcept {
  return std::bit_ceil(std::max<std::uint64_t>(registry().ring_events.load(std::memory_order_relaxed), 64));
}

ThreadEntry::~ThreadEntry() {
  for (Ring* r = oldest; r;) {
    Ring* next = r->next.load(std::memory_order_acquire);
    delete r;
    r = next;
  }
}

namespace {
// Links a new ring after the thread's ring and writes there from now on (the collector finishes the old one first).
bool switch_ring(ThreadBuffer& b, std::uint64_t events) noexcept {
  Ring* fresh = nullptr;
  try {
    fresh = new Ring(events);
  } catch (...) {  // out of memory: the caller drops or waits as before
    return false;
  }
  b.ring->next.store(fresh, std::memory_order_release);  // after the last commit to the old ring
  b.ring = fresh;
  return true;
}
}  // namespace

// The fast path's limit was reached: the ring looked full, or a grown ring is due a check. While a session records,
// a full ring links one twice larger (up to ring_max_events), and a grown ring the collector has nearly caught up
// with (it reads this ring: the older ones are drained) is followed by one of the session's ring_events (checked
// every ring_events events).
Event* ThreadBuffer::reserve_slow(std::uint32_t n, ShedKind kind) noexcept {
  Registry& reg = registry();
  const bool recording = g_recording.load(std::memory_order_relaxed);
  const std::uint64_t base = base_ring_events();
  for (;;) {
    Ring* r = ring;
    const std::uint64_t h = r->head.load(std::memory_order_relaxed);
    const std::uint64_t tail = r->tail.load(std::memory_order_acquire);
    // tail > 0: the collector reads this ring, so the older ones are done; what is left fits a small ring easily
    if (recording && r->capacity() > base && tail > 0 && h - tail <= base / 4 && n <= base &&
        switch_ring(*this, base))
      continue;
    if (h + n - tail <= r->capacity()) {
      limit = tail + r->capacity();
      if (r->capacity() > base) limit = std::min(limit, h + base);  // look again for a chance to shrink
      return r->at(h);
    }
    if (!recording) break;
    const std::uint64_t max = std::max(base, std::bit_floor(std::max<std::uint64_t>(
                                                 reg.ring_max_events.load(std::memory_order_relaxed), 64)));
    if (r->capacity() < max && n <= max) {
      const std::uint64_t bigger = std::min(max, std::max(r->capacity() * 2, std::bit_ceil<std::uint64_t>(n)));
      if (switch_ring(*this, bigger)) {
        peak_events.store(std::max(bigger, peak_events.load(std::memory_order_relaxed)), std::memory_order_relaxed);
        continue;
      }
    }
    if (n <= r->capacity() && reg.on_full.load(std::memory_order_relaxed) == static_cast<int>(OnFull::block)) {
      while (g_recording.load(std::memory_order_relaxed)) {
        std::this_thread::yield();
        const std::uint64_t t = r->tail.load(std::memory_order_acquire);
        if (h + n - t <= r->capacity()) {
          limit = t + r->capacity();
          return r->at(h);
        }
      }
    }
    break;
  }
  dropped.fetch_add(1, std::memory_order_relaxed);
  shed[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

namespace {
void fill_context(Event* e, ThreadBuffer* b, EventType type) {
  e->t0 = ticks();
  e->id = b->current;
  e->parent = 0;
  e->seq = -1;
  e->step = g_step.load(std::memory_order_relaxed);
  e->module = t_module;
  e->type = type;
  e->record_type = 0;
  e->slots = 0;
}
}  // namespace

// An instant or a counter: one event carrying the name and, for a counter, the value's bits.
void push_point(EventType type, const SourceLocation* loc, std::int64_t bits) noexcept {
  ThreadBuffer* b = this_thread();
  if (!b) return;
  Event* e = b->reserve(1, type == EventType::instant ? ShedKind::instant : ShedKind::counter);
  if (!e) return;
  fill_context(e, b, type);
  e->loc = loc;
  e->t1 = bits;
  b->commit(1);
}

void push_instant(const SourceLocation* loc) noexcept { push_point(EventType::instant, loc, 0); }
void push_counter(const SourceLocation* loc, double value) noexcept {
  push_point(EventType::counter, loc, std::bit_cast<std::int64_t>(value));
}

namespace {
// What a ring record is, when it is shed.
constexpr std::array<ShedKind, RingRecords::size> kRecordShedKind = [] {
  std::array<ShedKind, RingRecords::size> k{};
  k[ring_record<MemoryEventRecord>] = ShedKind::memory_event;
  k[ring_record<GraphNodeRecord>] = ShedKind::graph;
  k[ring_record<GraphEdgeRecord>] = ShedKind::graph;
  k[ring_record<GradStatRecord>] = ShedKind::grad_stat;
  k[ring_record<OpDetailsRecord>] = ShedKind::op_details;
  k[ring_record<CounterRecord>] = ShedKind::counter;
  return k;
}();
}  // namespace

void push_record(int type, const void* bytes, std::size_t size) noexcept {
  ThreadBuffer* b = this_thread();
  if (!b) return;
  auto slots = static_cast<std::uint32_t>((size + sizeof(Event) - 1) / sizeof(Event));
  Event* e = b->reserve(1 + slots, kRecordShedKind[static_cast<std::size_t>(type)]);
  if (!e) return;
  fill_context(e, b, EventType::record);
  e->loc = nullptr;
  e->record_type = static_cast<std::uint8_t>(type);
  e->slots = static_cast<std::uint16_t>(slots);
  const std::uint64_t h = b->ring->head.load(std::memory_order_relaxed);  // the ring reserve() returned a slot of
  const auto* src = static_cast<const unsigned char*>(bytes);
  for (std::uint32_t i = 0; i < slots; ++i) {
    std::size_t off = std::size_t(i) * sizeof(Event);
    std::memcpy(b->at(h + 1 + i), src + off, std::min(sizeof(Event), size - off));
  }
  b->commit(1 + slots);
}

namespace {
template <class R>
void queue_cold(const R& record) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  ThreadBuffer* b = this_thread();
  ColdItem item{record, ticks(), b ? b->thread_id : 0, b ? b->current : 0u,
                g_step.load(std::memory_order_relaxed), t_module};
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.cold.push_back(std::move(item));
}
}  // namespace

void emit_cold(const ModuleRecord& rec) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.modules.push_back(rec);
}
void emit_cold(const ParamRecord& rec) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.params.push_back(rec);
}
void emit_cold(const StepRecord& r) { queue_cold(r); }
void emit_cold(const StepMemoryRecord& r) { queue_cold(r); }
namespace {
// A mark in the thread's ring where the flight recorder is to write its last steps: in order with the thread's
// detail, so the recorder holds the steps up to this moment when the collector reaches it, however far behind.
void push_trigger(DetailReason reason, std::int64_t step) noexcept {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  ThreadBuffer* b = this_thread();
  if (!b) return;
  Event* e = b->reserve(1, ShedKind::span);
  if (!e) {  // the ring is full (the collector is far behind): the cold queue, never shed
    try {
      queue_cold(TriggerRow{reason, step});
    } catch (...) {
    }
    return;
  }
  fill_context(e, b, EventType::trigger);
  e->loc = nullptr;
  e->record_type = static_cast<std::uint8_t>(reason);
  e->seq = step;
  b->commit(1);
}
}  // namespace

// The recorder is written for the first anomaly of each kind of warning severity, and for the first
// kMaxErrorTriggers of error severity (the first non-finite value and what followed it): a run that warns again and
// again keeps its size.
constexpr int kMaxErrorTriggers = 8;

void emit_cold(const AnomalyRecord& r) {
  queue_cold(r);
  if (r.severity == Severity::info) return;
  Registry& reg = registry();
  bool trigger = false;
  if (r.severity == Severity::error) {
    trigger = reg.error_triggers.fetch_add(1, std::memory_order_relaxed) < kMaxErrorTriggers;
  } else {
    const std::uint32_t bit = 1u << (static_cast<unsigned>(r.kind) & 31u);
    trigger = !(reg.triggered_kinds.fetch_or(bit, std::memory_order_relaxed) & bit);
  }
  if (trigger) push_trigger(DetailReason::anomaly, r.step ? *r.step : g_step.load());
}
void emit_cold(const OomReportRecord& r) {
  queue_cold(r);
  push_trigger(DetailReason::oom, g_step.load());
}
void emit_cold(const KernelRecord& r) { queue_cold(r); }
void emit_cold(const CollectiveRecord& r) { queue_cold(r); }
void set_meta_cold(std::string_view key, std::string_view value) { queue_cold(MetaRow{std::string(key), std::string(value)}); }

void take_step_account(StepRecord& r) noexcept {
  StepAccount& a = t_step_account;
  const std::int64_t now = ticks();
  std::array<std::int64_t, kPhases> spent = a.ticks;
  for (int p = 0; p < kPhases; ++p)
    if (a.depth[p] > 0) {  // open: counted up to now, the rest goes to the next step
      spent[p] += now - a.open_since[p];
      a.open_since[p] = now;
    }
  r.data_ns = spent[static_cast<int>(Phase::data)];
  r.backward_ns = spent[static_cast<int>(Phase::backward)];
  r.optimizer_ns = spent[static_cast<int>(Phase::optimizer)];
  if (!r.samples && a.has_samples) r.samples = a.samples;
  if (!r.tokens && a.has_tokens) r.tokens = a.tokens;
  a.ticks = {};
  a.samples = a.tokens = 0;
  a.has_samples = a.has_tokens = false;
}

}  // namespace detail

Id intern(std::string_view text) {
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mu);
  return r.intern_locked(text);
}

const SourceLocation* location(std::string_view name, SpanKind kind) {
  detail::Registry& r = detail::registry();
  std::string key = std::to_string(static_cast<int>(kind)) + '\0' + std::string(name);
  std::lock_guard lock(r.mu);
  auto& slot = r.locations[key];
  if (!slot) {
    r.location_names.push_back(std::make_unique<std::string>(name));
    slot = std::make_unique<SourceLocation>(SourceLocation{r.location_names.back()->c_str(), "", 0, kind});
  }
  return slot.get();
}

Id thread_id() {
  detail::ThreadBuffer* b = detail::this_thread();
  return b ? b->thread_id : -1;
}

void set_thread_name(std::string_view name, ThreadRole role) {
  detail::ThreadBuffer* b = detail::this_thread();
  if (!b) return;
  detail::Registry& r = detail::registry();
  {
    std::lock_guard lock(r.mu);
    for (auto& e : r.threads)
      if (&e->buf == b) {
        e->name = std::string(name);
        e->role = role;
      }
  }
  r.threads_version.fetch_add(1, std::memory_order_release);
}

Id current_span_id() noexcept {
  detail::ThreadBuffer* b = detail::t_buffer;
  return b && b->current ? span_id(b->thread_id, b->current) : 0;
}

}  // namespace gb::trace
