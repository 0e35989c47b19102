// samples/spirals.h — the flagship samples' data: K interleaved spiral arms in 2-D, drawn from a generator.
#pragma once

#include <glassbox/glassbox.h>

#include <cmath>
#include <utility>
#include <vector>

namespace sample_data {

// K spiral arms of n points each in 2-D, with noise: x (K*n, 2) float, y (K*n) int64 class = arm.
inline std::pair<gb::Tensor, gb::Tensor> spirals(int64_t n, int64_t k, gb::Generator& gen) {
  std::vector<float> xs;
  std::vector<int64_t> ys;
  for (int64_t c = 0; c < k; ++c)
    for (int64_t i = 0; i < n; ++i) {
      double r = double(i) / double(n);
      double t = double(c) * 4.0 + 4.0 * r + 0.2 * gen.normal();
      xs.push_back(float(r * std::sin(t)));
      xs.push_back(float(r * std::cos(t)));
      ys.push_back(c);
    }
  auto x = gb::tensor(gb::ArrayRef<float>(xs)).view({k * n, 2});
  auto y = gb::tensor(gb::ArrayRef<int64_t>(ys));
  return {x, y};
}

// The flagship data set: 3 arms x 400 points from `seed`, split at random 80/20 into train and held-out sets.
struct SpiralSplit {
  gb::Tensor x_train, y_train, x_test, y_test;
  int64_t n_train = 0;
};
inline SpiralSplit spiral_split(uint64_t seed) {
  gb::Generator gen(seed);
  auto [x_all, y_all] = spirals(400, 3, gen);
  auto perm = gb::randperm(x_all.size(0), gen);
  SpiralSplit s;
  s.n_train = x_all.size(0) * 8 / 10;
  const int64_t n_test = x_all.size(0) - s.n_train;
  s.x_train = x_all.index_select(0, perm.narrow(0, 0, s.n_train));
  s.y_train = y_all.index_select(0, perm.narrow(0, 0, s.n_train));
  s.x_test = x_all.index_select(0, perm.narrow(0, s.n_train, n_test));
  s.y_test = y_all.index_select(0, perm.narrow(0, s.n_train, n_test));
  return s;
}

}  // namespace sample_data
