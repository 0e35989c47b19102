// viewer/memory_replay.cpp — the memory side of TraceModel (contract in trace_model.h): memory_events loaded once
// into a compact copy with the per-category totals after each event, the three layers per column, the segment map
// at a moment, and the largest live blocks (from the copy, or by SQL while it is still loading). Every replay is
// traces/query/memory_replay.h's MemoryReplay.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "traces/query/memory_replay.h"
#include "viewer/trace_model.h"

namespace gb::viewer {

using namespace gb::trace;

namespace {
struct MemoryLoadStopped {};  // thrown out of load_memory when the model closes; TraceModel::load catches it
}  // namespace

struct TraceModel::LiveEntry {  // what the viewer keeps of a live block beyond its size and category
  std::int64_t t = 0;
  OptId span, module;
};

void TraceModel::load_memory(const gb::query::TraceDb& db) {
  bool any = false;
  db.each("SELECT device, count(*) AS n FROM memory_events GROUP BY device ORDER BY device < 0, n DESC LIMIT 1",
            [&](const gb::query::Row& row) { mem_device_ = static_cast<int>(row.i64(0)), any = true; });
  if (!any) return;
  if (mem_device_ >= 0) context_ = db.meta_int("context_bytes").value_or(0);
  gb::query::MemoryReplay<> replay;
  db.each("SELECT t_ns, action, addr, size, category, allocated, reserved, segment_id, span_id, module_id "
          "FROM memory_events WHERE device = ?1 ORDER BY id",
            {mem_device_}, [&](const gb::query::Row& row) {
              if (stop_) throw MemoryLoadStopped{};
              const MemAction action = gb::query::mem_action(row.i64(1));
              const MemCategory category = gb::query::mem_category(row.i64(4));
              replay.apply(action, row.i64(2), row.i64(3), category);
              mem_ev_.push_back(MemEvent{row.i64(2), row.i64(3), row.is_null(7) ? -1 : row.i64(7), row.opt_i64(8),
                                         row.opt_i64(9), static_cast<std::uint8_t>(row.i64(1) & 255),
                                         static_cast<std::uint8_t>(category)});
              mem_t_.push_back(row.i64(0));
              mem_alloc_.push_back(row.i64(5));
              mem_reserved_.push_back(row.i64(6));
              mem_cat_.push_back(replay.by_category());
              peak_reserved_ = std::max(peak_reserved_, row.i64(6));
            });
}

MemoryColumn TraceModel::memory_at(std::int64_t t) const {
  MemoryColumn c{.t_ns = t, .context = context_};
  auto it = std::upper_bound(mem_t_.begin(), mem_t_.end(), t);
  if (it == mem_t_.begin()) return c;
  const auto i = static_cast<std::size_t>(it - mem_t_.begin() - 1);
  c.reserved = mem_reserved_[i];
  c.allocated = mem_alloc_[i];
  c.by_category = mem_cat_[i];
  return c;
}

std::vector<MemoryColumn> TraceModel::memory_columns(std::int64_t t0, std::int64_t t1, int columns) const {
  std::vector<MemoryColumn> out;
  if (columns <= 0 || t1 <= t0) return out;
  out.reserve(static_cast<std::size_t>(columns));
  const double width = static_cast<double>(t1 - t0) / columns;
  auto lo = std::lower_bound(mem_t_.begin(), mem_t_.end(), t0);
  for (int i = 0; i < columns; ++i) {
    const auto a = t0 + static_cast<std::int64_t>(width * i), b = t0 + static_cast<std::int64_t>(width * (i + 1));
    auto hi = std::lower_bound(lo, mem_t_.end(), b);
    MemoryColumn c = memory_at(a);
    if (hi != lo) {  // the peak of the column
      auto best = static_cast<std::size_t>(lo - mem_t_.begin());
      for (auto j = best; j < static_cast<std::size_t>(hi - mem_t_.begin()); ++j)
        if (mem_alloc_[j] > mem_alloc_[best]) best = j;
      c.reserved = mem_reserved_[best];
      c.allocated = mem_alloc_[best];
      c.by_category = mem_cat_[best];
    }
    c.t_ns = a;
    out.push_back(c);
    lo = hi;
  }
  return out;
}

const SegmentMap& TraceModel::segment_map(std::int64_t t) {
  if (segment_map_ && segment_map_->t_ns == t) return *segment_map_;
  segment_map_ = replay_segments(t);
  return *segment_map_;
}

SegmentMap TraceModel::replay_segments(std::int64_t t) const {
  SegmentMap map;
  map.t_ns = t;
  std::map<Id, SegmentRow> segs;
  gb::query::MemoryReplay<> replay;
  const auto n = has_memory() ? static_cast<std::size_t>(std::upper_bound(mem_t_.begin(), mem_t_.end(), t) - mem_t_.begin()) : 0;
  std::map<std::int64_t, std::pair<std::int64_t, Id>> seg_by_addr;  // addr -> (size, id)
  for (std::size_t i = 0; i < n; ++i) {
    const MemEvent& e = mem_ev_[i];
    switch (static_cast<MemAction>(e.action)) {
      case MemAction::segment_alloc: {
        const Id id = e.segment >= 0 ? e.segment : -static_cast<Id>(i) - 1;
        SegmentRow& row = segs[id] = SegmentRow{};
        row.id = id;
        row.addr = e.addr;
        row.size = e.size;
        seg_by_addr[e.addr] = {e.size, id};
        break;
      }
      case MemAction::segment_free:
        for (auto it = segs.begin(); it != segs.end(); ++it)
          if (it->second.addr == e.addr) {
            segs.erase(it);
            break;
          }
        seg_by_addr.erase(e.addr);
        break;
      default: replay.apply(static_cast<MemAction>(e.action), e.addr, e.size, static_cast<MemCategory>(e.category));
    }
  }
  const std::map<std::int64_t, gb::query::MemoryReplay<>::Block> live(replay.live().begin(), replay.live().end());
  for (const auto& [addr, b] : live) {  // by address: blocks come out in offset order
    auto s = seg_by_addr.upper_bound(addr);
    if (s == seg_by_addr.begin() || addr + b.size > std::prev(s)->first + std::prev(s)->second.first) {
      map.unplaced += b.size;
      continue;
    }
    --s;
    SegmentRow& row = segs[s->second.second];
    row.blocks.push_back(SegmentBlock{addr - row.addr, b.size, b.category});
    row.allocated += b.size;
  }
  for (auto& [id, row] : segs) {
    std::int64_t at = 0;
    for (const SegmentBlock& b : row.blocks) row.largest_free = std::max(row.largest_free, b.offset - at), at = b.offset + b.size;
    row.largest_free = std::max(row.largest_free, row.size - at);
    map.segments.push_back(std::move(row));
  }
  return map;
}

std::vector<LiveBlock> TraceModel::top_live(const LiveReplay& replay, std::size_t n,
                                            const gb::query::TraceDb& db) const {
  const auto& live = replay.live();
  std::vector<std::pair<std::int64_t, const LiveReplay::Block*>> v;
  for (const auto& [addr, b] : live) v.emplace_back(addr, &b);
  const std::size_t k = std::min(n, v.size());
  std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end(), [](const auto& a, const auto& b) {
    return a.second->size != b.second->size ? a.second->size > b.second->size : a.first < b.first;
  });
  std::vector<LiveBlock> out;
  for (std::size_t i = 0; i < k; ++i) {
    const LiveReplay::Block& b = *v[i].second;
    LiveBlock lb{v[i].first, b.size, b.extra.t, b.category, {}, module_path(b.extra.module)};
    if (b.extra.span)
      lb.op = std::string(string(db.scalar("SELECT name_id FROM spans WHERE id = ?1", {*b.extra.span})));
    out.push_back(std::move(lb));
  }
  return out;
}

std::vector<LiveBlock> TraceModel::largest_live(std::int64_t t, std::size_t n) const {
  if (memory_loading()) return largest_live_sql(t, n);
  return replay_live(t, n, *db_);
}

std::vector<LiveBlock> TraceModel::replay_live(std::int64_t t, std::size_t n, const gb::query::TraceDb& db) const {
  LiveReplay replay;  // over the events loaded at open: no SQL but the op names
  for (std::size_t i = 0; i < mem_ev_.size(); ++i) {
    if (mem_t_[i] > t) continue;  // the SQL's filter (t_ns <= t, in id order), not a prefix
    const MemEvent& e = mem_ev_[i];
    replay.apply(static_cast<MemAction>(e.action), e.addr, e.size, static_cast<MemCategory>(e.category),
                 LiveEntry{mem_t_[i], e.span, e.module});
  }
  return top_live(replay, n, db);
}

std::vector<LiveBlock> TraceModel::largest_live_sql(std::int64_t t, std::size_t n) const {
  LiveReplay replay;
  db_->each("SELECT action, addr, size, category, span_id, module_id, t_ns FROM memory_events "
            "WHERE device = ?1 AND t_ns <= ?2 ORDER BY id",
            {mem_device_, t}, [&](const gb::query::Row& row) {
              replay.apply(gb::query::mem_action(row.i64(0)), row.i64(1), row.i64(2),
                           gb::query::mem_category(row.i64(3)), LiveEntry{row.i64(6), row.opt_i64(4), row.opt_i64(5)});
            });
  return top_live(replay, n, *db_);
}

}  // namespace gb::viewer
