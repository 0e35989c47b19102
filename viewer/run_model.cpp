// viewer/run_model.cpp — RunModel (contract in run_model.h): the run summary's columns and their levels of detail.
#include "viewer/run_model.h"

#include <algorithm>
#include <atomic>
#include <map>

namespace gb::viewer {

void RunAgg::add(float v) {
  if (!std::isfinite(v)) return;
  if (n == 0) first = v;
  last = v;
  min = std::min(min, v), max = std::max(max, v);
  sum += v;
  ++n;
}

void RunAgg::add_front(float v) {
  if (!std::isfinite(v)) return;
  if (n == 0) last = v;
  first = v;
  min = std::min(min, v), max = std::max(max, v);
  sum += v;
  ++n;
}

void RunAgg::append(const RunAgg& later) {
  if (later.n == 0) return;
  if (n == 0) {
    *this = later;
    return;
  }
  last = later.last;
  min = std::min(min, later.min), max = std::max(max, later.max);
  sum += later.sum;
  n += later.n;
}

void RunAgg::prepend(const RunAgg& earlier) {
  if (earlier.n == 0) return;
  if (n == 0) {
    *this = earlier;
    return;
  }
  first = earlier.first;
  min = std::min(min, earlier.min), max = std::max(max, earlier.max);
  sum += earlier.sum;
  n += earlier.n;
}

void SeriesLod::set(std::size_t i, double v) {
  raw_[i] = static_cast<float>(v);
  built_ = std::min(built_, i);
  rebuild_all_ = true;
}

void SeriesLod::seal() {
  const std::size_t n = raw_.size();
  if (n == built_) return;
  if (!rebuild_all_)
    for (std::size_t i = built_; i < n; ++i) all_.add(raw_[i]);
  const std::size_t from = built_;
  constexpr std::size_t B = std::size_t{1} << kBase;
  if (levels_.empty()) levels_.emplace_back();
  {  // the finest level from the points: only the buckets the new points touch
    std::vector<RunAgg>& l0 = levels_[0];
    const std::size_t nb = (n + B - 1) / B;
    l0.resize(nb);
    for (std::size_t b = from / B; b < nb; ++b) {
      RunAgg a;
      for (std::size_t i = b * B, e = std::min(n, (b + 1) * B); i < e; ++i) a.add(raw_[i]);
      l0[b] = a;
    }
  }
  // Each coarser level from the one below, up to a single bucket.
  for (std::size_t k = 1; levels_[k - 1].size() > 1; ++k) {
    if (levels_.size() == k) levels_.emplace_back();
    const std::vector<RunAgg>& below = levels_[k - 1];
    std::vector<RunAgg>& cur = levels_[k];
    const std::size_t nb = (below.size() + 1) / 2;
    cur.resize(nb);
    for (std::size_t b = from >> (kBase + k); b < nb; ++b) {
      RunAgg a = below[2 * b];
      if (2 * b + 1 < below.size()) a.append(below[2 * b + 1]);
      cur[b] = a;
    }
  }
  built_ = n;
  if (rebuild_all_) all_ = levels_.back().empty() ? RunAgg{} : levels_.back()[0], rebuild_all_ = false;
}

RunAgg SeriesLod::query(std::size_t i, std::size_t j) const {
  j = std::min(j, built_);
  RunAgg left, right;
  constexpr std::size_t B = std::size_t{1} << kBase;
  while (i < j && i % B) left.add(raw_[i++]);
  while (j > i && j % B) right.add_front(raw_[--j]);
  // [i, j) is now whole buckets of the finest level; at each level take an odd bucket at either end, then go up a
  // level (a bucket that ends at j <= built_ is complete).
  for (std::size_t k = 0; i < j; ++k) {
    const std::size_t sh = kBase + k;
    std::size_t bi = i >> sh, bj = j >> sh;
    if (bi & 1) left.append(levels_[k][bi]), i += std::size_t{1} << sh, ++bi;
    if (bi < bj && (bj & 1)) right.prepend(levels_[k][bj - 1]), j -= std::size_t{1} << sh;
  }
  left.append(right);
  return left;
}

std::size_t SeriesLod::bytes() const {
  std::size_t b = raw_.capacity() * sizeof(float);
  for (const auto& l : levels_) b += l.capacity() * sizeof(RunAgg);
  return b;
}

std::size_t RunData::index_of(double s) const {
  if (!steps.empty() && steps.back() - steps.front() == static_cast<std::int64_t>(steps.size()) - 1) {
    // steps without gaps (the usual run): the index is arithmetic
    const double i = std::ceil(s - static_cast<double>(steps.front()));
    return i <= 0 ? 0 : std::min(steps.size(), static_cast<std::size_t>(i));
  }
  return static_cast<std::size_t>(
      std::lower_bound(steps.begin(), steps.end(), s,
                       [](std::int64_t a, double b) { return static_cast<double>(a) < b; }) -
      steps.begin());
}

std::size_t RunData::nearest(double s) const {
  if (steps.empty()) return 0;
  const std::size_t i = index_of(s);
  if (i == 0) return 0;
  if (i == steps.size()) return i - 1;
  return s - static_cast<double>(steps[i - 1]) <= static_cast<double>(steps[i]) - s ? i - 1 : i;
}

std::vector<std::size_t> RunData::column_bounds(double s0, double s1, int n) const {
  std::vector<std::size_t> b(static_cast<std::size_t>(std::max(0, n)) + 1);
  for (int c = 0; c <= n; ++c) b[static_cast<std::size_t>(c)] = index_of(s0 + (s1 - s0) * c / std::max(1, n));
  return b;
}

void RunData::append(const RunStep& r) {
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? static_cast<double>(*v) : std::nan(""); };
  steps.push_back(r.step), start_ns.push_back(r.start_ns), end_ns.push_back(r.end_ns);
  const double dur = static_cast<double>(r.end_ns - r.start_ns);
  at(RunSeries::loss).push(r.loss);
  at(RunSeries::lr).push(r.lr);
  at(RunSeries::step_ns).push(dur);
  at(RunSeries::data_ns).push(opt(r.data_ns));
  at(RunSeries::forward_ns).push(opt(r.forward_ns));
  at(RunSeries::backward_ns).push(opt(r.backward_ns));
  at(RunSeries::optimizer_ns).push(opt(r.optimizer_ns));
  at(RunSeries::samples_per_s).push(r.samples && dur > 0 ? static_cast<double>(*r.samples) * 1e9 / dur : std::nan(""));
  at(RunSeries::tokens_per_s).push(r.tokens && dur > 0 ? static_cast<double>(*r.tokens) * 1e9 / dur : std::nan(""));
  at(RunSeries::grad_norm).push(r.grad_norm);
  for (DeviceMemory& d : memory) d.allocated_peak.push(std::nan("")), d.reserved_peak.push(std::nan(""));
}

bool RunData::set_memory(const RunMemoryRow& m) {
  const std::size_t i = index_of(static_cast<double>(m.step));
  if (i == steps.size() || steps[i] != m.step) return false;
  auto it = std::lower_bound(devices.begin(), devices.end(), m.device);
  const auto d = static_cast<std::size_t>(it - devices.begin());
  if (it == devices.end() || *it != m.device) {  // a device not seen before: NaN up to here
    devices.insert(it, m.device);
    DeviceMemory fresh;
    for (std::size_t k = 0; k < steps.size(); ++k)
      fresh.allocated_peak.push(std::nan("")), fresh.reserved_peak.push(std::nan(""));
    memory.insert(memory.begin() + static_cast<std::ptrdiff_t>(d), std::move(fresh));
  }
  memory[d].allocated_peak.set(i, m.allocated_peak);
  memory[d].reserved_peak.set(i, m.reserved_peak);
  return true;
}

void RunData::seal() {
  static std::atomic<std::uint64_t> next{0};
  serial = ++next;
  for (SeriesLod& s : series) s.seal();
  for (DeviceMemory& d : memory) d.allocated_peak.seal(), d.reserved_peak.seal();
}

std::size_t RunData::bytes() const {
  std::size_t b = (steps.capacity() + start_ns.capacity() + end_ns.capacity()) * sizeof(std::int64_t);
  for (const SeriesLod& s : series) b += s.bytes();
  for (const DeviceMemory& d : memory) b += d.allocated_peak.bytes() + d.reserved_peak.bytes();
  return b;
}

RunStep run_step(const gb::query::Row& row) {
  RunStep s;
  s.step = row.i64(0), s.start_ns = row.i64(1), s.end_ns = row.i64(2);
  s.loss = row.opt_f64(3).value_or(std::nan(""));
  s.lr = row.opt_f64(4).value_or(std::nan(""));
  s.data_ns = row.opt_i64(5), s.forward_ns = row.opt_i64(6), s.backward_ns = row.opt_i64(7);
  s.optimizer_ns = row.opt_i64(8), s.samples = row.opt_i64(9), s.tokens = row.opt_i64(10);
  s.grad_norm = row.opt_f64(11).value_or(std::nan(""));
  return s;
}

RunData read_run(const gb::query::TraceDb& db) {
  RunData r;
  const std::int64_t n = db.scalar("SELECT count(*) FROM steps");
  r.steps.reserve(static_cast<std::size_t>(n)), r.start_ns.reserve(static_cast<std::size_t>(n));
  r.end_ns.reserve(static_cast<std::size_t>(n));
  db.each(std::string("SELECT ") + kRunStepColumns + " FROM steps ORDER BY step",
          [&](const gb::query::Row& row) { r.append(run_step(row)); });
  // step_memory: per device, the peaks at each step's point (NaN where a step has no row).
  std::map<int, std::pair<std::vector<float>, std::vector<float>>> dev;
  std::size_t at = 0;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  db.each("SELECT step, device, allocated_peak, reserved_peak FROM step_memory ORDER BY step, device",
          [&](const gb::query::Row& row) {
            const std::int64_t step = row.i64(0);
            while (at < r.steps.size() && r.steps[at] < step) ++at;   // rows come in step order
            if (at == r.steps.size() || r.steps[at] != step) return;  // a step without a steps row
            auto [it, fresh] = dev.try_emplace(static_cast<int>(row.i64(1)));
            if (fresh) it->second.first.assign(r.steps.size(), nan), it->second.second.assign(r.steps.size(), nan);
            it->second.first[at] = static_cast<float>(row.i64(2));
            it->second.second[at] = static_cast<float>(row.i64(3));
          });
  for (auto& [d, v] : dev) {
    r.devices.push_back(d);
    RunData::DeviceMemory m;
    for (float x : v.first) m.allocated_peak.push(x);
    for (float x : v.second) m.reserved_peak.push(x);
    r.memory.push_back(std::move(m));
  }
  r.seal();
  return r;
}

void RunModel::load(const gb::query::TraceDb* db) {
  try {
    if (db) data_ = read_run(*db);
  } catch (const std::exception&) {  // the file changed under us: the panel shows an empty run
    data_ = RunData{};
  }
  ready_.store(true, std::memory_order_release);
}

std::size_t RunModel::extend(const std::vector<RunStep>& steps, const std::vector<RunMemoryRow>& memory) {
  std::size_t added = 0;
  for (const RunStep& r : steps)
    if (data_.steps.empty() || r.step > data_.steps.back()) data_.append(r), ++added;
  std::vector<RunMemoryRow> rows;
  rows.swap(held_);
  rows.insert(rows.end(), memory.begin(), memory.end());
  bool changed = added > 0;
  for (const RunMemoryRow& m : rows) {
    if (data_.set_memory(m))
      changed = true;
    else if (data_.steps.empty() || m.step > data_.steps.back())
      held_.push_back(m);  // its step comes later
  }
  if (changed) data_.seal();
  return added;
}

const RunData& RunModel::data() const {
  static const RunData kEmpty;
  return loading() ? kEmpty : data_;
}

}  // namespace gb::viewer
