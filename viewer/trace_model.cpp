// viewer/trace_model.cpp — the viewer's queries and aggregates (contract in trace_model.h).
#include "viewer/trace_model.h"

#include <algorithm>
#include <tuple>
#include <cctype>
#include <bit>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "traces/reader.h"

namespace gb::viewer {

using namespace gb::trace;

namespace {

int role_order(ThreadRole r) {
  switch (r) {
    case ThreadRole::main: return 0;
    case ThreadRole::dataloader_worker: return 1;
    case ThreadRole::pin_memory: return 2;
    case ThreadRole::cuda_stream: return 3;
    case ThreadRole::other: return 4;
    case ThreadRole::collector: return 5;
  }
  return 6;
}

}  // namespace

TraceModel::TraceModel(const std::string& path, ModelOptions options)
    : db_(std::make_unique<gb::query::TraceDb>(path)), options_(options), queries_(std::make_unique<Worker>(path)),
      windows_(std::make_unique<Worker>(path)), compute_(std::make_unique<Worker>("")) {
  const Reader& r = db_->reader();
  db_->each("SELECT id, text FROM strings",
            [&](const gb::query::Row& row) { strings_.emplace(row.i64(0), std::string(row.text(1))); });
  db_->each("SELECT key, value FROM meta",
            [&](const gb::query::Row& row) { meta_.emplace(std::string(row.text(0)), std::string(row.text(1))); });
  for (auto& m : r.all<ModuleRecord>()) modules_.emplace(m.id, m);
  params_ = r.all<ParamRecord>();
  std::sort(params_.begin(), params_.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  steps_ = r.all<StepRecord>();
  std::sort(steps_.begin(), steps_.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  if (steps_.empty()) {  // a trace with step spans but no steps table
    db_->each("SELECT step, start_ns, end_ns FROM spans WHERE kind = ?1 AND step IS NOT NULL ORDER BY start_ns",
              {static_cast<std::int64_t>(SpanKind::step)}, [&](const gb::query::Row& row) {
                steps_.push_back(StepRecord{row.i64(0), row.i64(1), row.i64(2), {}, {}, {}, false});
              });
  }

  begin_ns_ = std::numeric_limits<std::int64_t>::max();
  end_ns_ = std::numeric_limits<std::int64_t>::min();
  auto extend = [&](std::int64_t a, std::int64_t b) {
    begin_ns_ = std::min(begin_ns_, a);
    end_ns_ = std::max(end_ns_, b);
  };
  for (const StepRecord& s : steps_) extend(s.start_ns, s.end_ns);

  // Tracks: a thread's spans are the id range [span_id(t, 0), span_id(t + 1, 0)); its first span starts first and
  // the root above its last span ends last (spans of a thread nest).
  std::vector<Overview::ThreadRange> ranges;
  std::vector<ThreadRecord> threads = r.all<ThreadRecord>();
  std::stable_sort(threads.begin(), threads.end(), [](const ThreadRecord& a, const ThreadRecord& b) {
    return role_order(a.role) != role_order(b.role) ? role_order(a.role) < role_order(b.role) : a.id < b.id;
  });
  for (const ThreadRecord& t : threads) {
    const Id lo = span_id(t.id, 0), hi = span_id(t.id + 1, 0);
    std::int64_t first = 0, last_id = 0, n = 0;
    db_->each("SELECT id, start_ns FROM spans WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 1", {lo, hi},
              [&](const gb::query::Row& row) { first = row.i64(1), n = 1; });
    if (n == 0) continue;
    db_->each("SELECT id FROM spans WHERE id >= ?1 AND id < ?2 ORDER BY id DESC LIMIT 1", {lo, hi},
              [&](const gb::query::Row& row) { last_id = row.i64(0); });
    std::int64_t end = first;
    for (Id cur = last_id; cur != 0;) {  // walk up to the root
      Id parent = 0;
      db_->each("SELECT end_ns, parent_id FROM spans WHERE id = ?1", {cur}, [&](const gb::query::Row& row) {
        end = std::max(end, row.i64(0));
        parent = row.is_null(1) ? 0 : row.i64(1);
      });
      cur = parent;
    }
    extend(first, end);
    tracks_.push_back(Track{t.id, t.name, t.role, last_id - lo});
    ranges.push_back(Overview::ThreadRange{t.id, lo + 1, last_id, first, end});
    span_count_ += last_id - lo;
  }

  std::unordered_map<Id, std::size_t> series;
  for (const CounterRecord& c : r.all<CounterRecord>()) {
    auto [it, fresh] = series.emplace(c.name_id, counters_.size());
    if (fresh) counters_.push_back(CounterSeries{std::string(string(c.name_id)), {}, {}});
    counters_[it->second].t_ns.push_back(c.t_ns);
    counters_[it->second].values.push_back(c.value);
  }

  for (AnomalyRecord& a : r.anomalies()) {
    AnomalyRow row{std::move(a), {}, {}, {}};
    row.module = module_path(row.record.module_id);
    if (row.record.param_id) {
      for (const ParamRecord& p : params_)
        if (p.id == *row.record.param_id) row.param = module_path(p.module_id) + "." + p.name;
    }
    if (row.record.span_id)
      row.span = std::string(string(db_->scalar("SELECT name_id FROM spans WHERE id = ?1", {*row.record.span_id})));
    anomalies_.push_back(std::move(row));
  }

  // Memory events are in time order by id: the first and the last give the extent without reading the rest.
  db_->each("SELECT (SELECT t_ns FROM memory_events ORDER BY id LIMIT 1), (SELECT t_ns FROM memory_events ORDER BY id "
            "DESC LIMIT 1)",
            [&](const gb::query::Row& row) {
              if (!row.is_null(0)) extend(row.i64(0), row.i64(1));
            });
  if (begin_ns_ > end_ns_) begin_ns_ = end_ns_ = 0;  // an empty trace
  ooms_ = r.all<OomReportRecord>();
  has_kernels_ = db_->scalar("SELECT EXISTS (SELECT 1 FROM kernels)") != 0;
  std::vector<std::int64_t> graph_steps;
  db_->each("SELECT DISTINCT step FROM graph_nodes ORDER BY step", [&](const gb::query::Row& row) { graph_steps.push_back(row.i64(0)); });
  graph_.set_steps(std::move(graph_steps));
  if (options_.background) loader_ = std::thread([this, ranges = std::move(ranges)]() mutable { load(std::move(ranges)); });
  else load(std::move(ranges));
}

TraceModel::~TraceModel() {
  queries_->interrupt();  // a long search or comparison stops now (the Worker's destructor interrupts again)
  windows_->interrupt();
  stop_ = true;
  overview_.stop();
  if (loader_.joinable()) loader_.join();
  // The workers go first (each drops its queue, interrupts and joins its running job): the domain models declared
  // after them (compare_, graph_) are destroyed before them, and a running job may use its model.
  queries_.reset();
  windows_.reset();
  compute_.reset();
}

void TraceModel::load(std::vector<Overview::ThreadRange> ranges) {
  std::unique_ptr<gb::query::TraceDb> db;
  try {
    db = std::make_unique<gb::query::TraceDb>(path());
    load_memory(*db);
  } catch (...) {  // stopped, or the file changed under us: the panels show what they have
  }
  memory_ready_.store(true, std::memory_order_release);
  if (stop_) return;
  overview_.start(path(), std::move(ranges), options_.direct_rows, /*background=*/false);
  if (stop_) return;
  try {
    if (db) heatmap_ = load_heatmap(*db);
  } catch (const std::exception&) {
  }
  heatmap_ready_.store(true, std::memory_order_release);
  if (stop_) return;
  try {
    if (db) {
      std::unordered_map<std::int64_t, std::int64_t> wait;
      db->each("SELECT step, sum(dur_ns) FROM spans WHERE kind = ?1 AND step IS NOT NULL AND "
               "name_id IN (SELECT id FROM strings WHERE text = 'wait') GROUP BY step",
               {static_cast<std::int64_t>(SpanKind::dataloader)},
               [&](const gb::query::Row& row) { wait[row.i64(0)] = row.i64(1); });
      std::vector<StepWait> v;
      for (const StepRecord& s : steps_) v.push_back(StepWait{s.step, s.start_ns, s.end_ns, wait[s.step]});
      waits_ = std::move(v);
      if (!stop_) dl_summary_ = gb::query::dataloader_summary(*db);
    }
  } catch (const std::exception&) {
  }
  dataloader_ready_.store(true, std::memory_order_release);
  if (stop_) return;
  try {
    if (db) {
      FlameBuilder fb;  // streamed in id order: memory is the stacks of open spans and the path nodes
      db->each("SELECT id, parent_id, kind, name_id, end_ns - start_ns FROM spans WHERE kind IN (?1, ?2) ORDER BY id",
               {static_cast<std::int64_t>(SpanKind::module), static_cast<std::int64_t>(SpanKind::op)},
               [&](const gb::query::Row& row) {
                 fb.add(FlameSpan{row.i64(0), row.opt_i64(1), static_cast<SpanKind>(row.i64(2)), string(row.i64(3)),
                                  row.i64(4)});
               });
      if (!stop_) flame_ = fb.finish();
    }
  } catch (const std::exception&) {
  }
  flame_ready_.store(true, std::memory_order_release);
  if (stop_) return;
  try {
    if (db) {
      std::map<std::pair<int, std::string>, std::pair<std::int64_t, std::string>> best;
      db->each("SELECT s.kind, s.name_id, d.input_shapes, count(*) FROM op_details d JOIN spans s ON s.id = d.span_id "
               "WHERE d.input_shapes IS NOT NULL GROUP BY s.kind, s.name_id, d.input_shapes",
               [&](const gb::query::Row& row) {
                 auto& b = best[{static_cast<int>(row.i64(0)), std::string(string(row.i64(1)))}];
                 std::string text(string(row.i64(2)));
                 const std::int64_t n = row.i64(3);
                 if (n > b.first || (n == b.first && text < b.second)) b = {n, std::move(text)};
               });
      for (auto& [k, v] : best) op_shapes_.emplace(k, std::move(v.second));
    }
  } catch (const std::exception&) {
  }
  shapes_ready_.store(true, std::memory_order_release);
}

std::pair<std::string, std::string> TraceModel::read_shapes(const gb::query::TraceDb& db, Id span_id) const {
  std::pair<std::string, std::string> r;
  db.each("SELECT input_shapes, dtypes FROM op_details WHERE span_id = ?1", {span_id}, [&](const gb::query::Row& row) {
    if (auto s = row.opt_i64(0)) r.first = std::string(string(*s));
    if (auto s = row.opt_i64(1)) r.second = std::string(string(*s));
  });
  return r;
}

std::pair<std::string, std::string> TraceModel::span_shapes(Id span_id) const { return read_shapes(*db_, span_id); }

std::shared_ptr<const std::pair<std::string, std::string>> TraceModel::span_shapes_async(Id span_id) {
  return shapes_.get(span_id, *windows_, [this, span_id](const gb::query::TraceDb& db) {
    return std::optional(read_shapes(db, span_id));
  });
}

std::string TraceModel::op_shapes(SpanKind kind, const std::string& name) const {
  if (!shapes_ready_.load(std::memory_order_acquire)) return {};
  auto it = op_shapes_.find({static_cast<int>(kind), name});
  return it == op_shapes_.end() ? std::string{} : it->second;
}

const Flame& TraceModel::flame() const {
  static const Flame kEmpty;
  return flame_ready_.load(std::memory_order_acquire) && flame_ ? *flame_ : kEmpty;
}

Flame build_flame(const std::vector<FlameSpan>& spans) {
  FlameBuilder b;
  for (const FlameSpan& s : spans) b.add(s);
  return b.finish();
}

void FlameBuilder::add(const FlameSpan& s) {
  if (s.kind != SpanKind::module && s.kind != SpanKind::op) return;
  // Spans of a thread come in begin order: the parent, when it counts, is on the thread's stack of open module/op
  // spans; the entries above it have ended.
  auto& stack = stacks_[gb::trace::span_thread(s.id)];
  std::ptrdiff_t at = -1;
  if (s.parent)
    for (std::ptrdiff_t k = static_cast<std::ptrdiff_t>(stack.size()) - 1; k >= 0; --k)
      if (stack[static_cast<std::size_t>(k)].id == *s.parent) { at = k; break; }
  stack.resize(static_cast<std::size_t>(at + 1));
  int parent = -2;  // -2: not under a module span
  if (s.kind == SpanKind::module && (at < 0 || stack.back().kind != SpanKind::module)) parent = -1;
  else if (at >= 0) parent = stack.back().node;
  if (parent == -2) return;
  auto [it, fresh] = intern_.emplace(std::make_pair(parent, std::string(s.name)), static_cast<int>(nodes_.size()));
  if (fresh) {
    nodes_.push_back(Node{parent, std::string(s.name), s.kind, 0, 0, {}});
    if (parent >= 0) nodes_[static_cast<std::size_t>(parent)].children.push_back(it->second);
  }
  Node& n = nodes_[static_cast<std::size_t>(it->second)];
  n.total += s.dur_ns, ++n.calls;
  stack.push_back(Open{s.id, s.kind, it->second});
}

Flame FlameBuilder::finish() {
  std::vector<Node>& nodes = nodes_;
  Flame f;
  std::vector<int> roots;
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].parent == -1) roots.push_back(static_cast<int>(n)), f.total_ns += nodes[n].total;
  auto by_name = [&](int a, int b) { return nodes[static_cast<std::size_t>(a)].name < nodes[static_cast<std::size_t>(b)].name; };
  const double total = static_cast<double>(std::max<std::int64_t>(1, f.total_ns));
  auto emit = [&](auto&& self, std::vector<int> ids, int parent, std::string prefix, int depth, double x) -> void {
    std::sort(ids.begin(), ids.end(), by_name);
    for (int id : ids) {
      const Node& n = nodes[static_cast<std::size_t>(id)];
      FlameNode out{n.name, prefix.empty() ? n.name : prefix + "/" + n.name, depth, parent, n.kind, n.total, n.calls,
                    x, x + static_cast<double>(n.total) / total};
      x = out.x1;
      f.depth = std::max(f.depth, depth + 1);
      const int me = static_cast<int>(f.nodes.size());
      f.nodes.push_back(out);
      self(self, n.children, me, f.nodes.back().path, depth + 1, f.nodes.back().x0);
    }
  };
  emit(emit, roots, -1, "", 0, 0.0);
  return f;
}

void TraceModel::wait_loaded() {
  if (loader_.joinable()) loader_.join();
  wait_queries();
}

std::string TraceModel::loading() const {
  std::string s;
  auto add = [&](const std::string& what) { s += (s.empty() ? "" : ", ") + what; };
  if (memory_loading()) add("memory events");
  if (!overview_.ready()) add("overview " + std::to_string(static_cast<int>(overview_.progress() * 100)) + "%");
  if (gradients_loading()) add("gradient statistics");
  if (dataloader_loading()) add("data-loader summary");
  return s;
}

std::string_view TraceModel::string(Id id) const {
  auto it = strings_.find(id);
  return it == strings_.end() ? std::string_view{} : std::string_view(it->second);
}

std::string TraceModel::module_path(OptId module) const {
  if (!module) return "";
  auto it = modules_.find(*module);
  if (it == modules_.end()) return "module " + std::to_string(*module);
  return it->second.path.empty() ? "(root)" : it->second.path;
}

std::string TraceModel::kind_name(SpanKind k) const {
  auto names = gb::query::span_kind_names();
  auto i = static_cast<std::size_t>(k);
  return i < names.size() ? std::string(names[i]) : "kind " + std::to_string(i);
}

std::optional<StepRecord> TraceModel::step(std::int64_t s) const {
  for (const StepRecord& r : steps_)
    if (r.step == s) return r;
  return std::nullopt;
}

std::string track_label(const Track& t) {
  if (t.role != gb::trace::ThreadRole::cuda_stream) return t.name;
  std::size_t i = t.name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(t.name[i - 1]))) --i;
  return "cuda stream " + (i < t.name.size() ? t.name.substr(i) : std::to_string(t.thread_id));
}

// --- timeline ------------------------------------------------------------------------------------------------

struct TraceModel::WindowJob {
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

void TraceModel::post_window(Id thread_id, TimelineCache& c, std::int64_t q0, std::int64_t q1, std::int64_t fold,
                             bool direct) {
  if (c.job) c.job->cancelled = true;
  auto job = std::make_shared<WindowJob>();
  job->q0 = q0, job->q1 = q1, job->fold = fold, job->direct_rows = options_.direct_rows, job->direct = direct;
  c.job = job;
  windows_->post([job, thread_id](const gb::query::TraceDb* db) {
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

void TraceModel::from_overview(Id thread_id, TimelineCache& c) {
  c.items.clear();
  if (overview_.levels(thread_id)) {
    c.partial = !overview_.thread_done(thread_id);
    overview_.query(thread_id, level_of(c.fold), c.q0, c.q1, c.items);
    ++overview_queries_;
  } else {
    c.partial = true;  // the overview has not reached this thread yet: nothing rather than a long scan
  }
}

void TraceModel::apply_window(Id thread_id, TimelineCache& c) {
  const std::shared_ptr<WindowJob> job = std::move(c.job);
  c.q0 = job->q0, c.q1 = job->q1, c.fold = job->fold;
  c.many = job->many;
  if (!job->many) {
    ++timeline_queries_;
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

const std::vector<TimelineItem>& TraceModel::timeline(Id thread_id, std::int64_t t0, std::int64_t t1,
                                                      std::int64_t fold_below_ns) {
  const std::int64_t fold = fold_below_ns <= 0 ? 0 : static_cast<std::int64_t>(std::bit_floor(
                                                         static_cast<std::uint64_t>(fold_below_ns)));
  TimelineCache& c = timeline_cache_[thread_id];
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

const std::vector<TimelineItem>& TraceModel::timeline_exact(Id thread_id, std::int64_t t0, std::int64_t t1,
                                                            std::int64_t fold_below_ns) {
  timeline(thread_id, t0, t1, fold_below_ns);
  for (int i = 0; i < 3 && timeline_pending(thread_id); ++i) {  // at most: count, then a direct re-read
    windows_->wait_idle();
    timeline(thread_id, t0, t1, fold_below_ns);
  }
  return timeline_cache_[thread_id].items;
}

bool TraceModel::timeline_pending(Id thread_id) const {
  auto it = timeline_cache_.find(thread_id);
  return it != timeline_cache_.end() && it->second.job != nullptr;
}

bool TraceModel::timeline_partial(Id thread_id) const {
  auto it = timeline_cache_.find(thread_id);
  return it != timeline_cache_.end() && it->second.partial;
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
std::optional<SpanRecord> read_span(const gb::query::TraceDb& db, Id id) {
  std::optional<SpanRecord> out;
  db.each(kSpanCols + "WHERE id = ?1", {id}, [&](const gb::query::Row& row) { out = span_row(row); });
  return out;
}
}  // namespace

std::optional<SpanRecord> TraceModel::span_record(Id id) const { return read_span(*db_, id); }

std::optional<SpanDetails> TraceModel::details(Id id) const { return read_details(*db_, id); }

std::shared_ptr<const SpanDetails> TraceModel::details_async(Id id) {
  return details_.get(id, *queries_, [this, id](const gb::query::TraceDb& db) { return read_details(db, id); });
}

std::shared_ptr<const SpanRecord> TraceModel::span_record_async(Id id) {
  return records_.get(id, *windows_, [id](const gb::query::TraceDb& db) { return read_span(db, id); });
}

std::optional<SpanDetails> TraceModel::read_details(const gb::query::TraceDb& db, Id id) const {
  std::optional<SpanDetails> d;
  if (std::optional<SpanRecord> s = read_span(db, id)) d.emplace().span = *s;
  else return d;
  d->name = std::string(string(d->span.name_id));
  d->module = module_path(d->span.module_id);
  for (const Track& t : tracks_)
    if (t.thread_id == d->span.thread_id) d->thread = t.name;
  std::tie(d->shapes, d->dtypes) = read_shapes(db, id);
  // Forward op <-> backward node, through the autograd sequence number.
  if (d->span.seq && (d->span.kind == SpanKind::op || d->span.kind == SpanKind::backward_node)) {
    const auto other = static_cast<std::int64_t>(d->span.kind == SpanKind::op ? SpanKind::backward_node : SpanKind::op);
    db.each(kSpanCols + "WHERE kind = ?1 AND seq = ?2 LIMIT 1", {other, *d->span.seq},
              [&](const gb::query::Row& row) { d->linked = span_row(row); });
    if (d->linked) d->linked_name = std::string(string(d->linked->name_id));
  }
  std::int64_t child_ns = 0;
  for (const SpanItem& s : db.reader().spans(d->span.thread_id, d->span.start_ns, d->span.end_ns))
    if (s.span.parent_id == id) ++d->children, child_ns += s.end_ns - s.start_ns;
  d->self_ns = d->span.end_ns - d->span.start_ns - child_ns;
  db.each("SELECT count(*), coalesce(sum(size), 0) FROM memory_events WHERE span_id = ?1 AND action = 0", {id},
            [&](const gb::query::Row& row) { d->allocations = row.i64(0), d->allocated_bytes = row.i64(1); });
  if (has_kernels_)
    db.each("SELECT k.span_id, s.name_id, s.start_ns, s.end_ns - s.start_ns, k.grid, k.block, k.stream FROM kernels k "
              "JOIN spans s ON s.id = k.span_id WHERE k.launch_span_id = ?1 ORDER BY s.start_ns, k.span_id",
              {id}, [&](const gb::query::Row& row) {
                d->kernels.push_back(LaunchedKernel{row.i64(0), std::string(string(row.i64(1))), std::string(row.text(4)),
                                                    std::string(row.text(5)), row.i64(2), row.i64(3), row.i64(6)});
              });
  return d;
}

// --- memory (the replay and its queries: memory_replay.cpp) -------------------------------------------------

std::vector<gb::trace::SpanKind> TraceModel::legend_kinds() const {
  using gb::trace::SpanKind;
  std::vector<SpanKind> out{SpanKind::op,        SpanKind::backward_node, SpanKind::backward_phase, SpanKind::module,
                            SpanKind::optimizer, SpanKind::dataloader,    SpanKind::step};
  const bool cuda = has_kernels_ || std::any_of(tracks_.begin(), tracks_.end(), [](const Track& t) {
                      return t.role == gb::trace::ThreadRole::cuda_stream;
                    });
  if (cuda) out.insert(out.end(), {SpanKind::cuda_kernel, SpanKind::cuda_memcpy, SpanKind::cuda_memset, SpanKind::cuda_api});
  return out;
}

template <class T, class F>
const T* TraceModel::async_get(Slot<T>& s, Key key, F compute, Worker* worker) {
  if (s.job && s.job->done.load(std::memory_order_acquire)) {
    s.last = std::move(s.job->result);
    s.last_key = s.job->key;
    s.job.reset();
  }
  if (s.last && s.last_key == key) return &*s.last;
  if (!s.job || s.job->key != key) {
    if (s.job) s.job->cancelled = true;  // superseded: skipped if still queued
    auto job = std::make_shared<typename Slot<T>::Job>();
    job->key = key;
    s.job = job;
    (worker ? worker : compute_.get())->post([job, compute](const gb::query::TraceDb* db) {
      try {
        if (!job->cancelled.load()) job->result = compute(db);
      } catch (const std::exception&) {  // interrupted (the model closes) or unreadable: no answer
      }
      job->done.store(true, std::memory_order_release);
    });
  }
  return s.last ? &*s.last : nullptr;
}

const std::vector<MemoryColumn>* TraceModel::memory_columns_async(std::int64_t t0, std::int64_t t1, int columns) {
  if (memory_loading()) return nullptr;
  return async_get(mem_cols_slot_, Key{t0, t1, columns}, [this, t0, t1, columns](const gb::query::TraceDb*) { return memory_columns(t0, t1, columns); });
}

const SegmentMap* TraceModel::segment_map_async(std::int64_t t) {
  if (memory_loading()) return nullptr;
  return async_get(seg_slot_, Key{t, 0, 0}, [this, t](const gb::query::TraceDb*) { return replay_segments(t); });
}

const GradColumns* TraceModel::grad_columns_async(int columns) {
  if (gradients_loading()) return nullptr;
  columns = std::max(1, std::min<int>(columns, static_cast<int>(grad_heatmap().cols())));
  return async_get(grad_slot_, Key{columns, 0, 0}, [this, columns](const gb::query::TraceDb*) { return reduce_grad(columns); });
}

const std::vector<LiveBlock>* TraceModel::largest_live_async(std::int64_t t, std::size_t n) {
  if (memory_loading()) return nullptr;
  return async_get(
      live_slot_, Key{t, static_cast<std::int64_t>(n), 0},
      [this, t, n](const gb::query::TraceDb* db) { return db ? replay_live(t, n, *db) : std::vector<LiveBlock>{}; },
      queries_.get());
}

// --- autograd graph (layout in graph_layout.cpp) ---------------------------------------------------------------

// --- ops, gradients, data loader --------------------------------------------------------------------------------

const gb::query::OpTable& TraceModel::op_table(SpanKind kind) {
  static const gb::query::OpTable kEmpty;
  if (!overview_.ready()) return kEmpty;
  auto it = op_tables_.find(static_cast<int>(kind));
  if (it != op_tables_.end()) return it->second;
  if (has_kernels_) {  // the CUDA columns need SQL over kernels: on the query worker
    auto t = cuda_op_tables_.get(static_cast<int>(kind), *queries_, [kind](const gb::query::TraceDb& db) {
      return std::optional<gb::query::OpTable>(gb::query::op_table(db, kind));
    });
    return t ? op_tables_.emplace(static_cast<int>(kind), *t).first->second : kEmpty;
  }
  gb::query::OpTable t;
  t.kind = kind;
  for (const auto& [key, a] : overview_.op_aggregates()) {
    if (key.first != static_cast<int>(kind)) continue;
    t.rows.push_back(gb::query::OpStats{std::string(string(key.second)), a.calls, a.self_ns, a.total_ns, 0, 0});
    t.self_total_ns += a.self_ns;
  }
  gb::query::sort_ops(t.rows, gb::query::OpSort::cpu_total);
  return op_tables_.emplace(static_cast<int>(kind), std::move(t)).first->second;
}

const GradHeatmap& TraceModel::grad_heatmap() {
  static const GradHeatmap kEmpty;
  return heatmap_ready_.load(std::memory_order_acquire) && heatmap_ ? *heatmap_ : kEmpty;
}

const GradColumns& TraceModel::grad_columns(int columns) {
  const GradHeatmap& h = grad_heatmap();
  columns = std::max(1, std::min<int>(columns, static_cast<int>(h.cols())));
  if (grad_columns_.columns == columns && grad_columns_.best.size() == h.rows() * static_cast<std::size_t>(columns))
    return grad_columns_;
  grad_columns_ = reduce_grad(columns);
  return grad_columns_;
}

GradColumns TraceModel::reduce_grad(int columns) const {
  static const GradHeatmap kEmpty;
  const GradHeatmap& h = heatmap_ready_.load(std::memory_order_acquire) && heatmap_ ? *heatmap_ : kEmpty;
  GradColumns g;
  g.columns = columns;
  g.best.assign(h.rows() * static_cast<std::size_t>(columns), std::nan(""));
  g.flag.assign(h.rows() * static_cast<std::size_t>(columns), 0);
  for (std::size_t r = 0; r < h.rows(); ++r)
    for (int c = 0; c < columns; ++c) {
      auto [a, b] = g.steps(c, h.cols());
      const std::size_t i = r * static_cast<std::size_t>(columns) + static_cast<std::size_t>(c);
      for (std::size_t k = a; k < b; ++k) {
        const std::uint8_t f = h.flag_at(r, k);
        g.flag[i] = f == 1 || g.flag[i] == 1 ? 1 : std::max(g.flag[i], f);
        if (std::isfinite(h.at(r, k)) && !(h.at(r, k) <= g.best[i])) g.best[i] = h.at(r, k);
      }
    }
  return g;
}

GradHeatmap TraceModel::load_heatmap(const gb::query::TraceDb& db) const {
  GradHeatmap h;
  std::vector<GradStatRecord> stats = db.reader().grad_stats();
  std::unordered_map<Id, std::size_t> row;
  for (const ParamRecord& p : params_) {
    row.emplace(p.id, h.param_ids.size());
    h.param_ids.push_back(p.id);
    h.labels.push_back(module_path(p.module_id) + "." + p.name);
  }
  for (const GradStatRecord& g : stats)  // grad stats of params missing from the params table still get a row
    if (row.emplace(g.param_id, h.param_ids.size()).second) {
      h.param_ids.push_back(g.param_id);
      h.labels.push_back("param " + std::to_string(g.param_id));
    }
  for (const GradStatRecord& g : stats) h.steps.push_back(g.step);
  std::sort(h.steps.begin(), h.steps.end());
  h.steps.erase(std::unique(h.steps.begin(), h.steps.end()), h.steps.end());
  h.norm.assign(h.rows() * h.cols(), std::nan(""));
  h.flag.assign(h.rows() * h.cols(), 0);
  h.ratio.assign(h.rows() * h.cols(), std::nan(""));
  h.min_positive = std::numeric_limits<double>::infinity();
  for (const GradStatRecord& g : stats) {
    const auto c = static_cast<std::size_t>(std::lower_bound(h.steps.begin(), h.steps.end(), g.step) - h.steps.begin());
    const std::size_t i = row[g.param_id] * h.cols() + c;
    h.norm[i] = g.norm;
    if (g.update_norm && std::isfinite(*g.update_norm) && std::isfinite(g.param_norm) && g.param_norm > 0)
      h.ratio[i] = *g.update_norm / g.param_norm;
    if (g.nan_count > 0 || std::isnan(g.norm)) h.flag[i] = 1;
    else if (g.inf_count > 0 || std::isinf(g.norm)) h.flag[i] = 2;
    else if (g.norm > 0) h.min_positive = std::min(h.min_positive, g.norm), h.max = std::max(h.max, g.norm);
  }
  if (!std::isfinite(h.min_positive)) h.min_positive = 0;
  return h;
}

UpdateRatio TraceModel::update_ratio(Id param_id) {
  UpdateRatio u;
  const GradHeatmap& h = grad_heatmap();
  auto row = std::find(h.param_ids.begin(), h.param_ids.end(), param_id);
  if (row == h.param_ids.end() || h.ratio.empty()) return u;
  const auto r = static_cast<std::size_t>(row - h.param_ids.begin());
  for (std::size_t c = 0; c < h.cols(); ++c) {
    const double x = h.ratio[r * h.cols() + c];
    if (std::isfinite(x)) {
      u.steps.push_back(h.steps[c]);
      u.ratio.push_back(x);
    } else if (!std::isnan(h.at(r, c)) || h.flag_at(r, c)) {  // a row exists for this step
      u.skipped.push_back(h.steps[c]);
    }
  }
  return u;
}

const std::vector<StepWait>& TraceModel::step_waits() {
  static const std::vector<StepWait> kEmpty;
  return dataloader_ready_.load(std::memory_order_acquire) && waits_ ? *waits_ : kEmpty;
}

const gb::query::DataLoaderSummary& TraceModel::dataloader_summary() {
  static const gb::query::DataLoaderSummary kEmpty;
  return dataloader_ready_.load(std::memory_order_acquire) && dl_summary_ ? *dl_summary_ : kEmpty;
}

}  // namespace gb::viewer
