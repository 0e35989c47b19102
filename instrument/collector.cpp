// instrument/collector.cpp — draining the rings: events become rows, ticks become nanoseconds.
#include "instrument/collector.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace gb::trace::detail {

namespace {

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(sig);
  }
}

OptId opt(std::int64_t v) { return v >= 0 ? OptId(v) : std::nullopt; }

// A poll that found little to do sleeps for kPollInterval, while the rings hold (or grow to hold) what the threads
// write; a poll that found kBusyEvents or more (the collector is behind) goes on at once. Few wake-ups matter where
// the training's kernels keep every core busy: each one takes a core from them for a moment (a 10 ms CNN step
// wakes it about twice instead of about 20 times).
constexpr std::size_t kBusyEvents = 1024;
constexpr auto kPollInterval = std::chrono::milliseconds(5);

// Every event the thread wrote has been read (or it has no ring left).
bool drained(const ThreadEntry& t) {
  const Ring* r = t.oldest;
  return !r || (!r->next.load(std::memory_order_acquire) &&
                r->tail.load(std::memory_order_relaxed) == r->head.load(std::memory_order_acquire));
}

std::vector<ThreadEntry*> snapshot_threads() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<ThreadEntry*> out;
  out.reserve(r.threads.size());
  for (auto& t : r.threads) out.push_back(t.get());
  return out;
}

}  // namespace

Collector::Collector(std::unique_ptr<Writer> writer) : writer_(std::move(writer)) {
  // Events an earlier session left behind are not this session's.
  // (No thread links a ring while no session records, so the chain holds still here.)
  for (ThreadEntry* t : snapshot_threads()) {
    if (Ring* r = t->oldest) {
      while (Ring* next = r->next.load(std::memory_order_acquire)) {
        delete r;
        r = next;
      }
      t->oldest = r;
      r->tail.store(r->head.load(std::memory_order_acquire), std::memory_order_release);
    }
    dropped_at_start_[t] = t->buf.dropped.load(std::memory_order_relaxed);
    t->buf.peak_events.store(0, std::memory_order_relaxed);  // (no ring grows while no session records)
  }
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.6f", 1.0 / clock_.ns_per_tick());
  writer_->set_meta("clock_ticks_per_ns", rate);
  write_new_registry_rows();
  writer_->flush();
}

Collector::~Collector() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }
}

void Collector::start() {
  thread_ = std::thread([this] {
    // Below the training's threads (nice +10, this thread only): on busy cores it takes spare time, and the rings
    // grow meanwhile; on a free core it runs as fast as before.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
    run();
  });
}

void Collector::stop(const std::string& stopped_by) {
  g_recording.store(false, std::memory_order_release);
  g_span_sinks.fetch_and(static_cast<std::uint8_t>(~kRecordSpans), std::memory_order_release);
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  finish(stopped_by);
}

void Collector::run() {
  while (!stop_.load(std::memory_order_acquire)) {
    if (int sig = signal_.load(std::memory_order_relaxed)) {
      finish("signal " + signal_name(sig));
      std::signal(sig, SIG_DFL);
      std::raise(sig);
      return;
    }
    std::size_t n = 0;
    try {
      write_new_registry_rows();
      n = drain_all() + write_cold();
      if (n < kBusyEvents) writer_->tick();
    } catch (const std::exception& e) {
      fail(e);
      return;
    }
    if (n < kBusyEvents) std::this_thread::sleep_for(kPollInterval);
  }
}

void Collector::fail(const std::exception& e) {
  g_recording.store(false, std::memory_order_release);
  g_span_sinks.fetch_and(static_cast<std::uint8_t>(~kRecordSpans), std::memory_order_release);
  failed_ = true;
  finished_ = true;
  std::fprintf(stderr,
               "glassbox: warning: tracing stopped, the program goes on: %s; the trace keeps what was "
               "written before (%s)\n",
               e.what(), writer_->path().c_str());
  try {
    writer_->close();
  } catch (...) {
  }
}

void Collector::finish(const std::string& stopped_by) {
  if (finished_) return;
  g_recording.store(false, std::memory_order_release);
  g_span_sinks.fetch_and(static_cast<std::uint8_t>(~kRecordSpans), std::memory_order_release);
  // Spans that began before recording stopped still end and write their event: give them a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  try {
    write_new_registry_rows();
    drain_all();
    write_cold();
    std::uint64_t dropped = 0;
    for (ThreadEntry* t : snapshot_threads()) {
      auto it = dropped_at_start_.find(t);
      std::uint64_t d =
          t->buf.dropped.load(std::memory_order_relaxed) - (it == dropped_at_start_.end() ? 0 : it->second);
      if (d) writer_->set_meta("dropped_events.thread." + std::to_string(t->buf.thread_id), std::to_string(d));
      dropped += d;
      if (std::uint64_t peak = t->buf.peak_events.load(std::memory_order_relaxed))
        writer_->set_meta("ring_peak_events.thread." + std::to_string(t->buf.thread_id), std::to_string(peak));
    }
    writer_->set_meta("dropped_events", std::to_string(dropped));
    writer_->set_meta("events_written", std::to_string(events_written_));
    writer_->set_meta("stopped_by", stopped_by);
    writer_->close();
    finished_ = true;
  } catch (const std::exception& e) {
    fail(e);
  }
  // Threads that exited and were drained are forgotten.
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::erase_if(r.threads, [](const std::unique_ptr<ThreadEntry>& t) {
    return t->retired.load(std::memory_order_acquire) && drained(*t);
  });
}

void Collector::write_new_registry_rows() {
  Registry& r = registry();
  std::vector<std::string> strings;
  std::vector<ModuleRecord> modules;
  std::vector<ParamRecord> params;
  std::vector<ThreadRecord> threads;
  std::size_t first_string = strings_written_;
  {
    std::lock_guard lock(r.mu);
    strings.assign(r.strings.begin() + static_cast<std::ptrdiff_t>(strings_written_), r.strings.end());
    modules.assign(r.modules.begin() + static_cast<std::ptrdiff_t>(modules_written_), r.modules.end());
    params.assign(r.params.begin() + static_cast<std::ptrdiff_t>(params_written_), r.params.end());
    std::uint64_t v = r.threads_version.load(std::memory_order_acquire);
    if (v != threads_version_) {
      threads_version_ = v;
      for (auto& t : r.threads)
        threads.push_back(ThreadRecord{t->buf.thread_id, t->buf.os_tid, t->name, t->role, std::nullopt});
      threads.insert(threads.end(), r.tracks.begin(), r.tracks.end());
    }
  }
  for (std::size_t i = 0; i < strings.size(); ++i)
    writer_->add_string(static_cast<Id>(first_string + i + 1), strings[i]);
  strings_written_ += strings.size();
  for (auto& m : modules) writer_->add(m);
  modules_written_ += modules.size();
  for (auto& p : params) writer_->add(p);
  params_written_ += params.size();
  for (auto& t : threads) writer_->add(t);
}

Id Collector::name_id(const SourceLocation* loc) {
  if (loc == last_loc_) return last_name_;  // runs of one name are common (a loop of the same op)
  if (auto it = names_.find(loc); it != names_.end()) {
    last_loc_ = loc;
    return last_name_ = it->second;
  }
  Id id = intern(loc->name);
  if (static_cast<std::size_t>(id) > strings_written_) write_new_registry_rows();
  names_.emplace(loc, id);
  return id;
}

std::size_t Collector::drain_all() {
  std::size_t n = 0;
  for (ThreadEntry* t : snapshot_threads()) {
    n += drain(*t);
    if (t->oldest && t->retired.load(std::memory_order_acquire) && drained(*t)) {
      delete t->oldest;  // the thread is gone and its ring is empty
      t->oldest = t->buf.ring = nullptr;
    }
  }
  return n;
}

// Drains the thread's rings oldest first: a ring whose successor is linked is finished, then freed.
std::size_t Collector::drain(ThreadEntry& t) {
  std::size_t n = 0;
  while (Ring* r = t.oldest) {
    // The producer linked `next` after its last event in r (release): once it is seen, r's head is final.
    Ring* next = r->next.load(std::memory_order_acquire);
    n += drain_ring(t, *r);
    if (!next) break;
    t.oldest = next;
    delete r;
  }
  return n;
}

std::size_t Collector::drain_ring(ThreadEntry& t, Ring& r) {
  const ThreadBuffer& b = t.buf;
  std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
  const std::uint64_t head = r.head.load(std::memory_order_acquire);
  if (tail == head) return 0;
  // Strings interned before these events were pushed are visible now (head was loaded with acquire).
  if (registry().strings_count.load(std::memory_order_acquire) > strings_written_) write_new_registry_rows();
  std::size_t n = 0;
  while (tail < head) {
    const Event& e = *r.at(tail);
    switch (e.type) {
      case EventType::span:
        write_span(b, e);
        break;
      case EventType::record:
        write_record(b, r, tail);
        break;
      case EventType::instant:
        writer_->add(InstantRecord{next_instant_++, clock_.ns(e.t0), name_id(e.loc), b.thread_id,
                                   e.id ? OptId(span_id(b.thread_id, e.id)) : std::nullopt, opt(e.step)});
        break;
      case EventType::counter:
        writer_->add(CounterRecord{clock_.ns(e.t0), name_id(e.loc), std::bit_cast<double>(e.t1)});
        break;
    }
    tail += 1 + (e.type == EventType::record ? e.slots : 0);
    ++n;
    if ((n & 4095) == 0) r.tail.store(tail, std::memory_order_release);  // give the producer room early
  }
  r.tail.store(tail, std::memory_order_release);
  events_written_ += n;
  return n;
}

void Collector::write_span(const ThreadBuffer& b, const Event& e) {
  if (e.t1 < clock_.start_ticks()) return;  // ended before this session began
  std::int64_t start = std::max<std::int64_t>(0, clock_.ns(e.t0)), end = clock_.ns(e.t1);
  SpanRecord r{span_id(b.thread_id, e.id),
               e.loc->kind,
               name_id(e.loc),
               b.thread_id,
               start,
               end,
               opt(e.step),
               e.parent ? OptId(span_id(b.thread_id, e.parent)) : std::nullopt,
               opt(e.seq),
               opt(e.module)};
  if (r.kind == SpanKind::step && e.step >= 0) step_spans_[e.step] = {start, end};
  writer_->add(r);
}

namespace {

// What the probe saw when a record was emitted; fills the fields the caller left empty.
struct Context {
  std::int64_t t_ns;
  OptId span, module;
  const std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>>* step_spans;
  std::int64_t* last_step_end;
};
void complete(MemoryEventRecord& r, const Context& c, Id& next_id) {
  if (!r.id) r.id = next_id++;
  if (!r.t_ns) r.t_ns = c.t_ns;
  if (!r.span_id) r.span_id = c.span;
  if (!r.module_id) r.module_id = c.module;
}
void complete(GraphNodeRecord& r, const Context& c, Id&) {
  if (!r.forward_span_id) r.forward_span_id = c.span;
  if (!r.module_id) r.module_id = c.module;
}
void complete(GraphEdgeRecord&, const Context&, Id&) {}
void complete(GradStatRecord&, const Context&, Id&) {}
// Times from the step's span, which ended just before; a step without a span (the engine's automatic steps) runs
// from the previous step's end to its emit.
void complete(StepRecord& r, const Context& c, Id&) {
  if (r.start_ns == 0 && r.end_ns == 0) {
    if (auto it = c.step_spans->find(r.step); it != c.step_spans->end())
      std::tie(r.start_ns, r.end_ns) = it->second;
    else
      std::tie(r.start_ns, r.end_ns) = std::pair{*c.last_step_end, c.t_ns};
  }
  *c.last_step_end = std::max(*c.last_step_end, r.end_ns);
}
void complete(OpDetailsRecord& r, const Context& c, Id&) {
  if (!r.span_id && c.span) r.span_id = *c.span;
}
void complete(CounterRecord& r, const Context& c, Id&) {
  if (!r.t_ns) r.t_ns = c.t_ns;
}


}  // namespace

void Collector::write_record(const ThreadBuffer& b, const Ring& ring, std::uint64_t at) {
  const Event& e = *ring.at(at);  // the header; the payload is in the slots after it
  alignas(Event) unsigned char bytes[sizeof(Event) * 8];
  for (std::uint32_t i = 0; i < e.slots && i < 8; ++i)
    std::memcpy(bytes + std::size_t(i) * sizeof(Event), ring.at(at + 1 + i), sizeof(Event));
  const Context c{clock_.ns(e.t0), e.id ? OptId(span_id(b.thread_id, e.id)) : std::nullopt, opt(e.module), &step_spans_,
                  &last_step_end_};
  for_each_record(RingRecords{}, [&]<class R>(R*) {
    if (e.record_type != ring_record<R>) return;
    R r;
    std::memcpy(&r, bytes, sizeof(R));
    complete(r, c, next_memory_);
    writer_->add(r);
  });
}

std::size_t Collector::write_cold() {
  std::vector<ColdItem> items;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    items.swap(r.cold);
  }
  if (!items.empty()) write_new_registry_rows();  // the strings and tracks GPU activity rows name
  for (ColdItem& item : items) {
    const std::int64_t t = clock_.ns(item.t);
    const OptId span = item.span_n ? OptId(span_id(item.thread_id, item.span_n)) : std::nullopt;
    std::visit(
        [&](auto& r) {
          using R = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<R, AnomalyRecord>) {
            if (!r.id) r.id = next_anomaly_++;
            if (!r.t_ns) r.t_ns = t;
            if (!r.step) r.step = opt(item.step);
            if (!r.span_id) r.span_id = span;
            if (!r.module_id) r.module_id = opt(item.module);
          } else if constexpr (std::is_same_v<R, OomReportRecord>) {
            if (!r.id) r.id = next_oom_++;
            if (!r.t_ns) r.t_ns = t;
          } else if constexpr (std::is_same_v<R, CollectiveRecord>) {
            r.queued_ns = clock_.ns(r.queued_ns);  // the probe gave ticks
          }
          if constexpr (std::is_same_v<R, MetaRow>)
            writer_->set_meta(r.key, r.value);
          else
            writer_->add(r);
        },
        item.record);
  }
  // Meta rows are not events (a run that records nothing still says why GPU activity was off).
  events_written_ += static_cast<std::size_t>(std::count_if(
      items.begin(), items.end(), [](const ColdItem& i) { return !std::holds_alternative<MetaRow>(i.record); }));
  return items.size();
}

}  // namespace gb::trace::detail
