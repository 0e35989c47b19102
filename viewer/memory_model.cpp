// viewer/memory_model.cpp — MemoryModel (contract in memory_model.h): memory_events loaded once into a compact copy
// with the per-category totals after each event, the three layers per column, the segment map at a moment, and the
// largest live blocks (from the copy, or by SQL: the reference). Every replay is MemoryReplay.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "viewer/memory_model.h"
#include "viewer/trace_model.h"

namespace gb::viewer {

using namespace gb::trace;

namespace {
struct MemoryLoadStopped {};  // thrown out of read_events when the model closes
}  // namespace

void MemoryModel::open(const gb::query::TraceDb& db) { ooms_ = db.reader().all<OomReportRecord>(); }

void MemoryModel::load(const gb::query::TraceDb* db, const std::atomic<bool>& stop) {
  try {
    if (db) read_events(*db, stop);
  } catch (...) {  // stopped, or the file changed under us: the panel shows what there is
  }
  ready_.store(true, std::memory_order_release);
}

void MemoryModel::read_events(const gb::query::TraceDb& db, const std::atomic<bool>& stop) {
  bool any = false;
  db.each("SELECT device, count(*) AS n FROM memory_events GROUP BY device ORDER BY device < 0, n DESC LIMIT 1",
            [&](const gb::query::Row& row) { device_ = static_cast<int>(row.i64(0)), any = true; });
  if (!any) return;
  if (device_ >= 0) context_ = db.meta_int("context_bytes").value_or(0);
  gb::query::MemoryReplay<> replay;
  db.each("SELECT t_ns, action, addr, size, category, allocated, reserved, segment_id, span_id, module_id "
          "FROM memory_events WHERE device = ?1 ORDER BY t_ns, id",
            {device_}, [&](const gb::query::Row& row) {
              if (stop) throw MemoryLoadStopped{};
              const MemAction action = gb::query::mem_action(row.i64(1));
              const MemCategory category = gb::query::mem_category(row.i64(4));
              replay.apply(action, row.i64(2), row.i64(3), category);
              events_.push_back(Event{row.i64(2), row.i64(3), row.is_null(7) ? -1 : row.i64(7), row.opt_i64(8),
                                         row.opt_i64(9), static_cast<std::uint8_t>(row.i64(1) & 255),
                                         static_cast<std::uint8_t>(category)});
              t_.push_back(row.i64(0));
              allocated_.push_back(row.i64(5));
              reserved_.push_back(row.i64(6));
              by_category_.push_back(replay.by_category());
              peak_reserved_ = std::max(peak_reserved_, row.i64(6));
            });
}

MemoryColumn MemoryModel::at(std::int64_t t) const {
  MemoryColumn c{.t_ns = t, .context = context_};
  auto it = std::upper_bound(t_.begin(), t_.end(), t);
  if (it == t_.begin()) return c;
  const auto i = static_cast<std::size_t>(it - t_.begin() - 1);
  c.reserved = reserved_[i];
  c.allocated = allocated_[i];
  c.by_category = by_category_[i];
  return c;
}

std::vector<MemoryColumn> MemoryModel::compute_columns(std::int64_t t0, std::int64_t t1, int columns) const {
  std::vector<MemoryColumn> out;
  if (columns <= 0 || t1 <= t0) return out;
  out.reserve(static_cast<std::size_t>(columns));
  const double width = static_cast<double>(t1 - t0) / columns;
  auto lo = std::lower_bound(t_.begin(), t_.end(), t0);
  for (int i = 0; i < columns; ++i) {
    const auto a = t0 + static_cast<std::int64_t>(width * i), b = t0 + static_cast<std::int64_t>(width * (i + 1));
    auto hi = std::lower_bound(lo, t_.end(), b);
    MemoryColumn c = at(a);
    if (hi != lo) {  // the peak of the column
      auto best = static_cast<std::size_t>(lo - t_.begin());
      for (auto j = best; j < static_cast<std::size_t>(hi - t_.begin()); ++j)
        if (allocated_[j] > allocated_[best]) best = j;
      c.reserved = reserved_[best];
      c.allocated = allocated_[best];
      c.by_category = by_category_[best];
    }
    c.t_ns = a;
    out.push_back(c);
    lo = hi;
  }
  return out;
}

SegmentMap MemoryModel::replay_segments(std::int64_t t) const {
  SegmentMap map;
  map.t_ns = t;
  std::map<Id, SegmentRow> segs;
  gb::query::MemoryReplay<> replay;
  const auto n = has_data() ? static_cast<std::size_t>(std::upper_bound(t_.begin(), t_.end(), t) - t_.begin()) : 0;
  std::map<std::int64_t, std::pair<std::int64_t, Id>> seg_by_addr;  // addr -> (size, id)
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = events_[i];
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

std::vector<LiveBlock> MemoryModel::top_live(const LiveReplay& replay, std::size_t n,
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
    LiveBlock lb{v[i].first, b.size, b.extra.t, b.category, {}, model_.module_path(b.extra.module)};
    if (b.extra.span)
      lb.op = std::string(model_.string(db.scalar("SELECT name_id FROM spans WHERE id = ?1", {*b.extra.span})));
    out.push_back(std::move(lb));
  }
  return out;
}

std::vector<LiveBlock> MemoryModel::replay_live(std::int64_t t, std::size_t n, const gb::query::TraceDb& db) const {
  LiveReplay replay;  // over the events loaded at open: no SQL but the op names
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (t_[i] > t) continue;  // the SQL's filter (t_ns <= t, in id order), not a prefix
    const Event& e = events_[i];
    replay.apply(static_cast<MemAction>(e.action), e.addr, e.size, static_cast<MemCategory>(e.category),
                 LiveEntry{t_[i], e.span, e.module});
  }
  return top_live(replay, n, db);
}

std::vector<LiveBlock> MemoryModel::largest_live_sql(const gb::query::TraceDb& db, std::int64_t t,
                                                     std::size_t n) const {
  LiveReplay replay;
  db.each("SELECT action, addr, size, category, span_id, module_id, t_ns FROM memory_events "
            "WHERE device = ?1 AND t_ns <= ?2 ORDER BY t_ns, id",
            {device_, t}, [&](const gb::query::Row& row) {
              replay.apply(gb::query::mem_action(row.i64(0)), row.i64(1), row.i64(2),
                           gb::query::mem_category(row.i64(3)), LiveEntry{row.i64(6), row.opt_i64(4), row.opt_i64(5)});
            });
  return top_live(replay, n, db);
}

const std::vector<MemoryColumn>* MemoryModel::columns(std::int64_t t0, std::int64_t t1, int columns) {
  if (loading()) return nullptr;
  return columns_.get(Key{t0, t1, columns}, compute_,
                      [this, t0, t1, columns](const gb::query::TraceDb*) { return compute_columns(t0, t1, columns); });
}

const SegmentMap* MemoryModel::segments(std::int64_t t) {
  if (loading()) return nullptr;
  return segments_.get(Key{t, 0, 0}, compute_, [this, t](const gb::query::TraceDb*) { return replay_segments(t); });
}

const std::vector<LiveBlock>* MemoryModel::largest_live(std::int64_t t, std::size_t n) {
  if (loading()) return nullptr;
  return live_.get(Key{t, static_cast<std::int64_t>(n), 0}, queries_, [this, t, n](const gb::query::TraceDb* db) {
    return db ? replay_live(t, n, *db) : std::vector<LiveBlock>{};
  });
}

}  // namespace gb::viewer
