// viewer/graph_model.cpp — GraphModel (contract in graph_model.h): a step's graph_nodes and graph_edges, joined
// with the step's backward_node spans by seq, then laid out (graph_layout.cpp).
#include "viewer/graph_model.h"

#include <algorithm>
#include <unordered_map>

#include "viewer/trace_model.h"

namespace gb::viewer {

using gb::trace::GraphNodeRecord;
using gb::trace::SpanItem;
using gb::trace::SpanKind;

std::shared_ptr<const AutogradGraph> GraphModel::get(std::int64_t step) {
  if (std::find(steps_.begin(), steps_.end(), step) == steps_.end()) return nullptr;
  std::int64_t t0 = model_.begin_ns(), t1 = model_.end_ns();
  if (auto s = model_.step(step)) t0 = s->start_ns, t1 = s->end_ns;
  return graphs_.get(step, worker_,
                     [this, step, t0, t1](const gb::query::TraceDb& db) { return read(db, step, t0, t1); });
}

std::optional<AutogradGraph> GraphModel::read(const gb::query::TraceDb& db, std::int64_t step) const {
  std::int64_t t0 = model_.begin_ns(), t1 = model_.end_ns();
  if (auto s = model_.step(step)) t0 = s->start_ns, t1 = s->end_ns;
  return read(db, step, t0, t1);
}

std::optional<AutogradGraph> GraphModel::read(const gb::query::TraceDb& db, std::int64_t step, std::int64_t t0,
                                              std::int64_t t1) const {
  AutogradGraph g;
  g.step = step;
  std::unordered_map<Id, int> index;
  db.each("SELECT id, step, seq, name_id, forward_span_id, module_id, saved_bytes FROM graph_nodes WHERE step = ?1 "
            "ORDER BY id",
            {step}, [&](const gb::query::Row& row) {
              GraphNode n;
              n.record = GraphNodeRecord{row.i64(0), row.i64(1), row.i64(2), row.i64(3), row.opt_i64(4), row.opt_i64(5), row.i64(6)};
              n.name = std::string(model_.string(n.record.name_id));
              n.module = model_.module_path(n.record.module_id);
              index.emplace(n.record.id, static_cast<int>(g.nodes.size()));
              g.max_saved_bytes = std::max(g.max_saved_bytes, n.record.saved_bytes);
              g.nodes.push_back(std::move(n));
            });
  db.each("SELECT src_node_id, dst_node_id, input_nr FROM graph_edges WHERE step = ?1 ORDER BY rowid", {step},
            [&](const gb::query::Row& row) {
              auto a = index.find(row.i64(0)), b = index.find(row.i64(1));
              if (a == index.end() || b == index.end()) return;
              g.edges.emplace_back(a->second, b->second);
              g.input_nr.push_back(row.i64(2));
            });
  // The backward_node spans of the step, by seq (a bounded read: the step's window on each thread).
  std::unordered_map<std::int64_t, int> by_seq;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].record.seq >= 0) by_seq.emplace(g.nodes[i].record.seq, static_cast<int>(i));
  for (const Track& t : model_.tracks())
    for (const SpanItem& it : db.reader().spans(t.thread_id, t0, t1))
      if (it.span.kind == SpanKind::backward_node && it.span.seq)
        if (auto f = by_seq.find(*it.span.seq); f != by_seq.end()) {
          GraphNode& n = g.nodes[static_cast<std::size_t>(f->second)];
          n.backward = it.span;
          g.max_backward_ns = std::max(g.max_backward_ns, it.span.end_ns - it.span.start_ns);
        }
  std::vector<int> layer, order;
  std::tie(g.layers, g.width) = layout_graph(static_cast<int>(g.nodes.size()), g.edges, layer, order);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) g.nodes[i].layer = layer[i], g.nodes[i].order = order[i];
  return g;
}

}  // namespace gb::viewer
