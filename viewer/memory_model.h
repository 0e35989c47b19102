// viewer/memory_model.h — the memory domain of TraceModel: the memory events of one device (the one with the most
// events, cuda first), loaded once into a compact copy, and what the Memory panel asks of it: the three layers per
// column, the allocator's segments at a moment, the largest live blocks, the OOM reports. No ImGui.
//
// Contract:
//   - open(db) reads the OOM reports (with the model's small tables); load(db, stop) is the model's loader thread:
//     it copies the events with the per-category running totals after each, then loading() turns false (also when
//     the read fails or stop is set: the panel then shows what it has). Until then every answer is empty.
//   - at(t) is the state after the last event at or before t: a binary search over the copy, no SQL.
//   - columns(t0, t1, n), segments(t) and largest_live(t, n) answer at once (async_cache.h's AsyncSlot): the last
//     finished answer, for another key while the one asked last is computed (pending() true), nullptr before the
//     first or while loading. Columns and segments are computed on the compute worker (no SQL), the largest live
//     blocks on the query worker (a span-name lookup per block shown).
//   - The computations, any thread once loaded: compute_columns samples the layers at n points of a window: per
//     column the state after the event with the largest `allocated` in the column (so peaks survive any zoom),
//     else the state carried from before; sum(by_category) == allocated and reserved_unallocated == reserved -
//     allocated at every column. replay_segments replays the events up to t: segments from segment_alloc/free,
//     blocks placed by segment_id (or by address), by offset. replay_live: the largest blocks live at t, largest
//     first (ties by address), from the copy; largest_live_sql is the same answer read by SQL (the reference).
//     Every replay is traces/query/memory_replay.h's MemoryReplay.
//
//   if (const auto* cols = m.memory().columns(t0, t1, px / 2)) for (const MemoryColumn& c : *cols) draw(c);
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "traces/query/memory_replay.h"
#include "traces/query/trace_db.h"
#include "traces/records.h"
#include "viewer/async_cache.h"
#include "viewer/worker.h"

namespace gb::viewer {

class TraceModel;

// The three layers at one moment: context · reserved but unallocated · allocated (split by category).
struct MemoryColumn {
  std::int64_t t_ns = 0;
  std::int64_t context = 0, reserved = 0, allocated = 0;
  gb::query::CategoryBytes by_category{};  // MemCategory order
  std::int64_t reserved_unallocated() const { return reserved - allocated; }
};

struct LiveBlock {
  std::int64_t addr = 0, size = 0, t_alloc_ns = 0;
  gb::trace::MemCategory category = gb::trace::MemCategory::unknown;
  std::string op, module;  // the span's name and the module path that allocated it ("" when unknown)
};

// The allocator's segments at one moment, each with its live blocks (offset from the segment's start) and the
// free gaps between them: fragmentation at a glance.
struct SegmentBlock {
  std::int64_t offset = 0, size = 0;
  gb::trace::MemCategory category = gb::trace::MemCategory::unknown;
};
struct SegmentRow {
  gb::trace::Id id = 0;
  std::int64_t addr = 0, size = 0, allocated = 0, largest_free = 0;
  std::vector<SegmentBlock> blocks;  // by offset
};
struct SegmentMap {
  std::int64_t t_ns = 0;
  std::vector<SegmentRow> segments;  // by segment id
  std::int64_t unplaced = 0;         // live blocks whose segment is unknown (no segment_id, or outside it)
};

class MemoryModel {
 public:
  MemoryModel(const TraceModel& model, Worker& compute, Worker& queries)
      : model_(model), compute_(compute), queries_(queries) {}
  void open(const gb::query::TraceDb& db);
  void load(const gb::query::TraceDb* db, const std::atomic<bool>& stop);  // db nullptr: nothing to load

  bool loading() const { return !ready_.load(std::memory_order_acquire); }
  bool has_data() const { return !loading() && !t_.empty(); }
  int device() const { return loading() ? 0 : device_; }
  std::int64_t context_bytes() const { return loading() ? 0 : context_; }
  std::size_t events() const { return loading() ? 0 : t_.size(); }
  std::int64_t peak_reserved() const { return loading() ? 0 : peak_reserved_; }
  const std::vector<gb::trace::OomReportRecord>& oom_reports() const { return ooms_; }
  MemoryColumn at(std::int64_t t) const;

  const std::vector<MemoryColumn>* columns(std::int64_t t0, std::int64_t t1, int columns);
  const SegmentMap* segments(std::int64_t t);
  const std::vector<LiveBlock>* largest_live(std::int64_t t, std::size_t n);
  bool pending() const { return columns_.pending() || segments_.pending() || live_.pending(); }

  std::vector<MemoryColumn> compute_columns(std::int64_t t0, std::int64_t t1, int columns) const;
  SegmentMap replay_segments(std::int64_t t) const;
  std::vector<LiveBlock> replay_live(std::int64_t t, std::size_t n, const gb::query::TraceDb& db) const;
  std::vector<LiveBlock> largest_live_sql(const gb::query::TraceDb& db, std::int64_t t, std::size_t n) const;

 private:
  using Key = std::array<std::int64_t, 3>;
  struct LiveEntry {  // what a replay keeps of a live block beyond its size and category
    std::int64_t t = 0;
    gb::trace::OptId span, module;
  };
  using LiveReplay = gb::query::MemoryReplay<LiveEntry>;
  // The n largest live blocks of a replay, their ops named by point lookups on db.
  std::vector<LiveBlock> top_live(const LiveReplay& replay, std::size_t n, const gb::query::TraceDb& db) const;
  void read_events(const gb::query::TraceDb& db, const std::atomic<bool>& stop);

  const TraceModel& model_;  // names and module paths: read-only after open
  Worker& compute_;          // columns and segment maps (no SQL)
  Worker& queries_;          // largest live blocks (op names)
  std::atomic<bool> ready_{false};
  // The events of device_, in id order, with the per-category running totals after each.
  int device_ = 0;
  std::int64_t context_ = 0, peak_reserved_ = 0;
  std::vector<std::int64_t> t_, allocated_, reserved_;
  std::vector<gb::query::CategoryBytes> by_category_;
  struct Event {
    std::int64_t addr, size, segment;  // segment -1: NULL
    gb::trace::OptId span, module;
    std::uint8_t action, category;
  };
  std::vector<Event> events_;
  std::vector<gb::trace::OomReportRecord> ooms_;
  AsyncSlot<Key, std::vector<MemoryColumn>> columns_;
  AsyncSlot<Key, SegmentMap> segments_;
  AsyncSlot<Key, std::vector<LiveBlock>> live_;
};

}  // namespace gb::viewer
