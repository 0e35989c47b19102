// viewer/trace_model.h — everything the viewer shows of one trace, queried and aggregated; no ImGui here.
//
// Contract:
//   - TraceModel(path) opens the file through gb::query::TraceDb (the Reader's checks) and throws its
//     gb::trace::Error (missing, empty, corrupt, not a trace, newer schema) with the message to show the user.
//     Opening reads the small tables (threads, strings, meta, steps, modules, params, counters, anomalies, OOM
//     reports, detail windows); the rest is read by domain, each behind the same asynchronous interface
//     (async_cache.h: a call answers at once, from what is in or with a stand-in, and posts the work to a worker
//     thread):
//       run()        the run summary of every step (curves with level of detail)     run_model.h
//       timeline()   windows of spans with level of detail, span details, search     timeline_model.h
//       memory()     the memory layers, segment map, largest live blocks             memory_model.h
//       gradients()  the grad_stats heatmap and its reductions, update ratios        gradients_model.h
//       graph()      a step's autograd graph, laid out                               graph_model.h
//       compare()    this trace beside a second one                                  compare_model.h
//     and here: the op table and flame, the data-loader waits and summary.
//   - Steps: a long run's trace (meta `detail`, traces/query/detail.h) can hold 10^6 steps; steps() then holds only
//     the steps with detail (those the timeline, memory and graph views can show), read at open, and the whole run
//     summary is run()'s, read by the loader. A trace without a detail policy has every step in steps().
//   - After open a background loader thread (its own connection) loads the run summary, the memory events, builds
//     the timeline's overview (which also sums the op table), the gradient heatmap, the per-step waits and the
//     data-loader summary, the flame and the op shapes, in that order. Until each is ready its accessor answers
//     empty and a *loading() says so, so no frame waits for a scan of millions of rows. loading() names what is
//     still loading.
//   - Three workers (worker.h), each with its own connection but the last: queries (details, search, compare,
//     graphs, live-block names, op tables with CUDA columns), windows (timeline windows, span rows and shapes: a
//     long search never delays them) and compute (memory columns, segment maps, heatmap reductions: no SQL).
//   - Live following: a file still being written (no meta closed_cleanly, its writer's pid alive on this host:
//     traces/query/follow.h; or no pid yet, on this host, written to in the last 10 s: just created) is followed.
//     Once the loader is done, the same thread (at nice +10, as the collector) polls every options.poll (250 ms)
//     with short statements (nothing held between polls: a reader pinning the WAL would stall the writer's
//     checkpoints) for new rows by key range: steps by step, step_memory by rowid, anomalies and detail_windows by
//     id (with the steps of a new window), and meta for the end. poll(), called by the UI each frame, takes in what
//     it read (no SQL): run() extended (its serial changes), anomalies() and detail() grown, steps() gains the new
//     windows' steps (every new step in a trace without a detail policy), end_ns() extended. The timeline's spans of
//     a new window are read directly when shown (its windows are bounded reads); the overview, memory events, flame
//     and gradients stay as loaded (F5 reloads them). live() says how it stands; it ends at closed_cleanly,
//     stopped_by (the writer gone or 3 s after it), or the writer gone (seen twice: "the writer died").
//   - All times are ns since the trace start. Nothing here draws; the public methods are called from one thread.
//
//   gb::viewer::TraceModel m("run.db");
//   for (const auto& track : m.tracks())
//     for (const auto& it : m.timeline().window(track.thread_id, 0, m.end_ns(), 3 * ns_per_px)) draw(it);
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "traces/query/alarms.h"
#include "traces/query/dataloader.h"
#include "traces/query/detail.h"
#include "traces/query/diff.h"
#include "traces/query/op_table.h"
#include "traces/query/trace_db.h"
#include "traces/records.h"
#include "viewer/async_cache.h"
#include "viewer/compare_model.h"
#include "viewer/gradients_model.h"
#include "viewer/graph_model.h"
#include "viewer/memory_model.h"
#include "viewer/run_model.h"
#include "viewer/timeline_model.h"
#include "viewer/worker.h"

namespace gb::viewer {

using gb::trace::Id;

struct Track {
  Id thread_id = 0;
  std::string name;
  gb::trace::ThreadRole role = gb::trace::ThreadRole::main;
  std::int64_t spans = 0;  // rows of this thread in the file
  std::optional<std::int64_t> rank;  // a merged trace's rank (threads.rank)
};

// The track's header text: "cuda stream N" for a cuda_stream thread (N: the number ending its name, else its
// thread id), else the thread's name; "rank R · " before it in a merged trace.
std::string track_label(const Track& t);

struct CounterSeries {
  std::string name;
  std::vector<std::int64_t> t_ns;
  std::vector<double> values;
};

struct AnomalyRow {
  gb::trace::AnomalyRecord record;
  std::string module, param, span;  // module path, param name "layers.4.weight", span name ("" when none)
};

struct StepWait {
  std::int64_t step = 0, start_ns = 0, end_ns = 0, wait_ns = 0;
  double share() const { return end_ns > start_ns ? static_cast<double>(wait_ns) / (end_ns - start_ns) : 0.0; }
};

// The flame (icicle) view of module -> op time: spans of kind module whose parent is not a module are roots; their
// module and op descendants (through module/op parents only) are aggregated by name path ("MLP/layers.0/linear").
// Nodes are in depth-first order, children by name; x0/x1 are the node's share of the root total, laid out inside
// its parent (x1 - x0 = total_ns / Flame::total_ns).
struct FlameNode {
  std::string name, path;
  int depth = 0, parent = -1;  // parent: index into Flame::nodes, -1 for a root
  gb::trace::SpanKind kind = gb::trace::SpanKind::module;
  std::int64_t total_ns = 0, calls = 0;
  double x0 = 0, x1 = 0;
};
struct Flame {
  std::vector<FlameNode> nodes;
  std::int64_t total_ns = 0;  // sum over the roots
  int depth = 0;              // rows
};
// Builds the flame from spans (id, parent, kind, name, duration) fed in id order (per thread, begin order: a
// parent before its children): what the loader streams from the trace's module and op spans. Spans of other kinds
// are ignored; an op whose parent chain leaves the module/op spans before reaching a module is dropped.
struct FlameSpan {
  Id id = 0;
  gb::trace::OptId parent;
  gb::trace::SpanKind kind = gb::trace::SpanKind::op;
  std::string_view name;
  std::int64_t dur_ns = 0;
};
class FlameBuilder {
 public:
  void add(const FlameSpan& s);
  Flame finish();

 private:
  struct Node {
    int parent;
    std::string name;
    gb::trace::SpanKind kind;
    std::int64_t total = 0, calls = 0;
    std::vector<int> children;
  };
  struct Open {
    Id id;
    gb::trace::SpanKind kind;
    int node;
  };
  std::vector<Node> nodes_;
  std::map<std::pair<int, std::string>, int> intern_;
  std::unordered_map<Id, std::vector<Open>> stacks_;  // per thread
};
Flame build_flame(const std::vector<FlameSpan>& spans);

struct ModelOptions {
  std::int64_t direct_rows = 16'000;  // windows with more spans than this come from the overview
  bool background = true;             // build the overview on a background thread (false: before the constructor returns)
  bool follow = true;                 // follow a trace still being written (needs background)
  std::chrono::milliseconds poll = std::chrono::milliseconds(250);  // between the follower's polls
};

// How following a trace still being written stands (TraceModel::live()).
struct LiveStatus {
  bool following = false;  // the writer is alive and the model polls for new rows
  bool ended = false;      // the run ended while followed, or the file was opened after its writer died
  bool died = false;       // the writer disappeared without closing the file
  std::string end;         // "ended: exit", "ended: closed cleanly", "the writer died (killed or crashed)"
  std::int64_t steps = 0;  // steps in run() so far
  std::int64_t polls = 0;  // the follower's polls so far
  std::chrono::steady_clock::time_point last_step;  // when poll() last took in a new step (or the open)
  // "live: 1234 steps, last new step 0.4 s ago", the end text, or "" (a finished trace)
  std::string text(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) const;
};

class TraceModel {
 public:
  explicit TraceModel(const std::string& path, ModelOptions options = {});
  ~TraceModel();
  TraceModel(const TraceModel&) = delete;
  TraceModel& operator=(const TraceModel&) = delete;

  const std::string& path() const { return db_->path(); }
  std::optional<std::string> meta(std::string_view key) const {  // read at open (the menu bar asks every frame)
    auto it = meta_.find(key);
    return it == meta_.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::int64_t begin_ns() const { return begin_ns_; }  // the earliest span, step or memory event
  std::int64_t end_ns() const { return end_ns_; }      // the latest
  std::int64_t span_count() const { return span_count_; }
  std::string_view string(Id id) const;  // strings.text, "" when unknown
  std::string module_path(gb::trace::OptId module) const;  // "layers.0"; "(root)" for ""; "" when none
  std::string kind_name(gb::trace::SpanKind k) const;
  const std::vector<gb::trace::ParamRecord>& params() const { return params_; }  // by id
  const std::vector<Track>& tracks() const { return tracks_; }
  bool has_kernels() const { return has_kernels_; }  // the kernels table has rows
  // The kinds the timeline legend lists: op .. step, then cuda_kernel, cuda_memcpy, cuda_memset and cuda_api when
  // the trace has CUDA activity (a cuda_stream track or a kernels row), and collective when it has a communication
  // track.
  std::vector<gb::trace::SpanKind> legend_kinds() const;
  // The steps with detail (every step but in a long run's trace: see above), in step order; step(s) is one of them.
  const std::vector<gb::trace::StepRecord>& steps() const { return steps_; }
  std::optional<gb::trace::StepRecord> step(std::int64_t s) const;
  // Which steps have detail (read at open): all() for a trace without a detail policy.
  const gb::query::DetailWindows& detail() const { return detail_; }
  // Whether step s's detail came after the open (followed live: a window, or in a trace without a policy a step,
  // written since): its spans are read when shown, but its memory events and graphs only at an open (F5).
  bool detail_after_open(std::int64_t s) const {
    if (detail_.all()) return s > last_step_at_open_;
    const gb::trace::DetailWindowRecord* w = detail_.window_of(s);
    return w && w->id > window_id_at_open_;
  }
  const std::vector<CounterSeries>& counters() const { return counters_; }
  const std::vector<AnomalyRow>& anomalies() const { return anomalies_; }
  // anomalies() in the order the Anomalies panel lists them (gb::query::chain_order: ChainRow::row indexes
  // anomalies()): each alarm no other explains at its time, right under it the alarms that followed from it
  // (anomalies.cause_id, schema version 6) depth first, each with its depth and the rows below it. Recomputed when
  // rows come in (the open, poll()). Without causes (an older file): anomalies() in their order, all at depth 0.
  const std::vector<gb::query::ChainRow>& anomaly_order() const { return anomaly_order_; }
  std::size_t anomaly_chains() const { return anomaly_chains_; }  // roots with at least one consequence

  TimelineModel& timeline() { return timeline_; }
  const TimelineModel& timeline() const { return timeline_; }
  MemoryModel& memory() { return memory_; }
  const MemoryModel& memory() const { return memory_; }
  GradientsModel& gradients() { return gradients_; }
  const GradientsModel& gradients() const { return gradients_; }
  GraphModel& graph() { return graph_; }
  const GraphModel& graph() const { return graph_; }
  CompareModel& compare() { return compare_; }
  const CompareModel& compare() const { return compare_; }
  RunModel& run() { return run_; }
  const RunModel& run() const { return run_; }

  // --- ops and data loader
  // From the overview's sums (empty while it builds); a trace with CUDA kernels gets query::op_table's (SQL, on the
  // query worker) for its CUDA columns, once per kind: empty until it is in (ops_loading() true meanwhile).
  const gb::query::OpTable& op_table(gb::trace::SpanKind kind);
  bool ops_loading() const { return !timeline_.overview().ready() || cuda_op_tables_.any_pending(); }
  const Flame& flame() const;  // empty while loading (flame_loading())
  bool flame_loading() const { return !flame_ready_.load(std::memory_order_acquire); }
  // The most common input_shapes string (op_details) of the spans of this kind and name (ties: the smaller text);
  // "" when none has op_details, or while the loader has not read them yet (after the flame).
  std::string op_shapes(gb::trace::SpanKind kind, const std::string& name) const;
  const std::vector<StepWait>& step_waits() const;  // per step, the main thread's `wait` spans; empty while loading
  const gb::query::DataLoaderSummary& dataloader_summary() const;
  bool dataloader_loading() const { return !dataloader_ready_.load(std::memory_order_acquire); }

  // --- live following (see the contract above)
  const LiveStatus& live() const { return live_; }
  // UI thread, each frame: takes in what the follower read since the last call (no SQL). True when something new
  // came (a step, step_memory row, anomaly, window, or the end).
  bool poll();

  void wait_queries();  // until every job posted to the workers so far is done (the next call takes its answer)
  std::string loading() const;  // "memory events, overview 40%" or ""
  void wait_loaded();  // until the loader is done (not the follower) and wait_queries() (tests, the screenshot)

 private:
  void load(std::vector<Overview::ThreadRange> ranges);  // the loader thread
  // What the follower read in its polls since the UI's last poll().
  struct LiveBatch {
    std::vector<RunStep> steps;
    std::vector<RunMemoryRow> memory;
    std::vector<AnomalyRow> anomalies;
    std::vector<gb::trace::DetailWindowRecord> windows;
    std::vector<gb::trace::StepRecord> steps_with_detail;  // the new windows' steps (all new steps: no policy)
    std::optional<std::string> end;                        // the end, when seen
    bool died = false;
    std::int64_t polls = 0;
  };
  void follow();  // the loader thread, after load() (live.cpp)
  AnomalyRow anomaly_row(const gb::trace::AnomalyRecord& a, const gb::query::TraceDb& db) const;
  void order_anomalies();  // anomaly_order_ and anomaly_chains_ from anomalies_

  std::unique_ptr<gb::query::TraceDb> db_;
  ModelOptions options_;
  std::int64_t begin_ns_ = 0, end_ns_ = 0, span_count_ = 0;
  std::unordered_map<Id, std::string> strings_;
  std::map<std::string, std::string, std::less<>> meta_;
  std::unordered_map<Id, gb::trace::ModuleRecord> modules_;
  std::vector<gb::trace::ParamRecord> params_;
  std::vector<Track> tracks_;
  std::vector<gb::trace::StepRecord> steps_;
  gb::query::DetailWindows detail_;
  std::vector<CounterSeries> counters_;
  std::vector<AnomalyRow> anomalies_;
  std::vector<gb::query::ChainRow> anomaly_order_;
  std::size_t anomaly_chains_ = 0;
  bool has_kernels_ = false;

  std::map<int, gb::query::OpTable> op_tables_;
  AsyncCache<int, gb::query::OpTable> cuda_op_tables_{64};
  std::optional<std::vector<StepWait>> waits_;
  std::optional<gb::query::DataLoaderSummary> dl_summary_;
  std::optional<Flame> flame_;
  std::map<std::pair<int, std::string>, std::string> op_shapes_;  // (kind, name) -> most common shapes
  std::atomic<bool> dataloader_ready_{false}, flame_ready_{false}, shapes_ready_{false}, stop_{false};

  std::unique_ptr<Worker> queries_;  // details, search, compare, graphs, live-block names, CUDA op tables
  std::unique_ptr<Worker> windows_;  // timeline windows, span rows and shapes
  std::unique_ptr<Worker> compute_;  // memory columns, segment maps, heatmap reductions (no SQL)
  // The domains: after the workers they post to; ~TraceModel resets the workers before they are destroyed.
  TimelineModel timeline_{*this, *windows_, *queries_, options_.direct_rows};
  MemoryModel memory_{*this, *compute_, *queries_};
  GradientsModel gradients_{*this, *compute_};
  CompareModel compare_{*queries_};
  GraphModel graph_{*this, *queries_};
  RunModel run_;

  LiveStatus live_;        // the UI thread's
  bool follow_ = false;    // decided at open: the file is being written
  std::mutex live_mutex_;  // guards pending_ and loaded_
  std::condition_variable live_cv_;
  LiveBatch pending_;
  std::int64_t follow_memory_rowid_ = 0;
  std::int64_t window_id_at_open_ = std::numeric_limits<std::int64_t>::max();  // detail_after_open()'s references
  std::int64_t last_step_at_open_ =
      std::numeric_limits<std::int64_t>::max();  // step_memory's largest rowid before the run summary was read
  bool loaded_ = false;                          // load() is done (wait_loaded() waits for this, not for the follower)
  std::thread loader_;  // last: joined (after stop_) before the rest is destroyed
};

}  // namespace gb::viewer
