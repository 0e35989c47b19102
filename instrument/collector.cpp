// instrument/collector.cpp — draining the rings: events become rows, ticks become nanoseconds.
#include "instrument/collector.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>

#include "traces/error.h"

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
constexpr std::size_t kBehindEvents = 1 << 20;  // a drain this large: the collector is far behind
constexpr int kNice = 10;
constexpr std::int64_t kNoTime = std::numeric_limits<std::int64_t>::max();
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

Collector::Collector(std::unique_ptr<Writer> writer, const DetailPolicy& policy)
    : writer_(std::move(writer)), policy_(policy) {
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
    ShedAtStart& s = shed_at_start_[t];
    s.total = t->buf.dropped.load(std::memory_order_relaxed);
    for (int k = 0; k < kShedKinds; ++k) s.by_kind[size_t(k)] = t->buf.shed[size_t(k)].load(std::memory_order_relaxed);
    t->buf.peak_events.store(0, std::memory_order_relaxed);  // (no ring grows while no session records)
  }
  recorder_.configure(policy_.recorder, policy_.recorder_mb << 20);  // also in full detail: a signal's last steps
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.6f", 1.0 / clock_.ns_per_tick());
  writer_->set_meta("clock_ticks_per_ns", rate);
  writer_->set_meta("detail", policy_.text());
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
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kNice);
    // SIGINT/SIGTERM go to the training's threads, whose handler waits for this thread to finish the trace.
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, nullptr);
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
      finishing_fast_ = true;
      finish("signal " + signal_name(sig));
      signal_done_.store(true, std::memory_order_release);
      std::signal(sig, SIG_DFL);
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, sig);
      pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
      std::raise(sig);
      return;
    }
    std::size_t n = 0;
    try {
      write_new_registry_rows();
      const std::int64_t pass_start = clock_.ns(ticks());
      n = drain_all();
      release_memory(false);
      // windows the rows and the memory events have moved past (the steps rows run ahead of both)
      emit_windows(pending_memory_.empty() ? current_step_ : std::min(current_step_, pending_memory_.front().row.step),
                   false);
      release_before_ = pass_start;  // what the next drain finds before this moment is late by a whole drain
      n += write_cold();
      if (n < kBusyEvents) writer_->tick();
      // Far behind (the cores are busy with other work): at the training's priority until it has caught up, rather
      // than let the rings fill and shed detail (lowering nice needs CAP_SYS_NICE; without it this stays +10).
      const bool behind = n >= kBehindEvents;
      if (behind != at_normal_priority_ && (behind || n < kBusyEvents)) {
        at_normal_priority_ = behind;
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), behind ? 0 : kNice);
      }
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
  if (dynamic_cast<const DiskFullError*>(&e)) {
    // The trace ends here, readable, saying so; the training goes on, untraced, at no cost.
    const std::string step = std::to_string(std::max<std::int64_t>({current_step_, summary_step_, 0}));
    std::fprintf(stderr,
                 "glassbox: warning: tracing stopped at step %s, the program goes on untraced: %s; the trace keeps "
                 "the steps before (%s)\n",
                 step.c_str(), e.what(), writer_->path().c_str());
    try {
      writer_->close_full({{"stopped_by", "disk full"},
                           {"disk_full", "step " + step + ": " + e.what()},
                           {"events_written", std::to_string(events_written_)},
                           {"events_outside_detail", std::to_string(outside_detail_)},
                           {"recorder_dumps", std::to_string(recorder_dumps_)}});
    } catch (const std::exception& again) {
      std::fprintf(stderr, "glassbox: warning: %s\n", again.what());
    }
    return;
  }
  std::fprintf(stderr,
               "glassbox: warning: tracing stopped, the program goes on: %s; the trace keeps what was "
               "written before (%s)\n",
               e.what(), writer_->path().c_str());
  try {
    writer_->close();
  } catch (...) {
  }
}

namespace {
DetailReason reason_of(const std::string& stopped_by) {
  if (stopped_by.rfind("signal", 0) == 0) return DetailReason::signal;
  if (stopped_by.rfind("uncaught", 0) == 0 || stopped_by.rfind("std::terminate", 0) == 0)
    return DetailReason::exception;
  return DetailReason::end;
}
}  // namespace

void Collector::finish(const std::string& stopped_by) {
  if (finished_) return;
  g_recording.store(false, std::memory_order_release);
  g_span_sinks.fetch_and(static_cast<std::uint8_t>(~kRecordSpans), std::memory_order_release);
  // Spans that began before recording stopped still end and write their event: give them a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  try {
    write_new_registry_rows();
    drain_all();
    release_memory(true);
    write_cold();
    dump(std::max(current_step_, summary_step_), reason_of(stopped_by));  // the last steps, for how the run ended
    emit_windows(0, true);
    std::uint64_t dropped = 0;
    std::array<std::uint64_t, kShedKinds> shed{};
    for (ThreadEntry* t : snapshot_threads()) {
      auto it = shed_at_start_.find(t);
      const ShedAtStart base = it == shed_at_start_.end() ? ShedAtStart{} : it->second;
      std::uint64_t d = t->buf.dropped.load(std::memory_order_relaxed) - base.total;
      if (d) writer_->set_meta("dropped_events.thread." + std::to_string(t->buf.thread_id), std::to_string(d));
      dropped += d;
      for (int k = 0; k < kShedKinds; ++k)
        shed[size_t(k)] += t->buf.shed[size_t(k)].load(std::memory_order_relaxed) - base.by_kind[size_t(k)];
      if (std::uint64_t peak = t->buf.peak_events.load(std::memory_order_relaxed))
        writer_->set_meta("ring_peak_events.thread." + std::to_string(t->buf.thread_id), std::to_string(peak));
    }
    writer_->set_meta("dropped_events", std::to_string(dropped));
    for (int k = 0; k < kShedKinds; ++k)
      if (shed[size_t(k)]) writer_->set_meta("shed_events." + std::string(kShedKindNames[size_t(k)]), std::to_string(shed[size_t(k)]));
    writer_->set_meta("events_written", std::to_string(events_written_));
    write_detail_meta();
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

void Collector::write_detail_meta() {
  writer_->set_meta("events_outside_detail", std::to_string(outside_detail_));
  writer_->set_meta("recorder_dumps", std::to_string(recorder_dumps_));
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
    if (r->tail.load(std::memory_order_relaxed) != r->head.load(std::memory_order_acquire)) break;  // a signal came
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
    if (e.step >= 0 && e.step > current_step_) current_step_ = e.step;
    switch (e.type) {
      case EventType::span:
        read_span(b, e);
        break;
      case EventType::record:
        read_record(b, r, tail);
        break;
      case EventType::instant: {
        RecordedRow row;
        row.type = RecordedRow::Type::instant;
        row.step = step_of(e.step);
        row.stepped = e.step >= 0;
        row.instant = InstantRecord{0, clock_.ns(e.t0), name_id(e.loc), b.thread_id,
                                    e.id ? OptId(span_id(b.thread_id, e.id)) : std::nullopt, opt(e.step)};
        route(row);
        break;
      }
      case EventType::counter: {
        RecordedRow row;
        row.type = RecordedRow::Type::counter;
        row.step = step_of(e.step);
        row.stepped = e.step >= 0;
        row.counter = CounterRecord{clock_.ns(e.t0), name_id(e.loc), std::bit_cast<double>(e.t1)};
        route(row);
        break;
      }
      case EventType::trigger:  // the rows before it on this thread are in the recorder: write its last steps
        dump(e.seq >= 0 ? e.seq : step_of(e.step), static_cast<DetailReason>(e.record_type));
        break;
    }
    tail += 1 + (e.type == EventType::record ? e.slots : 0);
    ++n;
    if ((n & 4095) == 0) {
      r.tail.store(tail, std::memory_order_release);  // give the producer room early
      if (signal_.load(std::memory_order_relaxed) && !finishing_fast_) break;  // finish at once instead
    }
  }
  r.tail.store(tail, std::memory_order_release);
  events_written_ += n;
  return n;
}

void Collector::read_span(const ThreadBuffer& b, const Event& e) {
  if (e.t1 < clock_.start_ticks()) return;  // ended before this session began
  std::int64_t start = std::max<std::int64_t>(0, clock_.ns(e.t0)), end = clock_.ns(e.t1);
  RecordedRow row;
  row.type = RecordedRow::Type::span;
  row.step = step_of(e.step);
  row.stepped = e.step >= 0;
  row.span = SpanRecord{span_id(b.thread_id, e.id),
                        e.loc->kind,
                        name_id(e.loc),
                        b.thread_id,
                        start,
                        end,
                        opt(e.step),
                        e.parent ? OptId(span_id(b.thread_id, e.parent)) : std::nullopt,
                        opt(e.seq),
                        opt(e.module)};
  if (row.span.kind == SpanKind::step)
    writer_->add(row.span);  // the summary: every step's span
  else
    route(row);
}

namespace {

// What the probe saw when a record was emitted; fills the fields the caller left empty.
struct Context {
  std::int64_t t_ns;
  OptId span, module;
};
void complete(MemoryEventRecord& r, const Context& c) {
  if (!r.t_ns) r.t_ns = c.t_ns;
  if (!r.span_id) r.span_id = c.span;
  if (!r.module_id) r.module_id = c.module;
}
void complete(GraphNodeRecord& r, const Context& c) {
  if (!r.forward_span_id) r.forward_span_id = c.span;
  if (!r.module_id) r.module_id = c.module;
}
void complete(GraphEdgeRecord&, const Context&) {}
void complete(GradStatRecord&, const Context&) {}
void complete(OpDetailsRecord& r, const Context& c) {
  if (!r.span_id && c.span) r.span_id = *c.span;
}
void complete(CounterRecord& r, const Context& c) {
  if (!r.t_ns) r.t_ns = c.t_ns;
}

}  // namespace

void Collector::read_record(const ThreadBuffer& b, const Ring& ring, std::uint64_t at) {
  const Event& e = *ring.at(at);  // the header; the payload is in the slots after it
  alignas(Event) unsigned char bytes[sizeof(Event) * 8];
  for (std::uint32_t i = 0; i < e.slots && i < 8; ++i)
    std::memcpy(bytes + std::size_t(i) * sizeof(Event), ring.at(at + 1 + i), sizeof(Event));
  const Context c{clock_.ns(e.t0), e.id ? OptId(span_id(b.thread_id, e.id)) : std::nullopt, opt(e.module)};
  for_each_record(RingRecords{}, [&]<class R>(R*) {
    if (e.record_type != ring_record<R>) return;
    R r;
    std::memcpy(&r, bytes, sizeof(R));
    complete(r, c);
    RecordedRow row;
    row.step = step_of(e.step);
    row.stepped = e.step >= 0;
    if constexpr (std::is_same_v<R, MemoryEventRecord>) {
      row.type = RecordedRow::Type::memory;
      row.memory = r;
      pending_memory_.push_back({row, memory_seq_++});  // taken in time order after one more drain
    } else if constexpr (std::is_same_v<R, OpDetailsRecord>) {
      row.type = RecordedRow::Type::op_details;
      row.op_details = r;
      route(row);
    } else if constexpr (std::is_same_v<R, CounterRecord>) {
      row.type = RecordedRow::Type::counter;
      row.counter = r;
      route(row);
    } else {
      writer_->add(r);  // graphs and grad_stats: the monitor wrote them because they are due
    }
  });
}

// ---- detail: which rows are written ----

std::int64_t Collector::step_of(std::int32_t event_step) const {
  if (event_step >= 0) return event_step;
  return std::max<std::int64_t>(current_step_, 0);  // outside any step: the detail of the last step (set-up: step 0)
}

bool Collector::detail(std::int64_t step) const {
  if (finishing_fast_) return false;
  if (policy_.due(step)) return true;
  for (auto it = forced_.rbegin(); it != forced_.rend(); ++it)
    if (step >= it->first && step <= it->last) return true;
  return false;
}

void Collector::write_row(const RecordedRow& row) {
  switch (row.type) {
    case RecordedRow::Type::span:
      writer_->add(row.span);
      break;
    case RecordedRow::Type::instant: {
      InstantRecord r = row.instant;
      r.id = next_instant_++;
      writer_->add(r);
      break;
    }
    case RecordedRow::Type::counter:
      writer_->add(row.counter);
      break;
    case RecordedRow::Type::op_details:
      writer_->add(row.op_details);
      break;
    case RecordedRow::Type::collective:
      writer_->add(row.collective);
      break;
    case RecordedRow::Type::memory: {
      MemoryEventRecord r = row.memory;
      if (!r.id) r.id = next_memory_++;
      writer_->add(r);
      break;
    }
  }
}

namespace {
std::int64_t row_time(const RecordedRow& row) {
  switch (row.type) {
    case RecordedRow::Type::span: return row.span.start_ns;
    case RecordedRow::Type::instant: return row.instant.t_ns;
    case RecordedRow::Type::counter: return row.counter.t_ns;
    case RecordedRow::Type::memory: return row.memory.t_ns;
    default: return -1;
  }
}
}  // namespace

void Collector::route(const RecordedRow& row) {
  const auto outside = [this](const RecordedRow&) { ++outside_detail_; };
  if (detail(row.step)) {
    if (!rows_open_) {  // a window opens: the recorder keeps the steps before it (a fault inside the window)
      rows_open_ = true;
      window_first_ = row.step;
      before_window_ = written_through_;
    }
    rows_last_detail_ = std::max(rows_last_detail_, row.step);
    written_through_ = std::max(written_through_, row.step);
    write_row(row);
    note_window(row.step, row_time(row), row.stepped);
    return;
  }
  if (rows_open_ && row.step > rows_last_detail_) rows_open_ = false;
  recorder_.push_row(row, outside);
}

void Collector::release_memory(bool all) {
  if (pending_memory_.empty()) return;
  // Each thread's events are in time order and were appended ring by ring: the vector is a few sorted runs (the
  // events held from the last drain, then each thread's), merged in place in linear time.
  const auto before = [](const PendingMemory& a, const PendingMemory& b) {
    return a.row.memory.t_ns != b.row.memory.t_ns ? a.row.memory.t_ns < b.row.memory.t_ns : a.seq < b.seq;
  };
  std::vector<std::size_t> runs{0};
  for (std::size_t i = 1; i < pending_memory_.size(); ++i)
    if (before(pending_memory_[i], pending_memory_[i - 1])) runs.push_back(i);
  if (runs.size() > 16) {
    std::sort(pending_memory_.begin(), pending_memory_.end(), before);
  } else {
    for (std::size_t k = 1; k < runs.size(); ++k)
      std::inplace_merge(pending_memory_.begin(), pending_memory_.begin() + static_cast<std::ptrdiff_t>(runs[k]),
                         k + 1 < runs.size() ? pending_memory_.begin() + static_cast<std::ptrdiff_t>(runs[k + 1])
                                             : pending_memory_.end(),
                         before);
  }
  std::size_t n = 0;
  while (n < pending_memory_.size() && (all || pending_memory_[n].row.memory.t_ns < release_before_))
    on_memory(pending_memory_[n++].row);
  pending_memory_.erase(pending_memory_.begin(), pending_memory_.begin() + static_cast<std::ptrdiff_t>(n));
}

void Collector::open_memory(std::int64_t t_ns, const LiveMemory& live) {
  memory_open_ = true;
  events_written_ += live.write_resume(*writer_, t_ns, next_memory_);
}

void Collector::on_memory(const RecordedRow& row) {
  const MemoryEventRecord& m = row.memory;
  // (an event that arrives later than a whole drain — its thread held off the core — is applied as it comes)
  memory_last_t_ = std::max(memory_last_t_, m.t_ns);
  const std::int64_t step = row.step;
  const bool d = detail(step);
  const auto outside = [this](const RecordedRow&) { ++outside_detail_; };
  if (d && !memory_open_) {
    open_memory(m.t_ns, live_);  // detail resumes with what is live now (the recorder keeps the steps before)
  } else if (!d && memory_open_ && step > memory_last_detail_) {
    memory_open_ = false;
    // the recorder's memory starts here: what it held before the window can no longer be replayed onto
    recorder_.memory().evict_all(outside);
    recorder_.memory().forget_evictions();
    live_at_recorder_ = live_;
  }
  if (memory_open_) {
    if (d) memory_last_detail_ = std::max(memory_last_detail_, step);
    write_row(row);
    note_window(step, m.t_ns, row.stepped);
  } else {
    recorder_.push_memory(row, [this](const RecordedRow& old) {
      live_at_recorder_.apply(old.memory);
      ++outside_detail_;
    });
  }
  live_.apply(m);
}

// ---- detail windows ----

void Collector::note_window(std::int64_t step, std::int64_t t_ns, bool stepped) {
  // the window holding step: the recorder's (newest first), else the policy's
  std::int64_t first = -1, last = -1;
  DetailReason reason = DetailReason::first;
  for (auto it = forced_.rbegin(); it != forced_.rend() && first < 0; ++it)
    if (step >= it->first && step <= it->last) {
      first = it->first;
      last = it->last;
      reason = it->reason;
    }
  if (first < 0) {
    if (!policy_.due(step)) return;
    first = policy_.window_first(step);
    last = policy_.window_last(step);
    reason = policy_.is_full() ? DetailReason::full : step < policy_.first ? DetailReason::first : DetailReason::periodic;
  }
  if (first <= windows_written_through_) first = windows_written_through_ + 1;  // windows never overlap
  if (step < first) return;  // a late row of a window already written (its rows are in, its row is not changed)
  Window& w = windows_.try_emplace(first, Window{first, last, step, kNoTime, 0, reason}).first->second;
  w.last_seen = std::max(w.last_seen, step);
  if (stepped) w.first_stepped = std::min(w.first_stepped, step);
  if (t_ns >= 0) {
    w.t_min = std::min(w.t_min, t_ns);
    w.t_max = std::max(w.t_max, t_ns);
  }
}

void Collector::emit_windows(std::int64_t before_step, bool all) {
  while (!windows_.empty()) {
    Window w = windows_.begin()->second;
    if (!all && w.last >= before_step) return;  // in order: a later window waits for this one
    windows_.erase(windows_.begin());
    DetailWindowRecord r;
    // set-up rows (outside any step) count as the window's first step; a run whose steps start at 1 has no step 0
    r.first_step = std::max({w.first, windows_written_through_ + 1,
                             w.first_stepped == std::numeric_limits<std::int64_t>::max() ? w.first : w.first_stepped});
    r.last_step = std::min(w.last, w.last_seen);
    r.start_ns = w.t_min == kNoTime ? w.t_max : w.t_min;
    r.end_ns = std::max(r.start_ns, w.t_max);
    r.reason = w.reason;
    if (r.last_step < r.first_step) continue;
    r.id = next_window_++;
    writer_->add(r);
    windows_written_through_ = r.last_step;
    window_times_.emplace_back(r.start_ns, r.end_ns);
  }
}

// ---- the flight recorder ----

void Collector::dump(std::int64_t step, DetailReason reason) {
  if (!recorder_.on()) return;
  step = std::max<std::int64_t>(step, 0);
  const bool forward = reason == DetailReason::anomaly || reason == DetailReason::oom;
  // A step inside a window open now (the policy's, or an earlier dump's): the recorder holds the steps before the
  // window, and the window goes on; otherwise the recorder's steps up to this one, and `after` more.
  const bool in_window = rows_open_ && step >= window_first_ && detail(step);
  // (at most the recorder's last steps before this one: a trigger that came the cold way, its ring full, arrives
  // before the rows it follows, which are then written as they come)
  const std::int64_t lo = std::max({recorder_.first_complete_step(), (in_window ? before_window_ : written_through_) + 1,
                                    windows_written_through_ + 1, step - policy_.recorder + 1});
  const std::int64_t hi = in_window ? window_first_ - 1 : step;
  std::int64_t after_first = hi + 1, after_last = forward ? step + policy_.after : hi;
  if (in_window) {
    after_first = step + 1;
    for (std::int64_t s = step + 1; s <= after_last && detail(s); ++s) after_first = s + 1;  // covered already
  }
  const bool before = lo <= hi, later = forward && after_first <= after_last;
  if (!before && !later) return;  // every step up to here already has its detail
  ++recorder_dumps_;
  std::vector<Forced> made;  // the windows this dump makes; they never overlap another
  if (in_window) {
    if (before) made.push_back(Forced{lo, hi, reason});
    if (later) made.push_back(Forced{after_first, after_last, reason});
  } else {
    made.push_back(Forced{before ? lo : after_first, std::max(hi, after_last), reason});
  }
  // Every row asks detail() of its step, which scans these: the ranges all behind the windows written so far can no
  // longer take a row (a late row of those steps is outside any window now) and go.
  std::erase_if(forced_, [this](const Forced& f) { return f.last <= windows_written_through_; });
  forced_.insert(forced_.end(), made.begin(), made.end());
  // rows of the steps the window holds; a partial older step's rows, and rows of steps already written, are left
  recorder_.rows().for_each([&](const RecordedRow& row) {
    if (row.step < lo || row.step > hi) {
      ++outside_detail_;
      return;
    }
    write_row(row);
    note_window(row.step, row_time(row), row.stepped);
    written_through_ = std::max(written_through_, row.step);
  });
  recorder_.rows().clear();
  recorder_.rows().forget_evictions();
  // memory: what was live at the first kept event, then the events
  bool opened = false;
  recorder_.memory().for_each([&](const RecordedRow& row) {
    if (row.step < lo || row.step > hi) {  // before the window (part of what is live at its start), or after
      live_at_recorder_.apply(row.memory);
      ++outside_detail_;
      return;
    }
    if (!opened) {
      open_memory(row.memory.t_ns, live_at_recorder_);
      opened = true;
    }
    live_at_recorder_.apply(row.memory);
    write_row(row);
    note_window(row.step, row.memory.t_ns, row.stepped);
  });
  recorder_.memory().clear();
  recorder_.memory().forget_evictions();
  if (opened && !memory_open_) {
    memory_open_ = true;  // the dumped stretch goes on into the steps after it
    memory_last_detail_ = std::max(memory_last_detail_, after_last);
  }  // else the window's first memory event (released one drain later) opens it with what is live at that moment
  live_at_recorder_ = live_;
  if (in_window) {
    before_window_ = std::max(before_window_, hi);  // the steps before the open window are written now
  } else {
    rows_open_ = true;
    window_first_ = made.front().first;
    before_window_ = window_first_ - 1;
    rows_last_detail_ = std::max(rows_last_detail_, made.front().last);
  }
  // each window's row is written once the steps it reaches have run (emit_windows)
  for (const Forced& f : made) {
    Window& w = windows_.try_emplace(f.first, Window{f.first, f.last, f.first, kNoTime, 0, reason}).first->second;
    w.last = std::max(w.last, f.last);
    w.last_seen = std::max(w.last_seen, std::min(f.last, step));
    w.reason = reason;
  }
}

// ---- the summary ----

void Collector::complete_step(StepRecord& r, std::int64_t emit_ticks) {
  const std::int64_t t = clock_.ns(emit_ticks);
  if (r.start_ns == 0 && r.end_ns == 0) {  // an automatic step: from the previous step's end to its emit
    r.start_ns = last_step_end_;
    r.end_ns = t;
  } else {  // a StepScope's span times, in ticks
    r.start_ns = std::max<std::int64_t>(0, clock_.ns(r.start_ns));
    r.end_ns = std::max(r.start_ns, clock_.ns(r.end_ns));
  }
  auto ns = [&](std::optional<std::int64_t>& v) {
    if (v) v = clock_.duration_ns(0, *v);
  };
  ns(r.data_ns);
  ns(r.backward_ns);
  ns(r.optimizer_ns);
  if (r.data_ns && r.backward_ns && r.optimizer_ns && !r.forward_ns)
    r.forward_ns = std::max<std::int64_t>(0, r.end_ns - r.start_ns - *r.data_ns - *r.backward_ns - *r.optimizer_ns);
  last_step_end_ = std::max(last_step_end_, r.end_ns);
  summary_step_ = std::max(summary_step_, r.step);
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
          } else if constexpr (std::is_same_v<R, StepRecord>) {
            complete_step(r, item.t);
          }
          if constexpr (std::is_same_v<R, MetaRow>) {
            writer_->set_meta(r.key, r.value);
          } else if constexpr (std::is_same_v<R, TriggerRow>) {
            dump(r.step, r.reason);  // its ring was full: late, but the recorder is still written
          } else if constexpr (std::is_same_v<R, CollectiveRecord>) {
            RecordedRow row;
            row.type = RecordedRow::Type::collective;
            row.step = step_of(item.step);
            row.stepped = item.step >= 0;
            row.collective = r;
            route(row);
          } else if constexpr (std::is_same_v<R, SpanRecord> || std::is_same_v<R, KernelRecord> ||
                               std::is_same_v<R, OpDetailsRecord>) {
            // GPU activity (gpu_activity.cpp) arrives late, by time: written where a window covers it
            std::int64_t when = 0;
            if constexpr (std::is_same_v<R, SpanRecord>) when = r.start_ns;
            bool covered = rows_open_ || detail(step_of(-1));
            if constexpr (std::is_same_v<R, SpanRecord>)
              for (auto it = window_times_.rbegin(); !covered && it != window_times_.rend(); ++it)
                covered = when >= it->first && when <= it->second;
            for (const auto& [first, w] : windows_) covered = covered || (when >= w.t_min && when <= w.t_max);
            if (covered)
              writer_->add(r);
            else
              ++outside_detail_;
          } else {
            writer_->add(r);
          }
        },
        item.record);
  }
  // Meta rows are not events (a run that records nothing still says why GPU activity was off).
  events_written_ += static_cast<std::size_t>(std::count_if(items.begin(), items.end(), [](const ColdItem& i) {
    return !std::holds_alternative<MetaRow>(i.record) && !std::holds_alternative<TriggerRow>(i.record);
  }));
  return items.size();
}

}  // namespace gb::trace::detail
