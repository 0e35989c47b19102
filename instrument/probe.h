// instrument/probe.h — the probes the engine (and any program) calls to write a glassbox trace.
//
// A probe records a few integers into its thread's lock-free ring (ThreadBuffer, below); the collector thread
// (collector.h) turns them into rows of the trace file (traces/SCHEMA.md). Nothing is recorded unless a session is
// on (session.h: GLASSBOX_TRACE=path.db in the environment, or a gb::trace::Session in code).
//
// Contract:
//   - GB_TRACE_SPAN(kind, "name") opens a span until the end of the enclosing scope. Its name is a static
//     SourceLocation (name, file, line): the event carries the pointer, and the name is interned once per trace.
//     Cost with a session on: two clock reads and one 64-byte store (bench/bench_probe.cpp); off: one relaxed load
//     and a branch. Spans of a thread nest; their ids are records.h span_id(thread, n) in the order they begin.
//   - GB_TRACE_INSTANT("name") and GB_TRACE_COUNTER("name", value) record a point and a sampled value.
//   - Names known only at run time: location(name, kind) interns one SourceLocation per (name, kind), kept for the
//     life of the process; cache the pointer (one mutex and a hash lookup per call).
//   - emit(record) queues a typed row (memory event, graph node/edge, grad stat, anomaly, module, param, ...). Rows
//     whose t_ns / start_ns / end_ns the caller leaves at 0 get the time of the emit. Modules and params are also
//     kept for sessions that start later. Graph node ids are the caller's; other ids left at 0 are numbered by
//     the collector. A CollectiveRecord's queued_ns is given in ticks() and written in ns.
//   - A full ring never blocks: while the collector is behind, the thread's ring grows (twice larger each time, up to
//     SessionOptions::ring_max_events) and shrinks back once it has caught up. Past that size the event is shed:
//     dropped and counted by kind (meta dropped_events, shed_events.<kind>); a session with OnFull::block waits
//     instead (tests that must not lose anything). Only detail rides the rings: the run summary (steps and
//     step_memory rows, anomalies) takes the cold queue and is never shed.
//   - The run summary of a step (StepScope, or the engine's automatic steps): its times, and where they went —
//     PhaseScope(Phase::data / backward / optimizer) around the DataLoader's wait, backward() and optimizer.step()
//     (the outermost scope of a phase on the thread counts) — and its batch (add_step_samples / add_step_tokens, or
//     StepScope::set_samples / set_tokens). A probe costs nothing more for it.
//   - NVTX (nvtx.cpp): when an NVTX tool is attached (NVTX_INJECTION64_PATH is set at start-up, as Nsight Systems
//     does; or GLASSBOX_NVTX=1), every span is also an NVTX range in the domain "glassbox", named by a registered
//     string, categorised by its kind — with or without a session. GLASSBOX_NVTX=0 turns it off. Off, a span still
//     costs one relaxed load and a branch.
//   - Compiling with GLASSBOX_NO_PROBES (CMake -DGLASSBOX_PROBES=OFF) removes every probe: the macros expand to
//     nothing and Span is empty.
//
//   void linear_forward(...) {
//     GB_TRACE_SPAN(gb::trace::SpanKind::op, "linear");
//     ...
//   }
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "instrument/clock.h"
#include "traces/records.h"

namespace gb::trace {

struct SourceLocation {
  const char* name;
  const char* file;
  int line;
  SpanKind kind;
};

// What happens to an event that finds its thread's ring full.
enum class OnFull : int { drop = 0, block = 1 };

// The kinds of detail a full ring sheds, each counted (meta shed_events.<name>).
enum class ShedKind : std::uint8_t { span = 0, instant = 1, counter = 2, memory_event = 3, graph = 4, grad_stat = 5,
                                     op_details = 6 };
inline constexpr std::array<std::string_view, 7> kShedKindNames = {"span",  "instant",   "counter",   "memory_event",
                                                                   "graph", "grad_stat", "op_details"};
constexpr int kShedKinds = static_cast<int>(kShedKindNames.size());

// A phase of a training step whose time the steps row reports (data_ns, backward_ns, optimizer_ns).
enum class Phase : std::uint8_t { data = 0, backward = 1, optimizer = 2 };
constexpr int kPhases = 3;

namespace detail {

// One ring slot. A span is one event; a typed record is a header event plus ceil(sizeof(R)/64) payload slots.
// trigger: the flight recorder is to write its last steps here (an anomaly or an OOM report was emitted; the
// record itself takes the cold queue): record_type is the DetailReason, seq the step.
enum class EventType : std::uint8_t { span = 0, instant = 1, counter = 2, record = 3, trigger = 4 };
struct alignas(64) Event {
  const SourceLocation* loc;  // span, instant, counter: the name
  std::int64_t t0;            // ticks: span start, or the time of an instant, counter or record
  std::int64_t t1;            // ticks: span end; counter: the value's bits
  std::int64_t seq;           // span: autograd sequence number, -1 = none
  std::uint32_t id;           // span: n of span_id(thread, n); instant/record: the innermost open span's n
  std::uint32_t parent;       // span: the parent's n, 0 = a root
  std::int32_t step;          // -1 = outside any step
  std::int32_t module;        // -1 = none
  EventType type;
  std::uint8_t record_type;  // record: index in RecordTypes
  std::uint16_t slots;       // record: payload slots that follow
};
static_assert(sizeof(Event) == 64);

// One ring of a thread's events: a power-of-two array, single producer (the thread), single consumer (the
// collector). When the collector falls behind and the ring is full, the thread links a twice larger ring and goes
// on writing there (up to the session's ring_max_events); the collector finishes the older ring, follows the link
// and frees it. A thread whose ring has grown goes back to a ring of the session's ring_events once the collector
// has caught up, so a burst does not keep its memory.
struct Ring {
  explicit Ring(std::uint64_t events) : slots(new Event[events]), mask(events - 1) {}
  ~Ring() { delete[] slots; }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  Event* at(std::uint64_t i) const noexcept { return &slots[i & mask]; }
  std::uint64_t capacity() const noexcept { return mask + 1; }

  Event* const slots;
  const std::uint64_t mask;
  std::atomic<Ring*> next{nullptr};  // set once by the producer, after its last event here
  alignas(64) std::atomic<std::uint64_t> head{0};  // producer
  alignas(64) std::atomic<std::uint64_t> tail{0};  // consumer
};

// A thread's producer side (the thread's span stack, its newest ring) and identity. The collector reads the chain
// of rings from the oldest (ThreadEntry::oldest, registry.h).
struct ThreadBuffer {
  Ring* ring = nullptr;          // the newest ring: where this thread writes
  std::uint64_t limit = 0;       // reserve() takes the fast path while head + n <= limit
  std::uint32_t next_span = 0;   // n of the last span begun
  std::uint32_t current = 0;     // n of the innermost open span, 0 = none
  std::atomic<std::uint64_t> dropped{0};                  // events shed, all kinds
  std::array<std::atomic<std::uint64_t>, kShedKinds> shed{};  // events shed, by kind
  std::atomic<std::uint64_t> peak_events{0};    // the largest ring grown to this session (0: none grew)
  std::int64_t thread_id = 0;
  std::int64_t os_tid = 0;

  // n slots for an event of `kind` (counted by kind when it is shed).
  Event* reserve(std::uint32_t n, ShedKind kind) noexcept {
    const std::uint64_t h = ring->head.load(std::memory_order_relaxed);
    if (h + n > limit) [[unlikely]]
      return reserve_slow(n, kind);
    return ring->at(h);
  }
  Event* reserve_slow(std::uint32_t n, ShedKind kind) noexcept;  // a full ring: grow, or shed (nullptr), or wait
  Event* at(std::uint64_t i) const noexcept { return ring->at(i); }
  void commit(std::uint32_t n) noexcept {
    ring->head.store(ring->head.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
};

extern std::atomic<bool> g_recording;  // a session is on
// Where spans go: kRecordSpans while a session records (set and cleared with g_recording), kNvtxSpans while an NVTX
// tool is attached. A span is skipped with one load when this is 0.
// kGpuSpans while CUPTI records GPU activity (cupti.cpp): each recorded span is also pushed as CUPTI's external
// correlation id, so the kernels a span launches name it (kernels.launch_span_id).
inline constexpr std::uint8_t kRecordSpans = 1, kNvtxSpans = 2, kGpuSpans = 4;
extern std::atomic<std::uint8_t> g_span_sinks;
void nvtx_push(const SourceLocation* loc) noexcept;  // nvtx.cpp
void nvtx_pop() noexcept;
void gpu_push(Id span) noexcept;  // cupti.cpp
void gpu_pop() noexcept;
extern std::atomic<std::int32_t> g_step;
extern std::atomic<std::int32_t> g_step_scopes;  // StepScopes open now (the engine's automatic steps stand aside)
// Called by ~StepScope before its steps row is queued (the engine's monitor fills the loss and lr the user left
// unset and runs its end-of-step checks). One hook for the process; nullptr = none.
using StepEndHook = void (*)(StepRecord&);
extern std::atomic<StepEndHook> g_step_end_hook;
inline thread_local ThreadBuffer* t_buffer = nullptr;
inline thread_local std::int32_t t_module = -1;

ThreadBuffer* register_thread() noexcept;  // first event of a thread (or its first since the last session)
inline ThreadBuffer* this_thread() noexcept {
  ThreadBuffer* b = t_buffer;
  return b ? b : register_thread();
}

// A record's ring tag (its position in records.h RingRecords), or -1: such records take a mutex (cold path).
template <class R>
inline constexpr int ring_record = record_index<R, RingRecords>;

void push_record(int type, const void* bytes, std::size_t size) noexcept;
void emit_cold(const StepRecord& r);
void emit_cold(const StepMemoryRecord& r);
void emit_cold(const ModuleRecord& r);
void emit_cold(const ParamRecord& r);
void emit_cold(const AnomalyRecord& r);
void emit_cold(const OomReportRecord& r);
void emit_cold(const KernelRecord& r);
void emit_cold(const CollectiveRecord& r);
void set_meta_cold(std::string_view key, std::string_view value);
void push_instant(const SourceLocation* loc) noexcept;
void push_counter(const SourceLocation* loc, double value) noexcept;

// What the training thread has measured of the step it runs (PhaseScope, add_step_samples): the phases' time in
// ticks, an open phase counted up to the moment the step ends (the rest goes to the next step).
struct StepAccount {
  std::array<std::int64_t, kPhases> ticks{};
  std::array<std::int64_t, kPhases> open_since{};  // ticks when the outermost open scope of a phase began
  std::array<std::int32_t, kPhases> depth{};
  std::int64_t samples = 0, tokens = 0;
  bool has_samples = false, has_tokens = false;
};
inline thread_local StepAccount t_step_account;
// Moves the thread's account into a steps row about to be emitted: data_ns, backward_ns and optimizer_ns in ticks
// (the collector writes ns), samples and tokens where the row has none; the account starts over.
void take_step_account(StepRecord& r) noexcept;

}  // namespace detail

// True while a session records.
inline bool enabled() noexcept { return detail::g_recording.load(std::memory_order_relaxed); }
// True while a span would go somewhere: a session records it, or an NVTX tool is attached. Code that computes a
// span's SourceLocation only when it is wanted asks this, not enabled().
inline bool spans_on() noexcept { return detail::g_span_sinks.load(std::memory_order_relaxed) != 0; }
// True while spans are NVTX ranges (nvtx.cpp).
inline bool nvtx_on() noexcept { return (detail::g_span_sinks.load(std::memory_order_relaxed) & detail::kNvtxSpans) != 0; }

// The process-wide strings.id of text (stable for the process; every session writes the strings it needs).
Id intern(std::string_view text);
// A SourceLocation for a name known at run time, one per (name, kind), never freed. Cache the pointer.
const SourceLocation* location(std::string_view name, SpanKind kind);

// This thread's trace id (threads.id), registering it if needed; its name and role in the threads table.
Id thread_id();
void set_thread_name(std::string_view name, ThreadRole role = ThreadRole::other);
// The innermost open span of this thread (spans.id), or 0 when none (or tracing is off).
Id current_span_id() noexcept;

// The training step that spans and records belong to (-1: none). Global: dataloader threads see the main's step.
inline void set_step(std::int64_t step) noexcept {
  detail::g_step.store(static_cast<std::int32_t>(step), std::memory_order_relaxed);
}
inline std::int64_t current_step() noexcept { return detail::g_step.load(std::memory_order_relaxed); }

// Calls start() each time a session starts recording (at once when one already records) and stop() just before
// it stops: how the engine hooks its observers (the allocator's memory events) in only while a trace records.
// Both run on the thread that starts or stops the session, inside it (recording is on in start(), still on in
// stop()): they may emit and set_meta, but must not start or stop a session. Hooks stay for the process.
void add_session_hook(void (*start)(), void (*stop)());

#ifndef GLASSBOX_NO_PROBES

class Span {
 public:
  explicit Span(const SourceLocation* loc, std::int64_t seq = -1) noexcept {
    if (spans_on() && loc) [[unlikely]]
      begin(loc, seq);
  }
  ~Span() {
    if (buf_ || nvtx_) [[unlikely]]
      end();
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  // spans.id of this span, 0 when not recorded.
  Id id() const noexcept { return buf_ ? span_id(buf_->thread_id, n_) : 0; }
  // The seq written when the span ends, for spans that learn it late (a DataLoader `wait` with in_order off).
  void set_seq(std::int64_t seq) noexcept { seq_ = seq; }
  // Ends the span now (the destructor then does nothing more). The span's times in ticks, 0 when not recorded.
  void end_now() noexcept {
    if (buf_ || nvtx_) end();
    buf_ = nullptr;
    nvtx_ = gpu_ = false;
  }
  std::int64_t start_ticks() const noexcept { return t0_; }
  std::int64_t end_ticks() const noexcept { return t1_; }

 private:
  void begin(const SourceLocation* loc, std::int64_t seq) noexcept {
    const std::uint8_t sinks = detail::g_span_sinks.load(std::memory_order_relaxed);
    if (sinks & detail::kNvtxSpans) {
      detail::nvtx_push(loc);
      nvtx_ = true;
    }
    if (!(sinks & detail::kRecordSpans)) return;
    buf_ = detail::this_thread();
    if (!buf_) return;
    loc_ = loc;
    seq_ = seq;
    t0_ = ticks();
    n_ = ++buf_->next_span;
    parent_ = buf_->current;
    buf_->current = n_;
    if (sinks & detail::kGpuSpans) {
      detail::gpu_push(span_id(buf_->thread_id, n_));
      gpu_ = true;
    }
  }
  void end() noexcept {
    if (gpu_) detail::gpu_pop();
    if (buf_) end_recorded();
    if (nvtx_) detail::nvtx_pop();
  }
  void end_recorded() noexcept {
    std::int64_t t1 = t1_ = ticks();
    buf_->current = parent_;
    detail::Event* e = buf_->reserve(1, ShedKind::span);
    if (!e) return;
    e->loc = loc_;
    e->t0 = t0_;
    e->t1 = t1;
    e->seq = seq_;
    e->id = n_;
    e->parent = parent_;
    e->step = detail::g_step.load(std::memory_order_relaxed);
    e->module = detail::t_module;
    e->type = detail::EventType::span;
    buf_->commit(1);
  }

  detail::ThreadBuffer* buf_ = nullptr;
  const SourceLocation* loc_ = nullptr;
  std::int64_t t0_ = 0, t1_ = 0;
  std::int64_t seq_ = -1;
  std::uint32_t n_ = 0;
  std::uint32_t parent_ = 0;
  bool nvtx_ = false;
  bool gpu_ = false;
};

inline void instant(const SourceLocation* loc) noexcept {
  if (enabled()) [[unlikely]]
    detail::push_instant(loc);
}
inline void counter(const SourceLocation* loc, double value) noexcept {
  if (enabled()) [[unlikely]]
    detail::push_counter(loc, value);
}

// Queue one typed row of the trace (records.h). Modules and params are kept even when tracing is off.
template <class R>
void emit(const R& record) {
  if constexpr (std::is_same_v<R, ModuleRecord> || std::is_same_v<R, ParamRecord>) {
    detail::emit_cold(record);
  } else {
    if (!enabled()) return;
    if constexpr (detail::ring_record<R> >= 0) {
      static_assert(std::is_trivially_copyable_v<R>);
      detail::push_record(detail::ring_record<R>, &record, sizeof(R));
    } else {
      detail::emit_cold(record);
    }
  }
}

// A meta row (key, value) in the trace being recorded (insert or replace; written with the next batch); nothing
// when no session records. For what the engine knows about a run, e.g. device_total_bytes.
inline void set_meta(std::string_view key, std::string_view value) {
  if (enabled()) detail::set_meta_cold(key, value);
}

// Spans and records of this thread inside the scope belong to module_id (modules.id).
class ModuleScope {
 public:
  explicit ModuleScope(Id module_id) noexcept : prev_(detail::t_module) {
    detail::t_module = static_cast<std::int32_t>(module_id);
  }
  ~ModuleScope() { detail::t_module = prev_; }
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  std::int32_t prev_;
};

// The outermost scope of a phase on this thread adds its time to the step that ends next on this thread (steps
// data_ns, backward_ns, optimizer_ns). The engine opens them: the DataLoader's wait, backward(), optimizer.step().
class PhaseScope {
 public:
  explicit PhaseScope(Phase p) noexcept : p_(static_cast<int>(p)) {
    if (enabled()) [[unlikely]] {
      detail::StepAccount& a = detail::t_step_account;
      if (a.depth[p_]++ == 0) a.open_since[p_] = ticks();
      on_ = true;
    }
  }
  ~PhaseScope() {
    if (!on_) return;
    detail::StepAccount& a = detail::t_step_account;
    if (--a.depth[p_] == 0) a.ticks[p_] += ticks() - a.open_since[p_];
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  int p_;
  bool on_ = false;
};

// The batch of the step being run on this thread, added up until the step ends (gradient accumulation: every
// micro-batch counts): steps.samples and steps.tokens. The DataLoader adds the samples of each batch it hands out.
inline void add_step_samples(std::int64_t n) noexcept {
  if (!enabled()) return;
  detail::t_step_account.samples += n;
  detail::t_step_account.has_samples = true;
}
inline void add_step_tokens(std::int64_t n) noexcept {
  if (!enabled()) return;
  detail::t_step_account.tokens += n;
  detail::t_step_account.has_tokens = true;
}

// One training step: a span of kind step named "step", the global step number set for its duration, and a steps
// row (start, end, loss, lr, grad scale, skipped, where the time went, the batch) when it ends.
//   for (int64_t i = 0; i < steps; ++i) { gb::trace::StepScope step(i); ...; step.set_loss(loss.item<double>()); }
// Without any StepScope the engine ends a step at each optimizer.step() (engine/monitor/steps.cpp); a steps row
// emitted outside a step span runs from the previous step's end to the time of its emit.
class StepScope {
 public:
  explicit StepScope(std::int64_t step) noexcept : span_((begin(step), &location())) { record_.step = step; }
  ~StepScope() {
    span_.end_now();  // the row carries the span's times (ticks; the collector writes ns)
    record_.start_ns = span_.start_ticks();
    record_.end_ns = span_.end_ticks();
    if (auto hook = detail::g_step_end_hook.load(std::memory_order_acquire); hook && enabled()) hook(record_);
    if (enabled()) detail::take_step_account(record_);
    emit(record_);
    set_step(-1);
    detail::g_step_scopes.fetch_sub(1, std::memory_order_relaxed);
  }
  StepScope(const StepScope&) = delete;
  StepScope& operator=(const StepScope&) = delete;
  void set_loss(double v) noexcept { record_.loss = v; }
  void set_lr(double v) noexcept { record_.lr = v; }
  void set_grad_scale(double v) noexcept { record_.grad_scale = v; }
  void set_skipped(bool v) noexcept { record_.skipped = v; }
  // The step's batch (steps.samples / tokens); wins over what the DataLoader or add_step_samples counted.
  void set_samples(std::int64_t n) noexcept { record_.samples = n; }
  void set_tokens(std::int64_t n) noexcept { record_.tokens = n; }

 private:
  static void begin(std::int64_t step) noexcept {
    detail::g_step_scopes.fetch_add(1, std::memory_order_relaxed);
    set_step(step);
  }
  static const SourceLocation& location() noexcept {
    static constexpr SourceLocation loc{"step", __FILE__, __LINE__, SpanKind::step};
    return loc;
  }
  StepRecord record_;
  Span span_;
};

#else  // GLASSBOX_NO_PROBES: every probe compiles to nothing

class Span {
 public:
  explicit Span(const SourceLocation*, std::int64_t = -1) noexcept {}
  Id id() const noexcept { return 0; }
  void set_seq(std::int64_t) noexcept {}
  void end_now() noexcept {}
  std::int64_t start_ticks() const noexcept { return 0; }
  std::int64_t end_ticks() const noexcept { return 0; }
};
inline void instant(const SourceLocation*) noexcept {}
inline void counter(const SourceLocation*, double) noexcept {}
template <class R>
void emit(const R&) {}
inline void set_meta(std::string_view, std::string_view) {}
class ModuleScope {
 public:
  explicit ModuleScope(Id) noexcept {}
};
class StepScope {
 public:
  explicit StepScope(std::int64_t) noexcept {}
  void set_loss(double) noexcept {}
  void set_lr(double) noexcept {}
  void set_grad_scale(double) noexcept {}
  void set_skipped(bool) noexcept {}
  void set_samples(std::int64_t) noexcept {}
  void set_tokens(std::int64_t) noexcept {}
};
class PhaseScope {
 public:
  explicit PhaseScope(Phase) noexcept {}
};
inline void add_step_samples(std::int64_t) noexcept {}
inline void add_step_tokens(std::int64_t) noexcept {}

#endif

}  // namespace gb::trace

#define GB_TRACE_CAT2(a, b) a##b
#define GB_TRACE_CAT(a, b) GB_TRACE_CAT2(a, b)

#define GB_TRACE_LOCATION(var, kind, name) \
  static constexpr ::gb::trace::SourceLocation var { name, __FILE__, __LINE__, kind }
#ifndef GLASSBOX_NO_PROBES
// A span of `kind` (gb::trace::SpanKind) named `name` (a string literal) until the end of the scope.
#define GB_TRACE_SPAN(kind, name)                                       \
  GB_TRACE_LOCATION(GB_TRACE_CAT(gb_trace_loc_, __LINE__), kind, name); \
  ::gb::trace::Span GB_TRACE_CAT(gb_trace_span_, __LINE__) { &GB_TRACE_CAT(gb_trace_loc_, __LINE__) }
// The same, as a named variable: `GB_TRACE_SPAN_AS(span, SpanKind::op, "linear"); ... span.id()`.
#define GB_TRACE_SPAN_AS(var, kind, name)                               \
  GB_TRACE_LOCATION(GB_TRACE_CAT(gb_trace_loc_, __LINE__), kind, name); \
  ::gb::trace::Span var { &GB_TRACE_CAT(gb_trace_loc_, __LINE__) }
// A span of kind user.
#define GB_TRACE_SCOPE(name) GB_TRACE_SPAN(::gb::trace::SpanKind::user, name)
#define GB_TRACE_INSTANT(name)                                          \
  do {                                                                  \
    GB_TRACE_LOCATION(gb_trace_loc, ::gb::trace::SpanKind::user, name); \
    ::gb::trace::instant(&gb_trace_loc);                                \
  } while (0)
#define GB_TRACE_COUNTER(name, value)                                   \
  do {                                                                  \
    GB_TRACE_LOCATION(gb_trace_loc, ::gb::trace::SpanKind::user, name); \
    ::gb::trace::counter(&gb_trace_loc, static_cast<double>(value));    \
  } while (0)
#else
#define GB_TRACE_SPAN(kind, name) static_assert(true)
#define GB_TRACE_SPAN_AS(var, kind, name) \
  ::gb::trace::Span var { nullptr }
#define GB_TRACE_SCOPE(name) static_assert(true)
#define GB_TRACE_INSTANT(name) static_cast<void>(0)
#define GB_TRACE_COUNTER(name, value) static_cast<void>(0)
#endif
