// instrument/gpu_activity.cpp — GPU activity into trace rows (contract in gpu_activity.h).
#include "instrument/gpu_activity.h"

#include <algorithm>
#include <tuple>

#include "instrument/registry.h"

namespace gb::trace {
namespace {

using detail::ColdItem;
using detail::Registry;
using detail::registry;

SpanKind span_kind(GpuActivityKind k) {
  switch (k) {
    case GpuActivityKind::kernel: return SpanKind::cuda_kernel;
    case GpuActivityKind::memcpy: return SpanKind::cuda_memcpy;
    case GpuActivityKind::memset: return SpanKind::cuda_memset;
    case GpuActivityKind::api:
    case GpuActivityKind::sync: return SpanKind::cuda_api;
  }
  return SpanKind::cuda_api;
}

bool on_host(GpuActivityKind k) { return k == GpuActivityKind::api || k == GpuActivityKind::sync; }

std::string xyz(const std::array<std::int64_t, 3>& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

ColdItem item(auto record) {
  ColdItem c{};
  c.record = std::move(record);
  return c;
}

// Remembers key -> value up to GpuActivityWriter::kMaxKept entries, forgetting the oldest first.
template <class V>
void keep(std::unordered_map<std::int64_t, V>& map, std::deque<std::int64_t>& order, std::int64_t key, V value) {
  if (map.insert_or_assign(key, std::move(value)).second) order.push_back(key);
  while (map.size() > GpuActivityWriter::kMaxKept && !order.empty()) {
    map.erase(order.front());
    order.pop_front();
  }
  if (order.size() > 2 * GpuActivityWriter::kMaxKept) {  // keys erased on use leave stale entries: compact
    std::erase_if(order, [&](std::int64_t k) { return !map.contains(k); });
  }
}

// Hands finished rows to the session's collector (dropped when no session records).
void queue(std::vector<ColdItem> rows) {
  if (rows.empty() || !detail::g_recording.load(std::memory_order_relaxed)) return;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.cold.insert(r.cold.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
}

// Tracks outlive sessions (like threads): one per (a, b) for the process.
std::map<std::pair<std::int64_t, std::int64_t>, Id>& process_tracks() {  // guarded by the registry's mutex
  static auto* tracks = new std::map<std::pair<std::int64_t, std::int64_t>, Id>;
  return *tracks;
}

}  // namespace

Id GpuActivityWriter::track(const std::string& name, ThreadRole role, std::int64_t a, std::int64_t b) {
  if (auto it = tracks_.find({a, b}); it != tracks_.end()) return it->second;
  Registry& r = registry();
  Id id = 0;
  {
    std::lock_guard lock(r.mu);
    auto& known = process_tracks();
    if (auto it = known.find({a, b}); it != known.end()) {
      id = it->second;
    } else {
      id = r.next_thread_id++;
      r.tracks.push_back(ThreadRecord{id, a < 0 ? b : 0, name, role, std::nullopt});
      known.emplace(std::make_pair(a, b), id);
    }
  }
  r.threads_version.fetch_add(1, std::memory_order_release);
  tracks_.emplace(std::make_pair(a, b), id);
  return id;
}

Id GpuActivityWriter::name_id(const std::string& name) {
  if (auto it = names_.find(name); it != names_.end()) return it->second;
  return names_.emplace(name, intern(name)).first->second;
}

Id GpuActivityWriter::api_track(std::int64_t host_tid) {
  if (auto it = tracks_.find({-1, host_tid}); it != tracks_.end()) return it->second;
  std::string thread = "thread " + std::to_string(host_tid);
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    for (auto& t : r.threads)
      if (t->buf.os_tid == host_tid) thread = t->name;
  }
  return track("CUDA API: " + thread, ThreadRole::other, -1, host_tid);
}

void GpuActivityWriter::correlate(std::int64_t correlation, Id span) {
  if (auto it = waiting_.find(correlation); it != waiting_.end()) {
    KernelRecord k = std::move(it->second);
    waiting_.erase(it);
    k.launch_span_id = span;
    std::vector<ColdItem> row;
    row.push_back(item(std::move(k)));
    queue(std::move(row));
    return;
  }
  keep(launched_by_, launched_order_, correlation, span);
}

void GpuActivityWriter::write(std::vector<GpuActivity> batch) {
  for (const GpuActivity& a : batch)
    if (a.kind == GpuActivityKind::api) keep(api_tid_, api_order_, a.correlation, a.host_tid);
  for (GpuActivity& a : batch)  // a sync record names no thread: its API call (same correlation) does
    if (a.kind == GpuActivityKind::sync) {
      auto caller = api_tid_.find(a.correlation);
      a.host_tid = caller != api_tid_.end() ? caller->second : 0;
    }
  // A track's spans in start order, so ids follow it.
  auto key = [](const GpuActivity& a) {
    return on_host(a.kind) ? std::tuple(1, std::int64_t(-1), a.host_tid, a.start_ns)
                           : std::tuple(0, std::int64_t(a.device), a.stream, a.start_ns);
  };
  std::stable_sort(batch.begin(), batch.end(),
                   [&](const GpuActivity& x, const GpuActivity& y) { return key(x) < key(y); });
  std::vector<ColdItem> rows;
  rows.reserve(batch.size() + batch.size() / 2);
  std::vector<KernelRecord> unlinked;
  for (GpuActivity& a : batch) {
    Id t = 0;
    if (on_host(a.kind)) {
      t = a.host_tid ? api_track(a.host_tid) : track("CUDA API: thread unknown", ThreadRole::other, -1, 0);
    } else {
      t = track("cuda:" + std::to_string(a.device) + " stream " + std::to_string(a.stream), ThreadRole::cuda_stream,
                a.device, a.stream);
    }
    const Id id = span_id(t, ++next_n_[t]);
    SpanRecord s{.id = id,
                 .kind = span_kind(a.kind),
                 .name_id = name_id(a.name),
                 .thread_id = t,
                 .start_ns = a.start_ns,
                 .end_ns = std::max(a.end_ns, a.start_ns),
                 .step = std::nullopt,
                 .parent_id = std::nullopt,
                 .seq = on_host(a.kind) ? OptId(a.correlation) : std::nullopt,
                 .module_id = std::nullopt};
    rows.push_back(item(s));
    if (a.kind == GpuActivityKind::kernel) {
      ++kernels_;
      KernelRecord k{id, a.device, a.stream, a.correlation, std::nullopt, xyz(a.grid), xyz(a.block), a.registers,
                     a.shared_mem};
      if (auto it = launched_by_.find(a.correlation); it != launched_by_.end()) {
        k.launch_span_id = it->second;
        launched_by_.erase(it);
        rows.push_back(item(std::move(k)));
      } else {
        unlinked.push_back(std::move(k));
      }
    } else if (a.kind == GpuActivityKind::memcpy || a.kind == GpuActivityKind::memset) {
      OpDetailsRecord d;
      d.span_id = id;
      d.device = a.device;
      d.bytes = a.bytes;
      rows.push_back(item(d));
    }
  }
  // A kernel whose correlation has not arrived yet waits for it; the oldest waiting are written unlinked.
  for (KernelRecord& k : unlinked) {
    const std::int64_t c = k.correlation_id;
    if (waiting_.size() >= kMaxKept) {
      while (!waiting_order_.empty() && !waiting_.contains(waiting_order_.front())) waiting_order_.pop_front();
      if (!waiting_order_.empty()) {
        auto old = waiting_.extract(waiting_order_.front());
        waiting_order_.pop_front();
        ++unlinked_;
        rows.push_back(item(std::move(old.mapped())));
      }
    }
    waiting_order_.push_back(c);
    waiting_.insert_or_assign(c, std::move(k));
  }
  queue(std::move(rows));
}

void GpuActivityWriter::finish() {
  std::vector<ColdItem> rows;
  for (std::int64_t c : waiting_order_)
    if (auto it = waiting_.find(c); it != waiting_.end()) {
      ++unlinked_;
      rows.push_back(item(std::move(it->second)));
      waiting_.erase(it);
    }
  waiting_.clear();
  waiting_order_.clear();
  queue(std::move(rows));
}

}  // namespace gb::trace
