// viewer/graph_model.h — the autograd-graph domain of TraceModel: the steps with a recorded graph, and each step's
// graph read and laid out on the query worker on first use. No ImGui.
//
// Contract:
//   - steps() lists the steps with graph_nodes rows (read at open).
//   - get(step) answers at once (async_cache.h): the graph, or nullptr while it is read (pending(step)) and for a
//     step without one. Nodes come with their names, module paths, the backward_node span of the same seq (in the
//     step's window) and a layered layout (layout_graph). read() is the same work on the caller's connection.
//   - layout_graph() and crossings() are pure functions of the edges (graph_layout.cpp).
//
//   if (auto g = m.graph().get(step)) for (const GraphNode& n : g->nodes) draw(n);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/query/trace_db.h"
#include "traces/records.h"
#include "viewer/async_cache.h"
#include "viewer/worker.h"

namespace gb::viewer {

class TraceModel;

// One node of a step's autograd graph, placed: layer = longest path from a root (the loss: no edge into it), order
// = its position in the layer after the barycenter passes.
struct GraphNode {
  gb::trace::GraphNodeRecord record;
  std::string name, module;
  int layer = 0, order = 0;
  std::optional<gb::trace::SpanRecord> backward;  // the backward_node span with the same seq, in the step
};

struct AutogradGraph {
  std::int64_t step = 0;
  std::vector<GraphNode> nodes;
  std::vector<std::pair<int, int>> edges;  // (src, dst) indices into nodes: the gradient flows from src to dst
  std::vector<std::int64_t> input_nr;      // per edge
  int layers = 0, width = 0;               // layer count, most nodes in one layer
  std::int64_t max_backward_ns = 0, max_saved_bytes = 0;
};

// Layered layout of a DAG given as edges over n nodes: fills layer (longest path from the sources) and order (a
// few downward and upward barycenter sweeps, starting from index order). Nodes on a cycle (a damaged trace) go to
// the last layer. Returns {layers, width}.
std::pair<int, int> layout_graph(int n, const std::vector<std::pair<int, int>>& edges, std::vector<int>& layer,
                                 std::vector<int>& order);
// Edge crossings between adjacent layers of a layout (what the barycenter passes reduce).
std::int64_t crossings(const std::vector<std::pair<int, int>>& edges, const std::vector<int>& layer,
                       const std::vector<int>& order);

class GraphModel {
 public:
  GraphModel(const TraceModel& model, Worker& worker) : model_(model), worker_(worker) {}
  void set_steps(std::vector<std::int64_t> steps) { steps_ = std::move(steps); }  // at open
  const std::vector<std::int64_t>& steps() const { return steps_; }
  std::shared_ptr<const AutogradGraph> get(std::int64_t step);
  bool pending(std::int64_t step) const { return graphs_.pending(step); }
  std::optional<AutogradGraph> read(const gb::query::TraceDb& db, std::int64_t step) const;  // the caller's thread
  // Any thread: the step's time window [t0, t1] given (get() takes it on the UI thread: a trace followed live
  // grows its steps there).
  std::optional<AutogradGraph> read(const gb::query::TraceDb& db, std::int64_t step, std::int64_t t0,
                                    std::int64_t t1) const;

 private:
  const TraceModel& model_;  // names, module paths, tracks: read-only after open
  Worker& worker_;
  std::vector<std::int64_t> steps_;
  AsyncCache<std::int64_t, AutogradGraph> graphs_{64};
};

}  // namespace gb::viewer
