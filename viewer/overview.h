// viewer/overview.h — the timeline's level-of-detail overview: per thread, the folded items at every power-of-two
// fold threshold from a fine level up to "the whole thread is one box", built by one streaming pass over the
// thread's spans (by id = start order) on a background thread, so any zoom is answered from memory. No ImGui.
//
// Contract:
//   - Level k of a thread is exactly Reader::spans(thread, kTimeMin, kTimeMax, fold_below_ns = 2^k) over the whole
//     thread: a span with duration >= 2^k is an item; a run of consecutive spans (in id order) shorter than 2^k
//     is one item with their count, from the first's start to the latest end. Runs are global, so a run crossing a
//     window's edge keeps its full count (a direct Reader query over the window would start a new run there).
//   - Levels exist for k in [k_min, k_max] of each thread: k_min is picked from the thread's span density so that
//     a window whose fold threshold is below 2^k_min holds few enough spans for a direct Reader query
//     (about `direct_rows`); k_max is the first level whose threshold exceeds the thread's duration.
//   - start() builds on a background thread with its own connection; query() answers what is built so far (the
//     items that start before covered_ns(thread)); ready() says when every thread is done. stop() (and the
//     destructor) end the build early. A SQLite error in the build stops it and is kept in error().
//   - The same pass sums the op table of every span kind (op_aggregates()), so the ops panel needs no SQL scan.
//   - Memory: about 80 bytes per item; a level stops growing past kMaxItems items (the level is then dropped and
//     k_min rises), so a pathological trace cannot exhaust memory.
//
//   Overview o;
//   o.start(path, {{thread_id, first_id, last_id, begin_ns, end_ns}}, 20'000);
//   std::vector<TimelineItem> out;
//   o.query(thread_id, /*k=*/30, t0, t1, out);
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "traces/records.h"

namespace gb::query {
class TraceDb;
}

namespace gb::viewer {

struct TimelineItem;

class Overview {
 public:
  static constexpr std::size_t kMaxItems = 4'000'000;  // per level

  struct ThreadRange {
    gb::trace::Id thread_id = 0;
    gb::trace::Id first_id = 0, last_id = 0;  // the thread's span id range, inclusive
    std::int64_t begin_ns = 0, end_ns = 0;
  };

  Overview() = default;
  ~Overview();
  Overview(const Overview&) = delete;
  Overview& operator=(const Overview&) = delete;

  // Starts the build; background = false builds before returning (tests).
  void start(const std::string& path, std::vector<ThreadRange> threads, std::int64_t direct_rows,
             bool background = true);
  void stop();
  void wait();  // until the build ends

  bool ready() const { return done_.load(std::memory_order_acquire); }
  double progress() const;  // 0..1, rows read of all threads' rows
  std::string error() const;

  // The levels of a thread: nullopt when the thread has no overview.
  std::optional<std::pair<int, int>> levels(gb::trace::Id thread) const;
  std::int64_t covered_ns(gb::trace::Id thread) const;  // items starting before this are final or growing runs
  bool thread_done(gb::trace::Id thread) const;
  // Appends the items of level k (clamped to the thread's levels) overlapping [t0, t1], outermost open items first
  // then by start, with their depth. Returns the level used, or -1 when the thread has none.
  int query(gb::trace::Id thread, int k, std::int64_t t0, std::int64_t t1, std::vector<TimelineItem>& out) const;
  std::size_t items() const;  // all levels of all threads

  // Per (kind, name_id), over every span of every thread: calls, total and self time (duration minus the direct
  // children's), PyTorch's key_averages. Valid once ready().
  struct OpAgg {
    std::int64_t calls = 0, total_ns = 0, self_ns = 0;
  };
  const std::map<std::pair<int, gb::trace::Id>, OpAgg>& op_aggregates() const { return ops_; }

 private:
  struct Item {
    std::int64_t start_ns = 0, end_ns = 0, count = 1;
    std::int64_t first_end_ns = 0;  // the end of the first span (of a run: the run ends at end_ns)
    gb::trace::Id id = 0, name_id = 0;
    std::int64_t seq = -1, step = -1, module = -1;  // -1: NULL
    std::int32_t parent = -1;                      // index of the enclosing item in the same level
    std::int16_t depth = 0;
    std::uint8_t kind = 0;
  };
  struct Thread {
    int k_min = 0, k_max = 0;
    std::vector<std::vector<Item>> levels;  // [k - k_min]
    std::int64_t covered_ns = std::numeric_limits<std::int64_t>::min();
    std::int64_t rows_total = 0;
    bool done = false;
  };

  void build(std::string path, std::vector<ThreadRange> threads, std::int64_t direct_rows);
  void build_thread(const gb::query::TraceDb& db, const ThreadRange& r, Thread& t);

  mutable std::mutex mu_;
  std::map<gb::trace::Id, Thread> threads_;
  std::map<std::pair<int, gb::trace::Id>, OpAgg> ops_;  // written by the build only
  std::string error_;
  std::thread worker_;
  std::atomic<bool> stop_{false}, done_{false};
  std::atomic<std::int64_t> rows_read_{0};
  std::int64_t rows_total_ = 0;
};

}  // namespace gb::viewer
