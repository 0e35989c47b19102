// viewer/trace_model.h — everything the viewer shows, queried and aggregated from one trace; no ImGui here.
//
// Contract:
//   - TraceModel(path) opens the file through gb::query::TraceDb (the Reader's checks) and throws its
//     gb::trace::Error (missing, empty, corrupt, not a trace, newer schema) with the message to show the user.
//     Opening reads the small tables (threads, strings, steps, modules, params, counters, anomalies) and the
//     memory events of one device; spans are read on demand, by time window, with level of detail.
//   - timeline(thread, t0, t1, fold_below_ns) answers a view with level of detail: spans shorter than fold_below_ns
//     (pass 3 px in ns) come folded into one item with a count. The threshold is rounded down to a power of two
//     and the query window widened by half a view on each side; the answer is cached per thread, so small pans and
//     zooms reuse it. A window that holds at most options.direct_rows spans (Reader::span_count, O(log n)) is read
//     directly (Reader::spans: runs restart at the window's edge); a bigger one is answered from the Overview
//     (overview.h), built at open on a background thread, one pass per thread: the same folding over the whole
//     thread, so a frame costs the same at any zoom. While the overview is being built, such a window shows what
//     is covered so far (timeline_partial(), overview_covered_ns()). Depth is the number of enclosing items.
//   - No frame waits for SQLite: on a cache miss timeline() posts the window's Reader work (span_count, then spans
//     or "too many: use the overview") to a worker thread (worker.h) and answers at once with a stand-in: the
//     overview at the nearest built level, else the previous answer (items are in ns, so they rescale);
//     timeline_pending() is true meanwhile. A later call swaps in the exact answer. timeline_exact() waits for it
//     (tests, the bench's checks); timeline_queries()/overview_queries() count exact answers only.
//   - memory_columns() samples the memory layers at `columns` points of a window: per column the state after the
//     event with the largest `allocated` in the column (so peaks survive any zoom), else the state carried from
//     before. sum(by_category) == allocated and reserved_unallocated == reserved - allocated at every column.
//   - grad_heatmap() is the grad_stats table as a dense matrix: rows = params in model order (params.id), columns
//     = steps in order; values = gradient L2 norms; NaN/Inf cells flagged.
//   - Opening reads only the small tables; a background loader thread (its own connection) then loads the
//     memory events, builds the overview (which also sums the op table), the gradient heatmap, the per-step waits
//     and the data-loader summary, in that order. Until each is ready its accessor answers empty and *_loading()
//     says why, so no frame waits for a scan of millions of rows. loading() names what is still loading.
//   - All times are ns since the trace start. Nothing here draws; the public methods are called from one thread.
//
//   gb::viewer::TraceModel m("run.db");
//   for (const auto& track : m.tracks())
//     for (const auto& it : m.timeline(track.thread_id, 0, m.end_ns(), 3 * ns_per_px)) draw(it);
#pragma once

#include <array>
#include <atomic>
#include <thread>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "traces/query/dataloader.h"
#include "traces/query/diff.h"
#include "traces/query/memory_replay.h"
#include "traces/query/op_table.h"
#include "traces/query/trace_db.h"
#include "traces/records.h"
#include "viewer/async_cache.h"
#include "viewer/compare_model.h"
#include "viewer/graph_model.h"
#include "viewer/overview.h"
#include "viewer/worker.h"

namespace gb::viewer {

using gb::trace::Id;

struct Track {
  Id thread_id = 0;
  std::string name;
  gb::trace::ThreadRole role = gb::trace::ThreadRole::main;
  std::int64_t spans = 0;  // rows of this thread in the file
};

// The track's header text: "cuda stream N" for a cuda_stream thread (N: the number ending its name, else its
// thread id), else the thread's name.
std::string track_label(const Track& t);

// One box of the timeline: a span (count == 1) or a folded run of `count` short spans.
struct TimelineItem {
  std::int64_t start_ns = 0, end_ns = 0, count = 1;
  int depth = 0;  // 0 = a root of its track
  gb::trace::SpanRecord span;  // the span, or the first of the folded run
};

struct CounterSeries {
  std::string name;
  std::vector<std::int64_t> t_ns;
  std::vector<double> values;
};

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

struct GradHeatmap {
  std::vector<Id> param_ids;        // rows, in model order
  std::vector<std::string> labels;  // "layers.0.weight"
  std::vector<std::int64_t> steps;  // columns
  std::vector<double> norm;         // rows * steps, row-major; NaN where the trace has no row
  std::vector<std::uint8_t> flag;   // 0 ok / missing, 1 NaN, 2 Inf (nan_count, inf_count or a non-finite norm)
  std::vector<double> ratio;        // update_norm / param_norm, rows * steps; NaN where either is missing
                                    // (NULL in SQL), non-finite, or param_norm <= 0
  double min_positive = 0, max = 0;  // finite, > 0 norms
  std::size_t rows() const { return param_ids.size(); }
  std::size_t cols() const { return steps.size(); }
  double at(std::size_t r, std::size_t c) const { return norm[r * steps.size() + c]; }
  std::uint8_t flag_at(std::size_t r, std::size_t c) const { return flag[r * steps.size() + c]; }
};

// The heatmap reduced to pixel columns: per row and column, the largest finite norm of the column's steps (NaN
// when none) and the worst flag (NaN over Inf over none).
struct GradColumns {
  int columns = 0;
  std::vector<double> best;        // rows * columns
  std::vector<std::uint8_t> flag;  // rows * columns
  std::pair<std::size_t, std::size_t> steps(int c, std::size_t cols) const {  // step columns [a, b) of column c
    return {cols * static_cast<std::size_t>(c) / static_cast<std::size_t>(columns),
            cols * static_cast<std::size_t>(c + 1) / static_cast<std::size_t>(columns)};
  }
};

// One parameter's update/parameter ratio (update_norm / param_norm) per step: the steps with a finite ratio, and
// the steps that have a grad_stats row but no usable ratio (NaN norms: NULL in SQL), drawn as markers.
struct UpdateRatio {
  std::vector<std::int64_t> steps;
  std::vector<double> ratio;
  std::vector<std::int64_t> skipped;
};

// Spans whose name contains a text (ASCII case-insensitive), with a histogram of their durations in log-spaced
// bins. Bin b holds durations in [edges[b], edges[b+1]), the last bin also its upper edge (the longest match);
// edges are integer ns, strictly increasing. longest[b] indexes hits: the longest match in bin b (-1 when empty).
struct SearchHit {
  Id id = 0;
  std::int64_t start_ns = 0, dur_ns = 0;
};
struct SpanSearch {
  std::string text;
  std::int64_t matches = 0;     // all matches in the file
  bool capped = false;          // matches > hits.size(): the histogram covers the first `cap` (by span id)
  std::vector<SearchHit> hits;  // by span id
  std::vector<std::int64_t> edges, counts;
  std::vector<std::ptrdiff_t> longest;
  int bin_of(std::int64_t dur_ns) const;  // -1 outside [edges.front(), edges.back()]
};
// Fills edges/counts/longest of s from s.hits: `bins` log-spaced bins from the shortest to the longest duration
// (fewer when the range is too small for distinct integer edges).
void duration_histogram(SpanSearch& s, int bins);

struct AnomalyRow {
  gb::trace::AnomalyRecord record;
  std::string module, param, span;  // module path, param name "layers.4.weight", span name ("" when none)
};

struct StepWait {
  std::int64_t step = 0, start_ns = 0, end_ns = 0, wait_ns = 0;
  double share() const { return end_ns > start_ns ? static_cast<double>(wait_ns) / (end_ns - start_ns) : 0.0; }
};

// A CUDA kernel a span launched (kernels.launch_span_id = the span).
struct LaunchedKernel {
  Id span_id = 0;  // the kernel's cuda_kernel span
  std::string name, grid, block;  // grid, block: "x,y,z"
  std::int64_t start_ns = 0, dur_ns = 0, stream = 0;
};

// What the details pane shows for one span.
struct SpanDetails {
  gb::trace::SpanRecord span;
  std::string name, module, shapes, dtypes, thread;
  std::optional<gb::trace::SpanRecord> linked;  // the backward node of a forward op, or the forward op of a node
  std::string linked_name;
  std::int64_t children = 0, self_ns = 0;
  std::int64_t allocations = 0, allocated_bytes = 0;  // memory events (alloc) naming this span
  std::vector<LaunchedKernel> kernels;  // the kernels it launched, by start
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

  // --- timeline
  const std::vector<Track>& tracks() const { return tracks_; }
  // The kinds the timeline legend lists: op .. step, then cuda_kernel, cuda_memcpy, cuda_memset and cuda_api when
  // the trace has CUDA activity (a cuda_stream track or a kernels row).
  std::vector<gb::trace::SpanKind> legend_kinds() const;
  const std::vector<TimelineItem>& timeline(Id thread_id, std::int64_t t0, std::int64_t t1,
                                            std::int64_t fold_below_ns);
  const std::vector<TimelineItem>& timeline_exact(Id thread_id, std::int64_t t0, std::int64_t t1,
                                                  std::int64_t fold_below_ns);
  bool timeline_pending(Id thread_id) const;  // the last answer is a stand-in; the exact one is being read
  std::int64_t timeline_queries() const { return timeline_queries_; }  // Reader calls so far (cache misses)
  std::int64_t overview_queries() const { return overview_queries_; }  // answers from the overview so far
  bool timeline_partial(Id thread_id) const;  // the last answer came from an overview still being built
  bool overview_ready() const { return overview_.ready(); }
  double overview_progress() const { return overview_.progress(); }
  std::int64_t overview_covered_ns(Id thread_id) const { return overview_.covered_ns(thread_id); }
  const Overview& overview() const { return overview_; }
  void wait_overview() { overview_.wait(); }
  const std::vector<gb::trace::StepRecord>& steps() const { return steps_; }
  std::optional<gb::trace::StepRecord> step(std::int64_t s) const;
  const std::vector<CounterSeries>& counters() const { return counters_; }
  // A span's details: its name, module, thread, op_details, the linked forward op / backward node, children and
  // self time, allocations, launched kernels (about six queries, one a window read). details_async() never waits:
  // it starts them on the query worker and answers nullptr until they are in (details_pending() is then true), or
  // when no span has this id. Answers are kept per span id in this model, so another trace's ids never mix in.
  // details() runs the same queries here (tests, the command line).
  std::shared_ptr<const SpanDetails> details_async(Id span_id);
  bool details_pending(Id span_id) const { return details_.pending(span_id); }
  std::optional<SpanDetails> details(Id span_id) const;
  // One span's row (a jump on click: ViewState::jump) and its op_details {input_shapes, dtypes} ("" when it has
  // none; the hover asks every frame): primary-key lookups on the window worker, kept per span (async_cache.h).
  // span_record() and span_shapes() run the same lookups here (tests, the command line's --select).
  std::shared_ptr<const gb::trace::SpanRecord> span_record_async(Id span_id);
  bool span_record_pending(Id span_id) const { return records_.pending(span_id); }
  std::shared_ptr<const std::pair<std::string, std::string>> span_shapes_async(Id span_id);
  std::optional<gb::trace::SpanRecord> span_record(Id span_id) const;
  std::pair<std::string, std::string> span_shapes(Id span_id) const;
  // Spans named like `text` (substring, ASCII case-insensitive; one SQL query over spans joined with strings, at
  // most `cap` rows kept) and their duration histogram. Cached for the last text; "" answers no matches.
  // search_async() never waits: it starts the query on the query worker (worker.h) and answers nullptr until the
  // result is in (the panel shows "searching..."); a new text supersedes a pending one. search() is the same
  // query, waited for (tests, the bench).
  const SpanSearch* search_async(const std::string& text, std::size_t cap = 100'000, int bins = 40);
  const SpanSearch& search(const std::string& text, std::size_t cap = 100'000, int bins = 40);
  bool search_pending() const { return search_job_ != nullptr; }

  // --- memory (one device: the one with the most events, cuda first)
  bool memory_loading() const { return !memory_ready_.load(std::memory_order_acquire); }
  bool has_memory() const { return !memory_loading() && !mem_t_.empty(); }
  int memory_device() const { return mem_device_; }
  std::int64_t context_bytes() const { return context_; }
  std::size_t memory_events() const { return mem_t_.size(); }
  std::vector<MemoryColumn> memory_columns(std::int64_t t0, std::int64_t t1, int columns) const;
  MemoryColumn memory_at(std::int64_t t) const;  // the state after the last event at or before t
  std::int64_t peak_reserved() const { return peak_reserved_; }
  // Off the frame (what the Memory and Gradients panels call): the first call for a key (window and column count;
  // the cursor; the column count) posts the computation to the compute worker and answers at once with the last
  // finished result, for another key (nullptr when there is none yet, or while the data is loading);
  // memory_pending()/gradients_pending() are true until the answer for the key asked last is in. A key asked again
  // while its job is queued posts nothing; a newer key supersedes a queued one. wait_queries() waits for them.
  const std::vector<MemoryColumn>* memory_columns_async(std::int64_t t0, std::int64_t t1, int columns);
  const SegmentMap* segment_map_async(std::int64_t t);
  bool memory_pending() const {
    return mem_cols_slot_.job != nullptr || seg_slot_.job != nullptr || live_slot_.job != nullptr;
  }
  // Replays the device's events up to t (in memory): segments from segment_alloc/free, blocks placed by segment_id
  // (or by address), by offset. Cached for the last t.
  const SegmentMap& segment_map(std::int64_t t);
  const std::vector<gb::trace::OomReportRecord>& oom_reports() const { return ooms_; }
  // The largest blocks live at time t, largest first (ties by address): replayed from the events loaded at open
  // (no SQL but one span-name lookup per block shown); while memory is loading, from SQL (largest_live_sql, the
  // reference: the same answer).
  std::vector<LiveBlock> largest_live(std::int64_t t, std::size_t n) const;
  std::vector<LiveBlock> largest_live_sql(std::int64_t t, std::size_t n) const;
  // largest_live off the frame (see memory_columns_async): the replay and the op names (n point lookups) run on
  // the query worker. nullptr while memory loads or before a first answer.
  const std::vector<LiveBlock>* largest_live_async(std::int64_t t, std::size_t n);

  // --- autograd graph (graph_model.h)
  GraphModel& graph() { return graph_; }
  const GraphModel& graph() const { return graph_; }

  // --- ops, anomalies, gradients, data loader
  // From the overview's sums (empty while it builds); a trace with CUDA kernels gets query::op_table's (SQL, on the
  // query worker) for its CUDA columns, once per kind: empty until it is in (ops_loading() true meanwhile).
  const gb::query::OpTable& op_table(gb::trace::SpanKind kind);
  bool ops_loading() const { return !overview_.ready() || cuda_op_tables_.any_pending(); }
  const Flame& flame() const;  // empty while loading (flame_loading())
  // The most common input_shapes string (op_details) of the spans of this kind and name (ties: the smaller text);
  // "" when none has op_details, or while the loader has not read them yet (after the flame).
  std::string op_shapes(gb::trace::SpanKind kind, const std::string& name) const;
  bool flame_loading() const { return !flame_ready_.load(std::memory_order_acquire); }
  const std::vector<AnomalyRow>& anomalies() const { return anomalies_; }
  const GradHeatmap& grad_heatmap();  // empty while loading
  bool gradients_loading() const { return !heatmap_ready_.load(std::memory_order_acquire); }
  const GradColumns& grad_columns(int columns);  // cached for the last column count
  const GradColumns* grad_columns_async(int columns);  // see memory_columns_async
  bool gradients_pending() const { return grad_slot_.job != nullptr; }
  UpdateRatio update_ratio(Id param_id);          // from the heatmap; empty while loading or for an unknown param
  const std::vector<StepWait>& step_waits();  // per step, the main thread's `wait` spans; empty while loading
  const gb::query::DataLoaderSummary& dataloader_summary();
  bool dataloader_loading() const { return !dataloader_ready_.load(std::memory_order_acquire); }
  // --- compare: this trace (A) with a second one (B) (compare_model.h)
  CompareModel& compare() { return compare_; }
  const CompareModel& compare() const { return compare_; }

  void wait_queries();  // until the search, comparison and timeline windows asked for so far are answered

  std::string loading() const;  // "memory events, overview 40%" or ""
  void wait_loaded();           // until the loader thread is done and wait_queries() (tests, the screenshot)

 private:
  void load(std::vector<Overview::ThreadRange> ranges);  // the loader thread
  std::optional<SpanDetails> read_details(const gb::query::TraceDb& db, Id span_id) const;  // any thread
  std::pair<std::string, std::string> read_shapes(const gb::query::TraceDb& db, Id span_id) const;  // any thread
  SegmentMap replay_segments(std::int64_t t) const;
  GradColumns reduce_grad(int columns) const;
  using Key = std::array<std::int64_t, 3>;
  template <class T>
  struct Slot {  // one off-frame computation: the job in flight and the last finished answer
    struct Job {
      Key key{};
      T result{};
      std::atomic<bool> done{false}, cancelled{false};
    };
    std::shared_ptr<Job> job;
    std::optional<T> last;
    Key last_key{};
  };
  template <class T, class F>
  const T* async_get(Slot<T>& s, Key key, F compute, Worker* worker = nullptr);  // compute(db); default: compute_
  void load_memory(const gb::query::TraceDb& db);
  struct LiveEntry;  // what a replay keeps of a live block beyond size and category (memory_replay.cpp)
  using LiveReplay = gb::query::MemoryReplay<LiveEntry>;
  // The n largest live blocks of a replay, their ops named by point lookups on db.
  std::vector<LiveBlock> top_live(const LiveReplay& replay, std::size_t n, const gb::query::TraceDb& db) const;
  std::vector<LiveBlock> replay_live(std::int64_t t, std::size_t n, const gb::query::TraceDb& db) const;
  GradHeatmap load_heatmap(const gb::query::TraceDb& db) const;
  struct WindowJob;  // a window's Reader work on windows_ (trace_model.cpp)
  struct TimelineCache {
    std::int64_t q0 = 0, q1 = -1, fold = -1;
    bool partial = false;  // from an overview still being built: asked again next time
    bool many = false;     // [q0, q1] holds more than direct_rows spans: answered from the overview
    std::vector<TimelineItem> items;
    std::shared_ptr<WindowJob> job;  // the exact answer being read; items are a stand-in meanwhile
  };
  void post_window(Id thread_id, TimelineCache& c, std::int64_t q0, std::int64_t q1, std::int64_t fold, bool direct);
  void apply_window(Id thread_id, TimelineCache& c);
  void from_overview(Id thread_id, TimelineCache& c);

  std::unique_ptr<gb::query::TraceDb> db_;
  ModelOptions options_;
  std::int64_t begin_ns_ = 0, end_ns_ = 0, span_count_ = 0, timeline_queries_ = 0, overview_queries_ = 0;
  std::unordered_map<Id, std::string> strings_;
  std::map<std::string, std::string, std::less<>> meta_;
  std::unordered_map<Id, gb::trace::ModuleRecord> modules_;
  std::vector<gb::trace::ParamRecord> params_;
  std::vector<Track> tracks_;
  std::unordered_map<Id, TimelineCache> timeline_cache_;
  std::vector<gb::trace::StepRecord> steps_;
  std::vector<CounterSeries> counters_;
  std::vector<AnomalyRow> anomalies_;

  // Memory events of mem_device_, in id order, with the per-category running totals after each.
  int mem_device_ = 0;
  std::int64_t context_ = 0, peak_reserved_ = 0;
  std::vector<std::int64_t> mem_t_, mem_alloc_, mem_reserved_;
  std::vector<gb::query::CategoryBytes> mem_cat_;
  struct MemEvent {
    std::int64_t addr, size, segment;  // segment -1: NULL
    gb::trace::OptId span, module;
    std::uint8_t action, category;
  };
  std::vector<MemEvent> mem_ev_;
  std::optional<SegmentMap> segment_map_;
  std::vector<gb::trace::OomReportRecord> ooms_;

  AsyncCache<Id, SpanDetails> details_;  // by span id, per model: another trace's ids never mix in
  AsyncCache<Id, gb::trace::SpanRecord> records_;
  AsyncCache<Id, std::pair<std::string, std::string>> shapes_;
  AsyncCache<int, gb::query::OpTable> cuda_op_tables_{64};
  struct SearchJob;   // span_search.cpp
  std::optional<SpanSearch> search_;
  std::shared_ptr<SearchJob> search_job_;
  std::map<int, gb::query::OpTable> op_tables_;
  std::optional<GradHeatmap> heatmap_;
  GradColumns grad_columns_;
  std::optional<std::vector<StepWait>> waits_;
  std::optional<gb::query::DataLoaderSummary> dl_summary_;
  bool has_kernels_ = false;
  std::optional<Flame> flame_;
  std::map<std::pair<int, std::string>, std::string> op_shapes_;  // (kind, name) -> most common shapes
  std::atomic<bool> memory_ready_{false}, heatmap_ready_{false}, dataloader_ready_{false}, flame_ready_{false}, shapes_ready_{false},
      stop_{false};
  Overview overview_;
  std::unique_ptr<Worker> queries_;  // search and compare
  std::unique_ptr<Worker> windows_;  // timeline windows (a long search never delays them)
  std::unique_ptr<Worker> compute_;  // memory columns, segment maps, heatmap reductions (no SQL)
  Slot<std::vector<MemoryColumn>> mem_cols_slot_;
  Slot<SegmentMap> seg_slot_;
  Slot<GradColumns> grad_slot_;
  Slot<std::vector<LiveBlock>> live_slot_;
  CompareModel compare_{*queries_};
  GraphModel graph_{*this, *queries_};
  std::thread loader_;  // last: joined (after stop_) before the rest is destroyed
};

}  // namespace gb::viewer
