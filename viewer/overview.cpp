// viewer/overview.cpp — the level-of-detail overview (contract in overview.h).
//
// One pass per thread in id order keeps, per level, at most one open run: after a span whose duration has
// floor(log2) = L, levels <= L just got the span as an item and levels > L hold an open run. So a row touches only
// the levels whose state changes (runs closed or opened), plus the open runs whose end it extends; counts of open
// runs are filled in from row numbers when the run closes or a batch is published.
#include "viewer/overview.h"

#include <algorithm>
#include <bit>

#include "traces/query/trace_db.h"
#include "viewer/timeline_model.h"

namespace gb::viewer {

using gb::trace::Id;

namespace {
struct Stopped {};
constexpr std::int64_t kBatch = 4096;  // rows between two publications (the lock is released in between)
constexpr double kAssumedPixels = 2000;  // the widest view a fold threshold is computed for
}  // namespace

Overview::~Overview() { stop(); }

void Overview::start(const std::string& path, std::vector<ThreadRange> threads, std::int64_t direct_rows,
                     bool background) {
  stop();
  done_ = false;
  stop_ = false;
  rows_read_ = 0;
  rows_total_ = 0;
  for (const ThreadRange& r : threads) rows_total_ += r.last_id - r.first_id + 1;
  if (background) worker_ = std::thread([this, path, threads, direct_rows] { build(path, threads, direct_rows); });
  else build(path, std::move(threads), direct_rows);
}

void Overview::stop() {
  stop_ = true;
  if (worker_.joinable()) worker_.join();
}

void Overview::wait() {
  if (worker_.joinable()) worker_.join();
}

double Overview::progress() const {
  return rows_total_ > 0 ? std::min(1.0, static_cast<double>(rows_read_.load()) / static_cast<double>(rows_total_)) : 1.0;
}

std::string Overview::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void Overview::build(std::string path, std::vector<ThreadRange> threads, std::int64_t direct_rows) {
  try {
    gb::query::TraceDb db(path);
    for (const ThreadRange& r : threads) {
      const std::int64_t rows = r.last_id - r.first_id + 1, span = std::max<std::int64_t>(1, r.end_ns - r.begin_ns);
      Thread t;
      t.rows_total = rows;
      if (rows > direct_rows) {  // else direct queries are always cheap enough: the pass only sums the op table
        t.k_max = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(span)));  // 2^k_max > span
        const double fold = static_cast<double>(direct_rows) * static_cast<double>(span) * 3.0 /
                            (2.0 * kAssumedPixels * static_cast<double>(rows));
        t.k_min = std::clamp(fold >= 1 ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(fold))) - 1 : 0,
                             0, t.k_max);
        t.levels.resize(static_cast<std::size_t>(t.k_max - t.k_min + 1));
      }
      {
        std::lock_guard lock(mu_);
        threads_[r.thread_id] = std::move(t);
      }
      build_thread(db, r, threads_.at(r.thread_id));
      if (stop_) break;
    }
  } catch (const Stopped&) {
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    error_ = e.what();
  }
  done_.store(true, std::memory_order_release);
}

void Overview::build_thread(const gb::query::TraceDb& db, const ThreadRange& r, Thread& t) {
  struct Raw {
    std::int64_t id, start, dur, parent, name, seq, step, module;  // parent 0, seq/step/module -1: NULL
    int kind;
  };
  struct Open {
    Id id;
    std::int64_t dur, child_ns;
    int kind;
    Id name;
  };
  const int K = static_cast<int>(t.levels.size());
  std::vector<Open> stack;  // the open ancestors of the current row
  std::vector<std::int64_t> run_start(static_cast<std::size_t>(K), -1);  // row where the level's open run began
  std::vector<std::vector<std::int32_t>> last_at_depth(static_cast<std::size_t>(K));  // index of the last item
  int lowest_open = K;  // levels [lowest_open, K) hold an open run
  std::int64_t row = 0;
  auto close = [&](const Open& o) {
    OpAgg& a = ops_[{o.kind, o.name}];
    ++a.calls;
    a.total_ns += o.dur;
    a.self_ns += o.dur - o.child_ns;
  };
  auto process = [&](const Raw& x) {
    const std::int64_t end = x.start + x.dur;
    while (!stack.empty() && stack.back().id != x.parent) close(stack.back()), stack.pop_back();
    if (!stack.empty()) stack.back().child_ns += x.dur;
    const auto depth = static_cast<std::int16_t>(std::min<std::size_t>(stack.size(), 32767));
    stack.push_back({x.id, x.dur, 0, x.kind, x.name});
    if (K == 0) return;
    // Levels [0, long_upto] see a long span; (long_upto, K) a short one.
    const int log2 = x.dur > 0 ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(x.dur))) - 1 : -1;
    const int long_upto = std::min(K - 1, log2 - t.k_min);
    Item item{x.start, end, 1, end, x.id, x.name, x.seq, x.step, x.module, -1, depth, static_cast<std::uint8_t>(x.kind)};
    auto with_parent = [&](std::size_t level) -> const Item& {
      const auto& lad = last_at_depth[level];
      item.parent = depth > 0 && static_cast<std::size_t>(depth) <= lad.size() ? lad[static_cast<std::size_t>(depth - 1)] : -1;
      return item;
    };
    for (int i = lowest_open; i <= long_upto; ++i) {  // the span closes these levels' runs
      t.levels[static_cast<std::size_t>(i)].back().count = row - run_start[static_cast<std::size_t>(i)];
      run_start[static_cast<std::size_t>(i)] = -1;
    }
    for (int i = 0; i <= long_upto; ++i) {
      auto& level = t.levels[static_cast<std::size_t>(i)];
      if (level.size() >= kMaxItems) continue;
      level.push_back(with_parent(static_cast<std::size_t>(i)));
      auto& lad = last_at_depth[static_cast<std::size_t>(i)];
      if (lad.size() <= static_cast<std::size_t>(depth)) lad.resize(static_cast<std::size_t>(depth) + 1, -1);
      lad[static_cast<std::size_t>(depth)] = static_cast<std::int32_t>(level.size() - 1);
    }
    const int first_short = std::max(0, long_upto + 1);
    for (int i = std::max(first_short, lowest_open); i < K; ++i) {  // open runs grow (ends nest upward)
      Item& b = t.levels[static_cast<std::size_t>(i)].back();
      if (b.end_ns >= end) break;
      b.end_ns = end;
    }
    for (int i = first_short; i < std::min(lowest_open, K); ++i) {  // new runs
      t.levels[static_cast<std::size_t>(i)].push_back(with_parent(static_cast<std::size_t>(i)));
      run_start[static_cast<std::size_t>(i)] = row;
    }
    lowest_open = first_short;
  };
  // Rows are read without the lock and processed under it, a batch at a time, so the UI thread waits for at most
  // one batch's processing (~0.1 ms), never for SQLite.
  std::vector<Raw> batch;
  batch.reserve(kBatch);
  auto flush = [&] {
    std::lock_guard lock(mu_);
    for (const Raw& x : batch) process(x), ++row;
    for (int i = lowest_open; i < K; ++i) t.levels[static_cast<std::size_t>(i)].back().count = row - run_start[static_cast<std::size_t>(i)];
    if (!batch.empty()) t.covered_ns = batch.back().start;
    rows_read_ += static_cast<std::int64_t>(batch.size());
    batch.clear();
  };
  auto opt = [](const gb::query::Row& x, int c) { return x.is_null(c) ? std::int64_t{-1} : x.i64(c); };
  db.each("SELECT id, start_ns, dur_ns, parent_delta, kind, name_id, step, seq, module_id FROM spans "
          "WHERE id >= ?1 AND id <= ?2 ORDER BY id",
          {r.first_id, r.last_id}, [&](const gb::query::Row& x) {
            const Id id = x.i64(0);
            batch.push_back(Raw{id, x.i64(1), std::max<std::int64_t>(0, x.i64(2)), x.is_null(3) ? 0 : id - x.i64(3),
                                x.i64(5), opt(x, 7), opt(x, 6), opt(x, 8), static_cast<int>(x.i64(4))});
            if (static_cast<std::int64_t>(batch.size()) == kBatch) {
              flush();
              if (stop_) throw Stopped{};
            }
          });
  flush();
  std::lock_guard lock(mu_);
  while (!stack.empty()) close(stack.back()), stack.pop_back();
  t.covered_ns = std::numeric_limits<std::int64_t>::max();
  t.done = true;
  // A level that hit kMaxItems is incomplete: drop it and every finer one.
  for (int i = K - 1; i >= 0; --i)
    if (t.levels[static_cast<std::size_t>(i)].size() >= kMaxItems) {
      t.levels.erase(t.levels.begin(), t.levels.begin() + i + 1);
      t.k_min += i + 1;
      break;
    }
}

std::optional<std::pair<int, int>> Overview::levels(Id thread) const {
  std::lock_guard lock(mu_);
  auto it = threads_.find(thread);
  if (it == threads_.end() || it->second.levels.empty()) return std::nullopt;
  return std::pair{it->second.k_min, it->second.k_max};
}

std::int64_t Overview::covered_ns(Id thread) const {
  std::lock_guard lock(mu_);
  auto it = threads_.find(thread);
  return it == threads_.end() ? std::numeric_limits<std::int64_t>::min() : it->second.covered_ns;
}

bool Overview::thread_done(Id thread) const {
  std::lock_guard lock(mu_);
  auto it = threads_.find(thread);
  return it != threads_.end() && it->second.done;
}

std::size_t Overview::items() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [id, t] : threads_)
    for (const auto& l : t.levels) n += l.size();
  return n;
}

int Overview::query(Id thread, int k, std::int64_t t0, std::int64_t t1, std::vector<TimelineItem>& out) const {
  std::lock_guard lock(mu_);
  auto it = threads_.find(thread);
  if (it == threads_.end() || it->second.levels.empty()) return -1;
  const Thread& t = it->second;
  const int i = std::clamp(k - t.k_min, 0, static_cast<int>(t.levels.size()) - 1);
  const std::vector<Item>& v = t.levels[static_cast<std::size_t>(i)];
  auto convert = [&](const Item& x) {
    TimelineItem ti;
    ti.start_ns = x.start_ns;
    ti.end_ns = x.end_ns;
    ti.count = x.count;
    ti.depth = x.depth;
    ti.span = gb::trace::SpanRecord{.id = x.id,
                                    .kind = static_cast<gb::trace::SpanKind>(x.kind),
                                    .name_id = x.name_id,
                                    .thread_id = thread,
                                    .start_ns = x.start_ns,
                                    .end_ns = x.first_end_ns,
                                    .step = x.step < 0 ? gb::trace::OptId{} : gb::trace::OptId{x.step},
                                    .parent_id = {},
                                    .seq = x.seq < 0 ? gb::trace::OptId{} : gb::trace::OptId{x.seq},
                                    .module_id = x.module < 0 ? gb::trace::OptId{} : gb::trace::OptId{x.module}};
    return ti;
  };
  const auto first = std::lower_bound(v.begin(), v.end(), t0, [](const Item& a, std::int64_t t) { return a.start_ns < t; });
  // Items that began before t0 and are still open enclose the last item that began before it.
  const std::size_t mark = out.size();
  for (auto j = static_cast<std::int64_t>(first - v.begin()) - 1; j >= 0; j = v[static_cast<std::size_t>(j)].parent)
    if (v[static_cast<std::size_t>(j)].end_ns >= t0) out.push_back(convert(v[static_cast<std::size_t>(j)]));
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end());
  for (auto j = first; j != v.end() && j->start_ns <= t1; ++j) out.push_back(convert(*j));
  return t.k_min + i;
}

}  // namespace gb::viewer
