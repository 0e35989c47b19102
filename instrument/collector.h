// instrument/collector.h — internal: the thread that drains every ring into the trace Writer.
//
// One Collector per session. Its constructor writes what the session needs from before it started (threads,
// strings, modules, params) and discards events left in the rings by an earlier session; start() launches the
// thread; stop() stops recording, drains what the probes already wrote, writes the session's meta (dropped
// events per thread, events written, how the session stopped) and closes the file. A Writer error (disk full,
// file removed) stops recording with one warning on stderr and keeps what was written.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include "instrument/clock.h"
#include "instrument/registry.h"
#include "traces/writer.h"

namespace gb::trace::detail {

class Collector {
 public:
  explicit Collector(std::unique_ptr<Writer> writer);
  ~Collector();
  void start();
  // Stops recording and finishes the file; stopped_by goes to meta (e.g. "session end", "signal SIGINT").
  void stop(const std::string& stopped_by);
  // Called from a signal handler: the collector thread stops the session and re-raises the signal.
  void request_signal_stop(int sig) noexcept { signal_.store(sig, std::memory_order_relaxed); }
  std::uint64_t events_written() const { return events_written_; }
  bool failed() const { return failed_; }
  const TickClock& clock() const { return clock_; }  // the trace's clock: ns(ticks) since the session started

 private:
  void run();
  std::size_t drain_all();
  std::size_t drain(ThreadEntry& t);
  void write_span(const ThreadBuffer& b, const Event& e);
  std::size_t drain_ring(ThreadEntry& t, Ring& r);
  void write_record(const ThreadBuffer& b, const Ring& r, std::uint64_t at);
  std::size_t write_cold();
  void write_new_registry_rows();  // strings, modules, params, threads added since the last call
  void finish(const std::string& stopped_by);
  void fail(const std::exception& e);
  Id name_id(const SourceLocation* loc);

  std::unique_ptr<Writer> writer_;
  TickClock clock_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> signal_{0};
  bool finished_ = false;
  bool failed_ = false;
  std::unordered_map<const SourceLocation*, Id> names_;
  const SourceLocation* last_loc_ = nullptr;
  Id last_name_ = 0;
  std::unordered_map<const ThreadEntry*, std::uint64_t> dropped_at_start_;
  std::size_t strings_written_ = 0, modules_written_ = 0, params_written_ = 0;
  std::uint64_t threads_version_ = ~0ull;
  std::uint64_t events_written_ = 0;
  Id next_instant_ = 1, next_memory_ = 1, next_anomaly_ = 1, next_oom_ = 1;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> step_spans_;  // step -> (start, end) ns
  std::int64_t last_step_end_ = 0;  // ns: where a steps row without a span starts
};

}  // namespace gb::trace::detail
