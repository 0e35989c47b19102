// viewer/trace_model.cpp — TraceModel (contract in trace_model.h): the open, the loader thread, the op table and
// flame, the data-loader waits; the domains are in timeline_model, memory_model, gradients_model, graph_model and
// compare_model.
#include "viewer/trace_model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "traces/query/follow.h"
#include "traces/reader.h"

namespace gb::viewer {

using namespace gb::trace;

namespace {

int role_order(ThreadRole r) {
  switch (r) {
    case ThreadRole::main: return 0;
    case ThreadRole::communication:
      return 1;
    case ThreadRole::dataloader_worker:
      return 2;
    case ThreadRole::pin_memory:
      return 3;
    case ThreadRole::cuda_stream:
      return 4;
    case ThreadRole::other:
      return 5;
    case ThreadRole::collector:
      return 6;
  }
  return 7;
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
  {  // still being written? (traces/query/follow.h: the same rule as `glassbox watch`)
    gb::query::WriterMeta w;
    w.host = meta("host"), w.pid = meta("pid"), w.closed_cleanly = meta("closed_cleanly"),
    w.stopped_by = meta("stopped_by");
    const std::string host = gb::query::this_host();
    live_.last_step = std::chrono::steady_clock::now();
    // A file just created may not have its writer's pid yet (the first commit, ~100 ms): written to in the last
    // 10 s on this host, it is followed too (the pid, once in meta, tells a dead writer).
    auto recent = [](const std::string& p) {
      std::error_code ec;
      const auto t = std::filesystem::last_write_time(p, ec);
      return !ec && std::filesystem::file_time_type::clock::now() - t < std::chrono::seconds(10);
    };
    if (!w.closed() && !w.stopped_by && !w.pid && (!w.host || *w.host == host) &&
        (recent(path) || recent(path + "-wal"))) {
      follow_ = live_.following = options_.follow && options_.background;
    } else if (!w.closed() && w.writer_known(host)) {
      if (!gb::query::writer_gone(w, host)) {
        follow_ = live_.following = options_.follow && options_.background;
      } else {  // opened after its writer died: say so (nothing will come)
        live_.ended = true;
        live_.died = !w.stopped_by;
        live_.end = w.stopped_by ? "ended: " + *w.stopped_by + " (the file was not closed)"
                                 : "the writer died (killed or crashed)";
      }
    }
  }
  for (auto& m : r.all<ModuleRecord>()) modules_.emplace(m.id, m);
  params_ = r.all<ParamRecord>();
  std::sort(params_.begin(), params_.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  detail_ = gb::query::detail_windows(*db_);
  std::vector<std::pair<std::int64_t, std::int64_t>> run_ends;  // a long run's first and last step: its extent
  if (detail_.all()) {
    steps_ = r.all<StepRecord>();
  } else {  // a long run: the steps of the detail windows (the whole summary is run()'s, read by the loader)
    auto read = [&](std::string_view sql, std::initializer_list<std::int64_t> binds) {
      db_->each(sql, binds, [&](const gb::query::Row& row) {
        StepRecord s;
        s.step = row.i64(0), s.start_ns = row.i64(1), s.end_ns = row.i64(2), s.loss = row.opt_f64(3);
        s.lr = row.opt_f64(4);
        steps_.push_back(s);
      });
    };
    for (const DetailWindowRecord& w : detail_.windows)
      read("SELECT step, start_ns, end_ns, loss, lr FROM steps WHERE step BETWEEN ?1 AND ?2 ORDER BY step",
           {w.first_step, w.last_step});
    db_->each(
        "SELECT start_ns, end_ns FROM (SELECT * FROM steps ORDER BY step LIMIT 1) UNION ALL "
        "SELECT start_ns, end_ns FROM (SELECT * FROM steps ORDER BY step DESC LIMIT 1)",
        [&](const gb::query::Row& row) { run_ends.emplace_back(row.i64(0), row.i64(1)); });
  }
  std::sort(steps_.begin(), steps_.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  if (steps_.empty() && detail_.all()) {  // a trace with step spans but no steps table
    db_->each("SELECT step, start_ns, end_ns FROM spans WHERE kind = ?1 AND step IS NOT NULL ORDER BY start_ns",
              {static_cast<std::int64_t>(SpanKind::step)}, [&](const gb::query::Row& row) {
                steps_.push_back(StepRecord{.step = row.i64(0), .start_ns = row.i64(1), .end_ns = row.i64(2)});
              });
  }

  begin_ns_ = std::numeric_limits<std::int64_t>::max();
  end_ns_ = std::numeric_limits<std::int64_t>::min();
  auto extend = [&](std::int64_t a, std::int64_t b) {
    begin_ns_ = std::min(begin_ns_, a);
    end_ns_ = std::max(end_ns_, b);
  };
  for (const StepRecord& s : steps_) extend(s.start_ns, s.end_ns);
  for (const auto& [a, b] : run_ends) extend(a, b);

  // Tracks: a thread's spans are the id range [span_id(t, 0), span_id(t + 1, 0)); its first span starts first and
  // the root above its last span ends last (spans of a thread nest).
  std::vector<Overview::ThreadRange> ranges;
  std::vector<ThreadRecord> threads = r.all<ThreadRecord>();
  // A merged trace's threads group by rank (`glassbox merge`), then by role.
  std::stable_sort(threads.begin(), threads.end(), [](const ThreadRecord& a, const ThreadRecord& b) {
    if (a.rank.value_or(-1) != b.rank.value_or(-1)) return a.rank.value_or(-1) < b.rank.value_or(-1);
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
    tracks_.push_back(Track{t.id, t.name, t.role, last_id - lo, t.rank});
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

  for (const AnomalyRecord& a : r.anomalies()) anomalies_.push_back(anomaly_row(a, *db_));
  order_anomalies();

  // The extent of the memory events: min and max per device through the index on (device, t_ns), the devices
  // found by skipping through the same index (a handful of seeks, not a scan of every row).
  db_->each("WITH RECURSIVE d(x) AS (SELECT min(device) FROM memory_events UNION ALL "
            "SELECT (SELECT min(device) FROM memory_events WHERE device > d.x) FROM d WHERE d.x IS NOT NULL) "
            "SELECT min((SELECT min(t_ns) FROM memory_events WHERE device = d.x)), "
            "max((SELECT max(t_ns) FROM memory_events WHERE device = d.x)) FROM d WHERE d.x IS NOT NULL",
            [&](const gb::query::Row& row) {
              if (!row.is_null(0)) extend(row.i64(0), row.i64(1));
            });
  if (begin_ns_ > end_ns_) begin_ns_ = end_ns_ = 0;  // an empty trace
  if (follow_) {  // what came later has no memory events or graphs here (detail_after_open)
    window_id_at_open_ = last_step_at_open_ = std::numeric_limits<std::int64_t>::min();
    for (const DetailWindowRecord& w : detail_.windows) window_id_at_open_ = std::max(window_id_at_open_, w.id);
    if (!steps_.empty()) last_step_at_open_ = steps_.back().step;
  }
  memory_.open(*db_);
  has_kernels_ = db_->scalar("SELECT EXISTS (SELECT 1 FROM kernels)") != 0;
  std::vector<std::int64_t> graph_steps;
  db_->each("SELECT DISTINCT step FROM graph_nodes ORDER BY step", [&](const gb::query::Row& row) { graph_steps.push_back(row.i64(0)); });
  graph_.set_steps(std::move(graph_steps));
  if (options_.background) {
    loader_ = std::thread([this, ranges = std::move(ranges)]() mutable {
      load(std::move(ranges));
      {
        std::lock_guard<std::mutex> l(live_mutex_);
        loaded_ = true;
      }
      live_cv_.notify_all();
      if (follow_) follow();
    });
  } else {
    load(std::move(ranges));
    loaded_ = true;
  }
}

AnomalyRow TraceModel::anomaly_row(const AnomalyRecord& a, const gb::query::TraceDb& db) const {
  AnomalyRow row{a, {}, {}, {}};
  row.module = module_path(row.record.module_id);
  if (row.record.param_id) {
    for (const ParamRecord& p : params_)
      if (p.id == *row.record.param_id) row.param = module_path(p.module_id) + "." + p.name;
  }
  if (row.record.span_id)  // the name's string may be newer than the open: read with it
    db.each("SELECT t.text FROM spans s JOIN strings t ON t.id = s.name_id WHERE s.id = ?1", {*row.record.span_id},
            [&](const gb::query::Row& r) { row.span = std::string(r.text(0)); });
  return row;
}

void TraceModel::order_anomalies() {
  std::vector<gb::query::ChainKey> keys;
  keys.reserve(anomalies_.size());
  for (const AnomalyRow& a : anomalies_) keys.push_back(gb::query::ChainKey{a.record.id, a.record.cause_id});
  anomaly_order_ = gb::query::chain_order(keys);
  anomaly_chains_ = static_cast<std::size_t>(std::count_if(
      anomaly_order_.begin(), anomaly_order_.end(), [](const auto& c) { return c.depth == 0 && c.below > 0; }));
}

TraceModel::~TraceModel() {
  queries_->interrupt();  // a long search or comparison stops now (the Worker's destructor interrupts again)
  windows_->interrupt();
  {
    std::lock_guard<std::mutex> l(live_mutex_);  // the follower's wait sees stop_ at once
    stop_ = true;
  }
  live_cv_.notify_all();
  timeline_.overview().stop();
  if (loader_.joinable()) loader_.join();
  // The workers go first (each drops its queue, interrupts and joins its running job): the domain models declared
  // after them are destroyed before them, and a running job may use its model.
  queries_.reset();
  windows_.reset();
  compute_.reset();
}

void TraceModel::load(std::vector<Overview::ThreadRange> ranges) {
  std::unique_ptr<gb::query::TraceDb> db;
  try {
    db = std::make_unique<gb::query::TraceDb>(path());
  } catch (...) {  // the file changed under us: the panels show what they have
  }
  // A trace being followed: the step_memory rows from here on are read again by the follower (rows of steps the
  // run summary has are set in place; the summary drops rows of steps it has not read)
  try {
    if (db && follow_) follow_memory_rowid_ = db->scalar("SELECT max(rowid) FROM step_memory");
  } catch (const std::exception&) {
  }
  run_.load(db.get());  // first: the Run panel is the first tab
  if (stop_) return;
  memory_.load(db.get(), stop_);
  if (stop_) return;
  timeline_.overview().start(path(), std::move(ranges), options_.direct_rows, /*background=*/false);
  if (stop_) return;
  gradients_.load(db.get());
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

void TraceModel::wait_queries() {
  queries_->wait_idle();
  windows_->wait_idle();
  compute_->wait_idle();
  compare_.poll();
}

void TraceModel::wait_loaded() {
  {
    std::unique_lock<std::mutex> l(live_mutex_);
    live_cv_.wait(l, [&] { return loaded_; });
  }
  wait_queries();
}

std::string TraceModel::loading() const {
  std::string s;
  auto add = [&](const std::string& what) { s += (s.empty() ? "" : ", ") + what; };
  if (run_.loading()) add("run summary");
  if (memory_.loading()) add("memory events");
  const Overview& o = timeline_.overview();
  if (!o.ready()) add("overview " + std::to_string(static_cast<int>(o.progress() * 100)) + "%");
  if (gradients_.loading()) add("gradient statistics");
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
  auto it =
      std::lower_bound(steps_.begin(), steps_.end(), s, [](const StepRecord& r, std::int64_t x) { return r.step < x; });
  if (it != steps_.end() && it->step == s) return *it;
  return std::nullopt;
}

std::string track_label(const Track& t) {
  std::string label = t.name;
  if (t.role == gb::trace::ThreadRole::cuda_stream) {
    std::size_t i = t.name.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(t.name[i - 1]))) --i;
    label = "cuda stream " + (i < t.name.size() ? t.name.substr(i) : std::to_string(t.thread_id));
  }
  return t.rank ? "rank " + std::to_string(*t.rank) + " \xc2\xb7 " + label : label;
}

std::vector<gb::trace::SpanKind> TraceModel::legend_kinds() const {
  using gb::trace::SpanKind;
  std::vector<SpanKind> out{SpanKind::op,        SpanKind::backward_node, SpanKind::backward_phase, SpanKind::module,
                            SpanKind::optimizer, SpanKind::dataloader,    SpanKind::step};
  const bool cuda = has_kernels_ || std::any_of(tracks_.begin(), tracks_.end(), [](const Track& t) {
                      return t.role == gb::trace::ThreadRole::cuda_stream;
                    });
  if (cuda) out.insert(out.end(), {SpanKind::cuda_kernel, SpanKind::cuda_memcpy, SpanKind::cuda_memset, SpanKind::cuda_api});
  if (std::any_of(tracks_.begin(), tracks_.end(),
                  [](const Track& t) { return t.role == gb::trace::ThreadRole::communication; }))
    out.push_back(SpanKind::collective);
  return out;
}

const gb::query::OpTable& TraceModel::op_table(SpanKind kind) {
  static const gb::query::OpTable kEmpty;
  const Overview& overview = timeline_.overview();
  if (!overview.ready()) return kEmpty;
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
  for (const auto& [key, a] : overview.op_aggregates()) {
    if (key.first != static_cast<int>(kind)) continue;
    t.rows.push_back(gb::query::OpStats{std::string(string(key.second)), a.calls, a.self_ns, a.total_ns, 0, 0});
    t.self_total_ns += a.self_ns;
  }
  gb::query::sort_ops(t.rows, gb::query::OpSort::cpu_total);
  return op_tables_.emplace(static_cast<int>(kind), std::move(t)).first->second;
}

const std::vector<StepWait>& TraceModel::step_waits() const {
  static const std::vector<StepWait> kEmpty;
  return dataloader_ready_.load(std::memory_order_acquire) && waits_ ? *waits_ : kEmpty;
}

const gb::query::DataLoaderSummary& TraceModel::dataloader_summary() const {
  static const gb::query::DataLoaderSummary kEmpty;
  return dataloader_ready_.load(std::memory_order_acquire) && dl_summary_ ? *dl_summary_ : kEmpty;
}

}  // namespace gb::viewer
