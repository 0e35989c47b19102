// viewer/timeline_model.h — the timeline domain of TraceModel: the spans of a time window with level of detail, a
// span's row, shapes and details, and the search by name. No ImGui; calls from the UI thread.
//
// Contract:
//   - window(thread, t0, t1, fold_below_ns) answers a view with level of detail: spans shorter than fold_below_ns
//     (pass 3 px in ns) come folded into one item with a count. The threshold is rounded down to a power of two
//     and the query window widened by half a view on each side; the answer is cached per thread, so small pans and
//     zooms reuse it. A window that holds at most direct_rows spans (Reader::span_count, O(log n)) is read
//     directly (Reader::spans: runs restart at the window's edge); a bigger one is answered from the Overview
//     (overview.h), which the model's loader builds after open, one pass per thread: the same folding over the
//     whole thread, so a frame costs the same at any zoom. While the overview is being built, such a window shows
//     what is covered so far (partial(), overview().covered_ns()). Depth is the number of enclosing items.
//   - No call waits for SQLite: on a cache miss window() posts the window's Reader work (span_count, then spans or
//     "too many: use the overview") to the window worker and answers at once with a stand-in: the overview at the
//     nearest built level, else the previous answer (items are in ns, so they rescale); pending() is true
//     meanwhile. A later call swaps in the exact answer. exact() waits for it (tests, the bench's checks);
//     window_queries()/overview_queries() count exact answers only.
//   - details(id), span(id) and shapes(id) answer at once from an AsyncCache (async_cache.h): nullptr until the
//     answer is in (*_pending(id) is then true), or when no span has this id. details: its name, module, thread,
//     op_details, the linked forward op / backward node, children and self time, allocations, launched kernels
//     (about six queries, one a window read; on the query worker). span: its row (a click's jump); shapes: its
//     op_details {input_shapes, dtypes}, "" when none (the hover asks every frame): primary-key lookups on the
//     window worker. Answers are kept per model, so another trace's ids never mix in.
//   - search(text) (spans whose name contains text, ASCII case-insensitive; one SQL query over spans joined with
//     strings, at most `cap` rows kept, and their duration histogram) answers at once: the result for this text,
//     or nullptr while it is read on the query worker (search_pending()); a new text supersedes a pending one;
//     "" answers no matches at once.
//   - read_details, read_span, read_shapes and read_search are the workers' functions: any thread, on the caller's
//     connection (tests, the command line).
//
//   for (const auto& it : m.timeline().window(thread_id, 0, m.end_ns(), 3 * ns_per_px)) draw(it);
//   if (auto d = m.timeline().details(id)) show(*d);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/query/trace_db.h"
#include "traces/records.h"
#include "viewer/async_cache.h"
#include "viewer/overview.h"
#include "viewer/worker.h"

namespace gb::viewer {

using gb::trace::Id;
class TraceModel;

// One box of the timeline: a span (count == 1) or a folded run of `count` short spans.
struct TimelineItem {
  std::int64_t start_ns = 0, end_ns = 0, count = 1;
  int depth = 0;  // 0 = a root of its track
  gb::trace::SpanRecord span;  // the span, or the first of the folded run
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

using Shapes = std::pair<std::string, std::string>;  // op_details {input_shapes, dtypes}

class TimelineModel {
 public:
  TimelineModel(const TraceModel& model, Worker& windows, Worker& queries, std::int64_t direct_rows)
      : model_(model), windows_(windows), queries_(queries), direct_rows_(direct_rows) {}

  const std::vector<TimelineItem>& window(Id thread_id, std::int64_t t0, std::int64_t t1, std::int64_t fold_below_ns);
  const std::vector<TimelineItem>& exact(Id thread_id, std::int64_t t0, std::int64_t t1, std::int64_t fold_below_ns);
  bool pending(Id thread_id) const;  // the last answer is a stand-in; the exact one is being read
  bool partial(Id thread_id) const;  // the last answer came from an overview still being built
  std::int64_t window_queries() const { return window_queries_; }      // Reader answers so far (cache misses)
  std::int64_t overview_queries() const { return overview_queries_; }  // answers from the overview so far
  Overview& overview() { return overview_; }
  const Overview& overview() const { return overview_; }

  std::shared_ptr<const SpanDetails> details(Id span_id);
  bool details_pending(Id span_id) const { return details_.pending(span_id); }
  std::shared_ptr<const gb::trace::SpanRecord> span(Id span_id);
  bool span_pending(Id span_id) const { return records_.pending(span_id); }
  std::shared_ptr<const Shapes> shapes(Id span_id);

  const SpanSearch* search(const std::string& text, std::size_t cap = 100'000, int bins = 40);
  bool search_pending() const { return search_.pending(); }

  std::optional<SpanDetails> read_details(const gb::query::TraceDb& db, Id span_id) const;  // any thread
  static std::optional<gb::trace::SpanRecord> read_span(const gb::query::TraceDb& db, Id span_id);
  Shapes read_shapes(const gb::query::TraceDb& db, Id span_id) const;
  static SpanSearch read_search(const gb::query::TraceDb& db, const std::string& text, std::size_t cap, int bins);

 private:
  struct WindowJob;  // a window's Reader work on the window worker (timeline_model.cpp)
  struct Cache {
    std::int64_t q0 = 0, q1 = -1, fold = -1;
    bool partial = false;  // from an overview still being built: asked again next time
    bool many = false;     // [q0, q1] holds more than direct_rows spans: answered from the overview
    std::vector<TimelineItem> items;
    std::shared_ptr<WindowJob> job;  // the exact answer being read; items are a stand-in meanwhile
  };
  void post_window(Id thread_id, Cache& c, std::int64_t q0, std::int64_t q1, std::int64_t fold, bool direct);
  void apply_window(Id thread_id, Cache& c);
  void from_overview(Id thread_id, Cache& c);

  const TraceModel& model_;  // names, module paths, tracks: read-only after open
  Worker& windows_;          // windows, span rows and shapes (a long search never delays them)
  Worker& queries_;          // details and searches
  std::int64_t direct_rows_;
  std::int64_t window_queries_ = 0, overview_queries_ = 0;
  std::unordered_map<Id, Cache> cache_;
  Overview overview_;
  AsyncCache<Id, SpanDetails> details_;
  AsyncCache<Id, gb::trace::SpanRecord> records_;
  AsyncCache<Id, Shapes> shapes_;
  AsyncSlot<std::tuple<std::string, std::size_t, int>, SpanSearch> search_;
};

}  // namespace gb::viewer
