// instrument/registry.h — internal: the process-wide state the probes and the collector share.
//
// Threads (one ThreadBuffer each, kept after the thread exits until the collector has drained it), the string
// interner, run-time SourceLocations, the modules and params known so far, and the cold queue for records that
// do not fit a ring (they carry strings). One mutex guards everything here except the rings themselves. The
// registry is never destroyed: threads may still trace while the process runs its static destructors.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "instrument/probe.h"

namespace gb::trace::detail {

struct ThreadEntry {
  ThreadEntry() = default;
  ~ThreadEntry();  // frees the chain of rings
  ThreadEntry(const ThreadEntry&) = delete;
  ThreadEntry& operator=(const ThreadEntry&) = delete;

  ThreadBuffer buf;
  Ring* oldest = nullptr;  // the collector's ring: the oldest not yet drained (buf.ring is the newest)
  std::string name;
  ThreadRole role = ThreadRole::other;
  std::atomic<bool> retired{false};  // the thread has exited; its rings are drained then freed
};

// The session's ring size rounded up to a power of two (at least 64 events).
std::uint64_t base_ring_events() noexcept;

// A meta row set while recording (set_meta).
struct MetaRow {
  std::string key, value;
};

// Where the flight recorder is to be written, when the emitting thread's ring had no room for the trigger event.
struct TriggerRow {
  DetailReason reason = DetailReason::anomaly;
  std::int64_t step = 0;
};

// A record that takes the mutex instead of a ring, with the context the probe saw. GPU activity (gpu_activity.cpp)
// queues finished rows: spans with their ids and trace-clock times, their kernels and op_details rows.
struct ColdItem {
  std::variant<AnomalyRecord, OomReportRecord, KernelRecord, MetaRow, SpanRecord, OpDetailsRecord, CollectiveRecord,
               StepRecord, StepMemoryRecord, TriggerRow>
      record;
  std::int64_t t = 0;  // ticks at emit
  Id thread_id = 0;
  std::uint32_t span_n = 0;
  std::int32_t step = -1, module = -1;
};

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadEntry>> threads;
  std::vector<ThreadRecord> tracks;  // rows of the threads table with no ring: a CUDA stream, a thread's CUDA API
  Id next_thread_id = 0;
  std::atomic<std::uint64_t> threads_version{0};  // bumped when a thread registers or is renamed

  std::unordered_map<std::string, Id> string_ids;
  std::vector<std::string> strings;  // strings[id - 1]
  std::atomic<std::size_t> strings_count{0};  // strings.size(), readable without the mutex
  std::unordered_map<std::string, std::unique_ptr<SourceLocation>> locations;  // key: kind + '\0' + name
  std::vector<std::unique_ptr<std::string>> location_names;

  std::vector<ModuleRecord> modules;
  std::vector<ParamRecord> params;
  std::vector<ColdItem> cold;

  // Settings of the session that is on, read when a thread registers or finds its ring full.
  std::atomic<std::uint32_t> ring_events{1u << 16};
  std::atomic<std::uint64_t> ring_max_events{1u << 22};
  std::atomic<int> on_full{static_cast<int>(OnFull::drop)};
  // The flight recorder's triggers this session (runtime.cpp push_trigger): the anomaly kinds that have written
  // it, and how many error-severity anomalies have. Reset when a session starts.
  std::atomic<std::uint32_t> triggered_kinds{0};
  std::atomic<int> error_triggers{0};

  Id intern_locked(std::string_view text);
};

Registry& registry();

}  // namespace gb::trace::detail
