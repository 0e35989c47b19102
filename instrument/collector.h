// instrument/collector.h — internal: the thread that drains every ring into the trace Writer.
//
// One Collector per session. Its constructor writes what the session needs from before it started (threads,
// strings, modules, params) and discards events left in the rings by an earlier session; start() launches the
// thread; stop() stops recording, drains what the probes already wrote, writes the session's meta (events shed per
// thread and by kind, events written, how the session stopped) and closes the file. A Writer error (disk full,
// file removed) stops recording with one warning on stderr and keeps what was written.
//
// Two levels (instrument/detail.h, traces/SCHEMA.md detail_windows):
//   - the summary is written as it comes, for every step: steps and step_memory rows (from the cold queue, their
//     ticks made ns; a step's forward_ns is what its other phases leave), step spans, anomalies, OOM reports,
//     grad_stats and graphs (the monitor decides when those are due), modules, params, meta;
//   - detail (spans, instants, counters, op_details, collectives, memory events) is written in the steps the
//     policy keeps; the rest goes to the flight recorder (flight_recorder.h), which writes its last steps where an
//     anomaly (warning or error) or an OOM report was emitted (a trigger event in that thread's ring: the recorder
//     then holds the steps up to that moment, however far behind the collector runs), and at the end (exit,
//     session end, uncaught exception, signal), with a detail_windows row each.
//     Rows are routed by their step (a row outside any step follows the highest step seen). Memory events are
//     held until one more drain has passed and then taken in time order (each thread's ring is in order, the
//     threads are not): the live blocks they leave (live_memory.h) are exact, and every stretch of written memory
//     events starts with a resume of what was live.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "instrument/clock.h"
#include "instrument/detail.h"
#include "instrument/flight_recorder.h"
#include "instrument/live_memory.h"
#include "instrument/registry.h"
#include "traces/writer.h"

namespace gb::trace::detail {

class Collector {
 public:
  Collector(std::unique_ptr<Writer> writer, const DetailPolicy& policy);
  ~Collector();
  void start();
  // Stops recording and finishes the file; stopped_by goes to meta (e.g. "session end", "signal SIGINT").
  void stop(const std::string& stopped_by);
  // Called from a signal handler: the collector thread stops the session and re-raises the signal.
  void request_signal_stop(int sig) noexcept { signal_.store(sig, std::memory_order_relaxed); }
  // True once a signal's trace is finished (the handler waits for it: the training stops at once).
  bool signal_done() const noexcept { return signal_done_.load(std::memory_order_acquire); }
  std::uint64_t events_written() const { return events_written_; }
  bool failed() const { return failed_; }
  const TickClock& clock() const { return clock_; }  // the trace's clock: ns(ticks) since the session started

 private:
  void run();
  std::size_t drain_all();
  std::size_t drain(ThreadEntry& t);
  std::size_t drain_ring(ThreadEntry& t, Ring& r);
  void read_span(const ThreadBuffer& b, const Event& e);
  void read_record(const ThreadBuffer& b, const Ring& r, std::uint64_t at);
  std::size_t write_cold();
  void write_new_registry_rows();  // strings, modules, params, threads added since the last call
  void finish(const std::string& stopped_by);
  void fail(const std::exception& e);
  Id name_id(const SourceLocation* loc);

  // detail
  std::int64_t step_of(std::int32_t event_step) const;
  bool detail(std::int64_t step) const;
  void route(const RecordedRow& row);                    // a detail row: written, or to the recorder
  void write_row(const RecordedRow& row);
  void release_memory(bool all);                         // pending memory events older than the last drain
  void on_memory(const RecordedRow& row);                // one memory event, in time order
  void open_memory(std::int64_t t_ns, const LiveMemory& live);
  void note_window(std::int64_t step, std::int64_t t_ns, bool stepped = true);
  void emit_windows(std::int64_t before_step, bool all);  // detail_windows rows of the windows that end before a step
  void complete_step(StepRecord& r, std::int64_t emit_ticks);
  void dump(std::int64_t step, DetailReason reason);     // the flight recorder into the trace
  void write_detail_meta();

  std::unique_ptr<Writer> writer_;
  TickClock clock_;
  DetailPolicy policy_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> signal_{0};
  std::atomic<bool> signal_done_{false};
  bool finishing_fast_ = false;
  bool at_normal_priority_ = false;  // raised from nice +10 while far behind  // a signal: everything left goes to the recorder, then the recorder to the file
  bool finished_ = false;
  bool failed_ = false;
  std::unordered_map<const SourceLocation*, Id> names_;
  const SourceLocation* last_loc_ = nullptr;
  Id last_name_ = 0;
  struct ShedAtStart {
    std::uint64_t total = 0;
    std::array<std::uint64_t, kShedKinds> by_kind{};
  };
  std::unordered_map<const ThreadEntry*, ShedAtStart> shed_at_start_;
  std::size_t strings_written_ = 0, modules_written_ = 0, params_written_ = 0;
  std::uint64_t threads_version_ = ~0ull;
  std::uint64_t events_written_ = 0;
  Id next_instant_ = 1, next_memory_ = 1, next_anomaly_ = 1, next_oom_ = 1, next_window_ = 1;
  std::int64_t last_step_end_ = 0;  // ns: where a steps row without a span starts

  // where the run is, and which steps are written in full
  std::int64_t current_step_ = -1;  // the highest step a ring event carried (where the detail has got to)
  std::int64_t summary_step_ = -1;  // the highest step a steps row carried (the summary runs ahead of the detail)
  struct Forced {
    std::int64_t first, last;
    DetailReason reason;
  };
  std::vector<Forced> forced_;  // the recorder's windows, and the steps after them
  bool rows_open_ = false;      // detail rows are being written (a window is open)
  std::int64_t rows_last_detail_ = -1, written_through_ = -1;  // the last detail step seen / written
  std::int64_t window_first_ = 0, before_window_ = -1;  // the open window's first step, the last written before it
  struct Window {
    std::int64_t first, last;  // last: the policy's (or the recorder's) last step
    std::int64_t last_seen = -1, t_min = 0, t_max = 0;
    DetailReason reason;
    std::int64_t first_stepped = std::numeric_limits<std::int64_t>::max();  // the first step a row carried itself
  };
  std::map<std::int64_t, Window> windows_;  // by first step, not yet written to detail_windows
  std::int64_t windows_written_through_ = -1;
  std::vector<std::pair<std::int64_t, std::int64_t>> window_times_;  // [t_min, t_max] of written windows

  // memory: held one drain, then in time order
  struct PendingMemory {
    RecordedRow row;
    std::uint64_t seq;
  };
  std::vector<PendingMemory> pending_memory_;
  std::uint64_t memory_seq_ = 0;
  std::int64_t release_before_ = 0;  // ns: pending events before this are released at the next drain's end
  LiveMemory live_, live_at_recorder_;
  bool memory_open_ = false;
  std::int64_t memory_last_detail_ = -1, memory_last_t_ = 0;

  FlightRecorder recorder_;
  std::uint64_t outside_detail_ = 0, recorder_dumps_ = 0;
};

}  // namespace gb::trace::detail
