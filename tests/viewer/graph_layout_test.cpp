// tests/viewer/graph_layout_test.cpp — layout_graph and crossings: layers by longest path, the barycenter passes,
// a cycle.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;
using gb::trace::SpanKind;

TEST_CASE("graph layout: layers follow the longest path; the barycenter passes remove avoidable crossings") {
  // Two roots feeding two children crosswise: in index order the edges cross once; swapping a layer fixes it.
  std::vector<std::pair<int, int>> edges{{0, 3}, {1, 2}, {3, 4}, {2, 4}, {0, 4}};
  std::vector<int> layer, order;
  auto [layers, width] = layout_graph(5, edges, layer, order);
  CHECK(layers == 3);
  CHECK(width == 2);
  CHECK(layer == std::vector<int>{0, 0, 1, 1, 2});  // 4 is reached by 0 -> 4 and by the longer 0 -> 3 -> 4
  for (auto [a, b] : edges) CHECK(layer[static_cast<std::size_t>(b)] > layer[static_cast<std::size_t>(a)]);
  std::vector<int> index_order{0, 1, 1, 0, 0};
  index_order[2] = 0, index_order[3] = 1;  // 2 before 3, as their ids come
  CHECK(crossings(edges, layer, index_order) == 1);
  CHECK(crossings(edges, layer, order) == 0);
  // A cycle (damaged trace) does not hang the layout: its nodes go to a last layer.
  std::vector<int> l2, o2;
  CHECK(layout_graph(3, {{0, 1}, {1, 2}, {2, 1}}, l2, o2).first == 2);
}
