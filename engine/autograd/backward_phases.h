// engine/autograd/backward_phases.h — internal: the phases of one backward, each callable on its own (the driver,
// autograd/engine.cpp, runs them in order inside its trace spans and tells the observers, core/observer.h).
//
//   discover(roots, captures) → BackwardGraph
//       Walks the graph from the roots (depth-first, roots first) and counts for each node the edges that point at
//       it. With captures (grad(), backward(inputs=...)), marks the nodes on a path to a captured one (`needed`)
//       and indexes the captures by node. Runs nothing, releases nothing, allocates no tensor.
//   Execution ex(graph, options)
//       seed(roots, root_grads)  the caller's gradients into their roots' input buffers; a root no edge points at
//                                is ready.
//       next(ready)              takes the ready node with the highest sequence number (AccumulateGrad first of
//                                all, newest first) and its input buffer; false when none is left.
//       run_node(ready, out)     one node: with captures, skipped (false) unless needed; tensor pre-hooks; the
//                                captured gradients picked up; the formula (a backward_node span, on its forward's
//                                stream) when a gradient reached it, telling the observers what it sends; its saved
//                                tensors released unless keep_graph. `out`: the gradients for its next edges (empty
//                                when no gradient reached it: it still releases its children).
//       deliver(node, out)       each gradient cast to its edge's dtype and summed into the receiver's buffer (on
//                                cuda, on the receiver's stream after it waited for the sender's); a receiver whose
//                                count reaches zero is ready. Throws when a node returned more gradients than edges.
//       finish()                 the caller's streams wait for the ones backward used; the captured gradients
//                                (one per capture slot) are moved out.
//       release()                drops the remaining buffers and node references (the graph's bookkeeping).
// A node runs at most once; buffers and the ready queue keep the nodes alive while they wait.
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "autograd/streams.h"
#include "glassbox/autograd/node.h"
#include "glassbox/core/tensor.h"

namespace gb::detail {
struct BackwardObserver;
}

namespace gb::autograd {

struct Capture {  // grad() / backward(inputs=): where an input's gradient is picked up
  Node* node;
  uint32_t input_nr;
  size_t slot;  // its index among the inputs
};

struct BackwardGraph {
  std::unordered_map<Node*, int> deps;  // edges pointing at each node, from the nodes reached
  std::vector<Node*> order;             // the nodes reached, in discovery order
  bool filtered = false;                // captures given: only `needed` nodes run
  std::unordered_set<Node*> needed;     // filtered: the captured nodes and every node with a path to one
  std::unordered_map<Node*, std::vector<const Capture*>> captures_at;
};

// `captures` must outlive the graph (captures_at points into it).
BackwardGraph discover(const edge_list& roots, const std::vector<Capture>& captures);

struct BackwardOptions {
  bool keep_graph = false;    // retain_graph: saved tensors stay
  bool create_graph = false;  // gradients get a history (the caller's grad mode)
  size_t n_captures = 0;      // the captured gradients finish() returns
  // backward(inputs=...): a captured non-leaf's gradient accumulates into its .grad, captured leaves' AccumulateGrad
  // runs; grad(): captures are returned and AccumulateGrad of captured leaves does not run.
  bool accumulate_captures_into = false;
  const variable_list* capture_tensors = nullptr;  // accumulate_captures_into: the inputs, by slot
};

struct ReadyNode {
  std::shared_ptr<Node> node;
  variable_list grads;  // one per node input (undefined where nothing arrived)
};

class Execution {
 public:
  // `graph` and `observers` must outlive the execution; observers get node_done for each node whose formula ran.
  Execution(BackwardGraph& graph, const BackwardOptions& options,
            const std::vector<std::unique_ptr<detail::BackwardObserver>>& observers);
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  void seed(const edge_list& roots, variable_list root_grads);
  bool next(ReadyNode& ready);
  bool run_node(ReadyNode& ready, variable_list& out);
  void deliver(Node& node, variable_list&& out);
  variable_list finish();
  void release();

  int64_t nodes_executed() const { return nodes_executed_; }
  int64_t release_ticks() const { return release_ticks_; }  // trace::ticks() spent in release_variables

 private:
  struct ReadyCompare {
    bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
  };
  void hand_over(const Node* from, const Node& to, Tensor& slot, Tensor&& g);
  void pick_up_captures(Node& node, const variable_list& grads);
  bool needed(const Node* n) const { return graph_.needed.count(const_cast<Node*>(n)) != 0; }

  BackwardGraph& graph_;
  const BackwardOptions& options_;
  const std::vector<std::unique_ptr<detail::BackwardObserver>>& observers_;
  variable_list captured_;
  std::unordered_map<Node*, variable_list> buffers_;
  std::unordered_map<Node*, std::shared_ptr<Node>> owners_;  // keeps nodes alive while they wait in the queue
  std::priority_queue<Node*, std::vector<Node*>, ReadyCompare> ready_;
  BackwardStreams streams_;  // cuda: each node on its forward stream (streams.h)
  bool on_cuda_ = false;
  int64_t nodes_executed_ = 0;
  int64_t release_ticks_ = 0;
};

}  // namespace gb::autograd
