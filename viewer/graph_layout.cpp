// viewer/graph_layout.cpp — the autograd graph's layout: layers by longest path, barycenter ordering, crossings.
// Pure functions of the edges (declared in graph_model.h); GraphModel::read() calls them once per step.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "viewer/graph_model.h"

namespace gb::viewer {

std::pair<int, int> layout_graph(int n, const std::vector<std::pair<int, int>>& edges, std::vector<int>& layer,
                                 std::vector<int>& order) {
  layer.assign(static_cast<std::size_t>(n), 0);
  order.assign(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(n)), in(static_cast<std::size_t>(n));
  std::vector<int> indegree(static_cast<std::size_t>(n), 0);
  for (auto [a, b] : edges) {
    out[static_cast<std::size_t>(a)].push_back(b), in[static_cast<std::size_t>(b)].push_back(a);
    ++indegree[static_cast<std::size_t>(b)];
  }
  // Kahn's order; a node's layer is one more than its deepest predecessor's (longest path from the roots).
  std::vector<int> queue, seen(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i)
    if (indegree[static_cast<std::size_t>(i)] == 0) queue.push_back(i);
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const int a = queue[q];
    seen[static_cast<std::size_t>(a)] = 1;
    for (int b : out[static_cast<std::size_t>(a)]) {
      layer[static_cast<std::size_t>(b)] = std::max(layer[static_cast<std::size_t>(b)], layer[static_cast<std::size_t>(a)] + 1);
      if (--indegree[static_cast<std::size_t>(b)] == 0) queue.push_back(b);
    }
  }
  int layers = 0;
  for (int i = 0; i < n; ++i)
    if (seen[static_cast<std::size_t>(i)]) layers = std::max(layers, layer[static_cast<std::size_t>(i)] + 1);
  for (int i = 0; i < n; ++i)
    if (!seen[static_cast<std::size_t>(i)]) layer[static_cast<std::size_t>(i)] = layers;  // on a cycle
  if (std::find(seen.begin(), seen.end(), 0) != seen.end()) ++layers;
  std::vector<std::vector<int>> rows(static_cast<std::size_t>(layers));
  for (int i = 0; i < n; ++i) rows[static_cast<std::size_t>(layer[static_cast<std::size_t>(i)])].push_back(i);
  auto renumber = [&](std::vector<int>& row) {
    for (std::size_t k = 0; k < row.size(); ++k) order[static_cast<std::size_t>(row[k])] = static_cast<int>(k);
  };
  for (auto& row : rows) renumber(row);
  // Barycenter sweeps: each node moves to the mean position of its neighbours in the layer just swept.
  auto sweep = [&](std::vector<int>& row, const std::vector<std::vector<int>>& nb) {
    std::vector<std::pair<double, int>> key;
    for (int v : row) {
      const auto& adj = nb[static_cast<std::size_t>(v)];
      double sum = 0;
      for (int u : adj) sum += order[static_cast<std::size_t>(u)];
      key.emplace_back(adj.empty() ? order[static_cast<std::size_t>(v)] : sum / static_cast<double>(adj.size()), v);
    }
    std::stable_sort(key.begin(), key.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < row.size(); ++k) row[k] = key[k].second;
    renumber(row);
  };
  // Keep the best of the passes (counting crossings is quadratic in the edges: big graphs keep the last pass).
  const bool count = edges.size() <= 3000;
  std::vector<int> best = order;
  std::int64_t best_crossings = count ? crossings(edges, layer, order) : 0;
  for (int pass = 0; pass < 4; ++pass) {
    for (std::size_t l = 1; l < rows.size(); ++l) sweep(rows[l], in);
    for (std::size_t l = rows.size(); l-- > 1;) sweep(rows[l - 1], out);
    const std::int64_t c = count ? crossings(edges, layer, order) : 0;
    if (!count || c < best_crossings) best_crossings = c, best = order;
  }
  order = best;
  int width = 0;
  for (const auto& row : rows) width = std::max(width, static_cast<int>(row.size()));
  return {layers, width};
}

std::int64_t crossings(const std::vector<std::pair<int, int>>& edges, const std::vector<int>& layer,
                       const std::vector<int>& order) {
  std::int64_t c = 0;
  for (std::size_t i = 0; i < edges.size(); ++i)
    for (std::size_t j = i + 1; j < edges.size(); ++j) {
      auto [a, b] = edges[i];
      auto [p, q] = edges[j];
      if (layer[static_cast<std::size_t>(a)] != layer[static_cast<std::size_t>(p)] ||
          layer[static_cast<std::size_t>(b)] != layer[static_cast<std::size_t>(q)] ||
          layer[static_cast<std::size_t>(b)] != layer[static_cast<std::size_t>(a)] + 1)
        continue;
      const int d1 = order[static_cast<std::size_t>(a)] - order[static_cast<std::size_t>(p)];
      const int d2 = order[static_cast<std::size_t>(b)] - order[static_cast<std::size_t>(q)];
      if ((d1 < 0 && d2 > 0) || (d1 > 0 && d2 < 0)) ++c;
    }
  return c;
}

}  // namespace gb::viewer
