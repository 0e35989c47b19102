// engine/data/synthetic.cpp — point clouds made once at construction; images rendered per sample from (seed, i).
#include "glassbox/data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "glassbox/ops/factory.h"

namespace gb::data::datasets {
namespace {

Example<> row(const Tensor& x, const Tensor& y, int64_t i, const char* name) {
  GB_CHECK_INDEX(i >= 0 && i < x.size(0), name, ": index ", i, " is out of range for ", x.size(0), " samples");
  return {x[i], y[i]};
}

// A grey (1,S,S) canvas with a shape drawn by an inside(x, y) test at pixel centres, plus noise.
template <class Inside>
Tensor render(int64_t S, Generator& g, float brightness, Inside inside) {
  Tensor img = gb::empty({1, S, S});
  float* p = img.data_ptr<float>();
  for (int64_t y = 0; y < S; ++y)
    for (int64_t x = 0; x < S; ++x) {
      float v = inside(double(x) + 0.5, double(y) + 0.5) ? brightness : 0.0f;
      v += float(0.05 * g.normal());
      p[y * S + x] = std::clamp(v, 0.0f, 1.0f);
    }
  return img;
}

// 3x5 glyphs of 0..9, one row per string, '#' = ink.
constexpr const char* k_font[10][5] = {
    {"###", "#.#", "#.#", "#.#", "###"}, {".#.", "##.", ".#.", ".#.", "###"}, {"###", "..#", "###", "#..", "###"},
    {"###", "..#", "###", "..#", "###"}, {"#.#", "#.#", "###", "..#", "..#"}, {"###", "#..", "###", "..#", "###"},
    {"###", "#..", "###", "#.#", "###"}, {"###", "..#", ".#.", ".#.", ".#."}, {"###", "#.#", "###", "#.#", "###"},
    {"###", "#.#", "###", "..#", "###"}};

}  // namespace

Spirals::Spirals(int64_t n, int64_t classes, double noise, uint64_t seed) {
  GB_CHECK(n > 0 && classes > 0, "Spirals: n and classes must be positive, got ", n, " and ", classes);
  Generator g(seed);
  std::vector<float> xs;
  std::vector<int64_t> ys;
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = i % classes;
    double r = double(i / classes) / double((n + classes - 1) / classes);
    double t = double(c) * 2.0 * M_PI / double(classes) + 4.0 * r + noise * g.normal();
    xs.push_back(float(r * std::sin(t)));
    xs.push_back(float(r * std::cos(t)));
    ys.push_back(c);
  }
  x_ = gb::tensor(ArrayRef<float>(xs)).view({n, 2});
  y_ = gb::tensor(ArrayRef<int64_t>(ys));
}
Example<> Spirals::get(int64_t index) { return row(x_, y_, index, "Spirals"); }

Blobs::Blobs(int64_t n, int64_t classes, int64_t dims, double std, uint64_t seed) {
  GB_CHECK(n > 0 && classes > 0 && dims > 0, "Blobs: n, classes and dims must be positive");
  Generator g(seed);
  std::vector<double> centres(size_t(classes * dims));
  for (double& c : centres) c = 20.0 * g.uniform_double() - 10.0;  // sklearn's center_box (-10, 10)
  std::vector<float> xs;
  std::vector<int64_t> ys;
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = i % classes;
    for (int64_t d = 0; d < dims; ++d) xs.push_back(float(centres[size_t(c * dims + d)] + std * g.normal()));
    ys.push_back(c);
  }
  x_ = gb::tensor(ArrayRef<float>(xs)).view({n, dims});
  y_ = gb::tensor(ArrayRef<int64_t>(ys));
}
Example<> Blobs::get(int64_t index) { return row(x_, y_, index, "Blobs"); }

Shapes::Shapes(int64_t n, int64_t image_size, uint64_t seed, transforms::ImageTransform transform)
    : n_(n), s_(image_size), seed_(seed), transform_(std::move(transform)) {
  GB_CHECK(n > 0 && image_size >= 8, "Shapes: n must be positive and image_size at least 8, got ", n, " and ",
           image_size);
}

Example<> Shapes::get(int64_t index) {
  GB_CHECK_INDEX(index >= 0 && index < n_, "Shapes: index ", index, " is out of range for ", n_, " samples");
  Generator g(gb::data::detail::sample_seed(seed_, index));
  const double S = double(s_);
  const double r = S * (0.2 + 0.15 * g.uniform_double());  // half-size
  const double cx = r + (S - 2 * r) * g.uniform_double(), cy = r + (S - 2 * r) * g.uniform_double();
  const float bright = float(0.6 + 0.4 * g.uniform_double());
  const int64_t cls = index % kClasses;
  Tensor img = render(s_, g, bright, [&](double x, double y) {
    double dx = x - cx, dy = y - cy;
    switch (cls) {
      case 0: return dx * dx + dy * dy <= r * r;                                    // circle
      case 1: return std::abs(dx) <= 0.8 * r && std::abs(dy) <= 0.8 * r;            // square
      case 2: return dy <= r && dy >= -r && std::abs(dx) <= (dy + r) / 2.0;         // triangle, apex up
      default: return std::abs(dx) <= 0.3 * r || std::abs(dy) <= 0.3 * r ? std::abs(dx) <= r && std::abs(dy) <= r
                                                                         : false;   // cross
    }
  });
  if (transform_) img = transform_(img);
  return {img, gb::tensor(cls)};
}

Digits::Digits(int64_t n, int64_t image_size, uint64_t seed, transforms::ImageTransform transform)
    : n_(n), s_(image_size), seed_(seed), transform_(std::move(transform)) {
  GB_CHECK(n > 0 && image_size >= 8, "Digits: n must be positive and image_size at least 8, got ", n, " and ",
           image_size);
}

Example<> Digits::get(int64_t index) {
  GB_CHECK_INDEX(index >= 0 && index < n_, "Digits: index ", index, " is out of range for ", n_, " samples");
  Generator g(gb::data::detail::sample_seed(seed_ ^ 0xD161757ull, index));
  const double S = double(s_);
  const double cell = S / 8.0 * (0.8 + 0.4 * g.uniform_double());  // pixels per font cell
  const double w = 3 * cell, h = 5 * cell;
  const double x0 = (S - w) * g.uniform_double(), y0 = (S - h) * g.uniform_double();
  const float bright = float(0.6 + 0.4 * g.uniform_double());
  const int64_t digit = index % kClasses;
  Tensor img = render(s_, g, bright, [&](double x, double y) {
    int64_t col = int64_t(std::floor((x - x0) / cell)), r = int64_t(std::floor((y - y0) / cell));
    return col >= 0 && col < 3 && r >= 0 && r < 5 && k_font[digit][r][col] == '#';
  });
  if (transform_) img = transform_(img);
  return {img, gb::tensor(digit)};
}

}  // namespace gb::data::datasets
