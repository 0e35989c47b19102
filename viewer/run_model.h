// viewer/run_model.h — the run domain of TraceModel: the run summary of every step (steps with the schema 5
// columns, step_memory) as columns over the step axis, each with a level of detail, for the Run panel's curves of
// 10^4..10^6 steps. No ImGui.
//
// Contract:
//   - read_run(db) reads the summary (any thread, its own connection): one row per step in step order; per step
//     the loss, lr, step time (end - start), the data/forward/backward/optimizer times, samples/s and tokens/s (the
//     step's samples or tokens over its time), the global gradient norm, and per device the allocated and reserved
//     peaks. A value the trace does not have (NULL, or a NaN the file stores as NULL) is NaN; a trace older than
//     schema 5 has NaN for the new columns and no devices.
//   - SeriesLod is one such column with its level of detail: per series, min / max / first / last / sum / count of
//     the finite values per bucket of 2^k points, k = kBase.. up to one bucket, built in one pass. query(i, j) is
//     the aggregate of points [i, j) from O(log n) buckets and at most 2 * 2^kBase points, never a scan of the
//     range: any visible range of 10^6 steps reduces to one value pair per pixel column in a few us per column.
//   - Append-only: push() adds points at the end and seal() (re)builds only the buckets the new points touch, so a
//     trace that grows (live following, later) extends its columns without a rebuild. RunData::append() adds one
//     step's row.
//   - RunModel::load(db) is the model's loader thread (the first thing it loads); until it is done data() is an
//     empty RunData and loading() is true. data() then changes only through extend(), on the UI thread (a trace
//     followed live: TraceModel::poll() hands it the steps and step_memory rows its follower read), never while a
//     frame uses it.
//
//   const RunData& r = m.run().data();
//   auto bounds = r.column_bounds(s0, s1, px);  // point index bounds of each pixel column
//   for (int c = 0; c < px; ++c) { RunAgg a = r.series(RunSeries::loss).query(bounds[c], bounds[c + 1]); ... }
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "traces/query/trace_db.h"

namespace gb::viewer {

// The finite values of a range of points: min, max, the first and last (in step order), their sum and count.
struct RunAgg {
  float min = std::numeric_limits<float>::infinity(), max = -std::numeric_limits<float>::infinity();
  float first = std::numeric_limits<float>::quiet_NaN(), last = std::numeric_limits<float>::quiet_NaN();
  double sum = 0;
  std::uint32_t n = 0;  // finite values
  bool empty() const { return n == 0; }
  double mean() const { return n ? sum / n : std::nan(""); }
  void add(float v);                    // a point after the others
  void add_front(float v);              // a point before the others
  void append(const RunAgg& later);     // points after these
  void prepend(const RunAgg& earlier);  // points before these
};

class SeriesLod {
 public:
  static constexpr int kBase = 4;  // the finest buckets hold 16 points (finer ranges read the points)

  void push(double v) { raw_.push_back(static_cast<float>(v)); }
  // Replaces point i (a value that came after its point was pushed: a step_memory row committed after its step's);
  // the next seal() rebuilds the buckets from i on.
  void set(std::size_t i, double v);
  void seal();  // builds the buckets of the points pushed or set since the last seal()
  std::size_t size() const { return raw_.size(); }
  double at(std::size_t i) const { return raw_[i]; }
  bool any() const { return !all_.empty(); }  // a finite value exists (after seal())
  const RunAgg& all() const { return all_; }
  RunAgg query(std::size_t i, std::size_t j) const;  // points [i, j), j clamped to size()
  int levels() const { return static_cast<int>(levels_.size()); }
  std::size_t bytes() const;

 private:
  std::vector<float> raw_;
  std::vector<std::vector<RunAgg>> levels_;  // levels_[k]: buckets of 2^(kBase + k) points
  std::size_t built_ = 0;                    // points the buckets cover
  RunAgg all_;
  bool rebuild_all_ = false;  // a point was set: all() from the top bucket at the next seal()
};

enum class RunSeries : int {
  loss,
  lr,
  step_ns,
  data_ns,
  forward_ns,
  backward_ns,
  optimizer_ns,
  samples_per_s,
  tokens_per_s,
  grad_norm,
  count
};
constexpr int kRunSeries = static_cast<int>(RunSeries::count);
constexpr const char* kRunSeriesNames[] = {"loss",     "lr",        "step time", "data",     "forward",
                                           "backward", "optimizer", "samples/s", "tokens/s", "gradient norm"};

// One step_memory row: a device's peaks in a step.
struct RunMemoryRow {
  std::int64_t step = 0;
  int device = 0;
  double allocated_peak = 0, reserved_peak = 0;
};

// One step's summary row, as read (NaN / nullopt where the trace has none).
struct RunStep {
  std::int64_t step = 0, start_ns = 0, end_ns = 0;
  double loss = std::nan(""), lr = std::nan(""), grad_norm = std::nan("");
  std::optional<std::int64_t> data_ns, forward_ns, backward_ns, optimizer_ns, samples, tokens;
};

struct RunData {
  std::vector<std::int64_t> steps, start_ns, end_ns;  // by point (step order)
  std::array<SeriesLod, kRunSeries> series;
  std::vector<int> devices;  // step_memory's devices, ascending
  struct DeviceMemory {
    SeriesLod allocated_peak, reserved_peak;
  };
  std::vector<DeviceMemory> memory;  // by devices' index
  // Changes whenever the columns do (each read_run, each seal() after appends), unique in the process: what a view
  // keeps derived from this data is keyed by it (an address may be reused by the next trace's).
  std::uint64_t serial = 0;

  std::size_t size() const { return steps.size(); }
  bool empty() const { return steps.empty(); }
  const SeriesLod& at(RunSeries s) const { return series[static_cast<std::size_t>(s)]; }
  SeriesLod& at(RunSeries s) { return series[static_cast<std::size_t>(s)]; }
  bool has_phases() const { return at(RunSeries::forward_ns).any(); }
  // The point of a step: the first point whose step is >= s (size() when none).
  std::size_t index_of(double s) const;
  // The point whose step is nearest s (size() when empty).
  std::size_t nearest(double s) const;
  // n + 1 point bounds: pixel column c of a plot of steps [s0, s1] holds points [b[c], b[c + 1]).
  std::vector<std::size_t> column_bounds(double s0, double s1, int n) const;
  void append(const RunStep& r);  // a step after the last (push + the derived series); seal() afterwards
  // A step_memory row of a step already appended (its point set; a device not seen before gets its columns, NaN
  // before): false when no point has that step (the caller keeps the row for a later append). seal() afterwards.
  bool set_memory(const RunMemoryRow& m);
  void seal();                    // every series' buckets; a new serial
  std::size_t bytes() const;
};

RunData read_run(const gb::query::TraceDb& db);  // any thread; throws what the queries throw
// The steps columns read_run reads (`SELECT <kRunStepColumns> FROM steps ...`), and a row of them as a RunStep:
// the live follower reads new steps with them too.
inline constexpr const char* kRunStepColumns =
    "step, start_ns, end_ns, loss, lr, data_ns, forward_ns, backward_ns, optimizer_ns, samples, tokens, grad_norm";
RunStep run_step(const gb::query::Row& row);

class RunModel {
 public:
  void load(const gb::query::TraceDb* db);  // the loader thread; db nullptr: nothing to load
  bool loading() const { return !ready_.load(std::memory_order_acquire); }
  const RunData& data() const;  // empty while loading
  // Live following (UI thread, after load): appends the steps after the last one (a step at or before it is
  // skipped), sets the step_memory rows of steps it has (a row of a step still to come is kept for the next call)
  // and seals: a new serial when anything changed. Returns the steps appended.
  std::size_t extend(const std::vector<RunStep>& steps, const std::vector<RunMemoryRow>& memory);
  std::size_t held_memory_rows() const { return held_.size(); }

 private:
  std::atomic<bool> ready_{false};
  RunData data_;
  std::vector<RunMemoryRow> held_;  // step_memory rows whose step has no point yet
};

}  // namespace gb::viewer
