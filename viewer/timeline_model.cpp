// viewer/timeline_model.cpp — TimelineModel (contract in timeline_model.h): windows read on the window worker or
// answered from the overview, and a span's row, shapes and details. The search is in span_search.cpp.
#include "viewer/timeline_model.h"

#include <algorithm>
#include <bit>
#include <tuple>

#include "traces/reader.h"
#include "viewer/trace_model.h"

namespace gb::viewer {

using namespace gb::trace;

struct TimelineModel::WindowJob {
  std::int64_t q0 = 0, q1 = -1, fold = 0, direct_rows = 0;
  bool direct = false;  // read the spans whatever their count (a thread without an overview)
  bool many = false;    // the answer: more than direct_rows spans, use the overview
  std::vector<TimelineItem> items;
  std::atomic<bool> done{false}, cancelled{false};
};

namespace {
int level_of(std::int64_t fold) {
  return fold > 0 ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(fold))) - 1 : 0;
}
}  // namespace

void TimelineModel::post_window(Id thread_id, Cache& c, std::int64_t q0, std::int64_t q1, std::int64_t fold,
                             bool direct) {
  if (c.job) c.job->cancelled = true;
  auto job = std::make_shared<WindowJob>();
  job->q0 = q0, job->q1 = q1, job->fold = fold, job->direct_rows = direct_rows_, job->direct = direct;
  c.job = job;
  windows_.post([job, thread_id](const gb::query::TraceDb* db) {
    if (!job->cancelled && db) {
      try {
        const Reader& r = db->reader();
        job->many = !job->direct && r.span_count(thread_id, job->q0, job->q1) > job->direct_rows;
        std::vector<std::int64_t> ends;  // ends of the enclosing items
        if (!job->many)
          for (SpanItem& s : r.spans(thread_id, job->q0, job->q1, job->fold)) {
            while (!ends.empty() && ends.back() <= s.start_ns) ends.pop_back();
            job->items.push_back({s.start_ns, s.end_ns, s.count, static_cast<int>(ends.size()), std::move(s.span)});
            ends.push_back(s.end_ns);
          }
      } catch (const std::exception&) {  // the file changed under us: an empty window
      }
    }
    job->done.store(true, std::memory_order_release);
  });
}

void TimelineModel::from_overview(Id thread_id, Cache& c) {
  c.items.clear();
  if (overview_.levels(thread_id)) {
    c.partial = !overview_.thread_done(thread_id);
    overview_.query(thread_id, level_of(c.fold), c.q0, c.q1, c.items);
    ++overview_queries_;
  } else {
    c.partial = true;  // the overview has not reached this thread yet: nothing rather than a long scan
  }
}

void TimelineModel::apply_window(Id thread_id, Cache& c) {
  const std::shared_ptr<WindowJob> job = std::move(c.job);
  c.q0 = job->q0, c.q1 = job->q1, c.fold = job->fold;
  c.many = job->many;
  if (!job->many) {
    ++window_queries_;
    c.items = std::move(job->items);
    c.partial = false;
    return;
  }
  if (!overview_.levels(thread_id) && overview_.ready()) {  // a thread the overview skipped: read it after all
    post_window(thread_id, c, job->q0, job->q1, job->fold, /*direct=*/true);
    return;
  }
  from_overview(thread_id, c);
}

const std::vector<TimelineItem>& TimelineModel::window(Id thread_id, std::int64_t t0, std::int64_t t1,
                                                      std::int64_t fold_below_ns) {
  const std::int64_t fold = fold_below_ns <= 0 ? 0 : static_cast<std::int64_t>(std::bit_floor(
                                                         static_cast<std::uint64_t>(fold_below_ns)));
  Cache& c = cache_[thread_id];
  if (c.job && c.job->done.load(std::memory_order_acquire)) apply_window(thread_id, c);
  if (c.job) {  // a stand-in is shown; keep it while the pending window still covers the view
    if (c.job->fold == fold && c.job->q0 <= t0 && t1 <= c.job->q1) return c.items;
  } else if (c.fold == fold && c.q0 <= t0 && t1 <= c.q1) {
    if (!c.partial) return c.items;
    if (c.many) {  // the overview is still being built: ask it again (memory only)
      from_overview(thread_id, c);
      return c.items;
    }
  }
  const std::int64_t w = std::max<std::int64_t>(1, t1 - t0);
  post_window(thread_id, c, t0 - w / 2, t1 + w / 2, fold, /*direct=*/false);
  if (overview_.levels(thread_id)) {  // the stand-in: the overview at the nearest built level
    c.items.clear();
    overview_.query(thread_id, level_of(fold), c.job->q0, c.job->q1, c.items);
  }  // else the previous answer stays (in ns: it rescales with the view)
  return c.items;
}

const std::vector<TimelineItem>& TimelineModel::exact(Id thread_id, std::int64_t t0, std::int64_t t1,
                                                            std::int64_t fold_below_ns) {
  window(thread_id, t0, t1, fold_below_ns);
  for (int i = 0; i < 3 && pending(thread_id); ++i) {  // at most: count, then a direct re-read
    windows_.wait_idle();
    window(thread_id, t0, t1, fold_below_ns);
  }
  return cache_[thread_id].items;
}

bool TimelineModel::pending(Id thread_id) const {
  auto it = cache_.find(thread_id);
  return it != cache_.end() && it->second.job != nullptr;
}

bool TimelineModel::partial(Id thread_id) const {
  auto it = cache_.find(thread_id);
  return it != cache_.end() && it->second.partial;
}

namespace {
SpanRecord span_row(const gb::query::Row& row) {  // the columns of kSpanCols
  return SpanRecord{.id = row.i64(8),
                    .kind = static_cast<SpanKind>(row.i64(0)),
                    .name_id = row.i64(1),
                    .thread_id = span_thread(row.i64(8)),
                    .start_ns = row.i64(2),
                    .end_ns = row.i64(3),
                    .step = row.opt_i64(4),
                    .parent_id = row.opt_i64(5),
                    .seq = row.opt_i64(6),
                    .module_id = row.opt_i64(7)};
}
const std::string kSpanCols = "SELECT kind, name_id, start_ns, end_ns, step, parent_id, seq, module_id, id FROM spans ";
}  // namespace

std::optional<SpanRecord> TimelineModel::read_span(const gb::query::TraceDb& db, Id id) {
  std::optional<SpanRecord> out;
  db.each(kSpanCols + "WHERE id = ?1", {id}, [&](const gb::query::Row& row) { out = span_row(row); });
  return out;
}

Shapes TimelineModel::read_shapes(const gb::query::TraceDb& db, Id span_id) const {
  Shapes r;
  db.each("SELECT input_shapes, dtypes FROM op_details WHERE span_id = ?1", {span_id}, [&](const gb::query::Row& row) {
    if (auto s = row.opt_i64(0)) r.first = std::string(model_.string(*s));
    if (auto s = row.opt_i64(1)) r.second = std::string(model_.string(*s));
  });
  return r;
}

std::shared_ptr<const SpanDetails> TimelineModel::details(Id id) {
  return details_.get(id, queries_, [this, id](const gb::query::TraceDb& db) { return read_details(db, id); });
}

std::shared_ptr<const SpanRecord> TimelineModel::span(Id id) {
  return records_.get(id, windows_, [id](const gb::query::TraceDb& db) { return read_span(db, id); });
}

std::shared_ptr<const Shapes> TimelineModel::shapes(Id id) {
  return shapes_.get(id, windows_, [this, id](const gb::query::TraceDb& db) { return std::optional(read_shapes(db, id)); });
}

std::optional<SpanDetails> TimelineModel::read_details(const gb::query::TraceDb& db, Id id) const {
  std::optional<SpanDetails> d;
  if (std::optional<SpanRecord> s = read_span(db, id)) d.emplace().span = *s;
  else return d;
  d->name = std::string(model_.string(d->span.name_id));
  d->module = model_.module_path(d->span.module_id);
  for (const Track& t : model_.tracks())
    if (t.thread_id == d->span.thread_id) d->thread = t.name;
  std::tie(d->shapes, d->dtypes) = read_shapes(db, id);
  // Forward op <-> backward node, through the autograd sequence number.
  if (d->span.seq && (d->span.kind == SpanKind::op || d->span.kind == SpanKind::backward_node)) {
    const auto other = static_cast<std::int64_t>(d->span.kind == SpanKind::op ? SpanKind::backward_node : SpanKind::op);
    db.each(kSpanCols + "WHERE kind = ?1 AND seq = ?2 LIMIT 1", {other, *d->span.seq},
              [&](const gb::query::Row& row) { d->linked = span_row(row); });
    if (d->linked) d->linked_name = std::string(model_.string(d->linked->name_id));
  }
  std::int64_t child_ns = 0;
  for (const SpanItem& s : db.reader().spans(d->span.thread_id, d->span.start_ns, d->span.end_ns))
    if (s.span.parent_id == id) ++d->children, child_ns += s.end_ns - s.start_ns;
  d->self_ns = d->span.end_ns - d->span.start_ns - child_ns;
  db.each("SELECT count(*), coalesce(sum(size), 0) FROM memory_events WHERE span_id = ?1 AND action = 0", {id},
            [&](const gb::query::Row& row) { d->allocations = row.i64(0), d->allocated_bytes = row.i64(1); });
  if (model_.has_kernels())
    db.each("SELECT k.span_id, s.name_id, s.start_ns, s.end_ns - s.start_ns, k.grid, k.block, k.stream FROM kernels k "
              "JOIN spans s ON s.id = k.span_id WHERE k.launch_span_id = ?1 ORDER BY s.start_ns, k.span_id",
              {id}, [&](const gb::query::Row& row) {
                d->kernels.push_back(LaunchedKernel{row.i64(0), std::string(model_.string(row.i64(1))), std::string(row.text(4)),
                                                    std::string(row.text(5)), row.i64(2), row.i64(3), row.i64(6)});
              });
  return d;
}

}  // namespace gb::viewer
