// glassbox/data/synthetic.h — datasets generated from a seed: no files, the same data on every machine.
//
//   Spirals(n, classes)    (2) float points on interleaved spiral arms; target = arm
//   Blobs(n, classes, d)   (d) float points around `classes` random centres; target = centre
//   Shapes(n, size)        (1,size,size) grey images of a circle, square, triangle or cross (target 0..3) at a
//                          random place, size and brightness, with noise
//   Digits(n, size)        (1,size,size) grey images of the digits 0..9 drawn in a 3x5 pixel font, scaled and
//                          shifted at random, with noise
// Image sample i is rendered in get() from a generator seeded by (seed, i): any size costs no memory, and sample
// i is the same image in every run. Targets cycle through the classes (balanced). `transform` (optional) is
// applied to the image after rendering, drawing its randomness from the loader's per-sample generator.
#pragma once

#include <cstdint>

#include "glassbox/data/dataset.h"
#include "glassbox/data/transforms.h"

namespace gb::data::datasets {

class Spirals : public gb::data::Dataset<Example<>> {
 public:
  Spirals(int64_t n, int64_t classes = 3, double noise = 0.2, uint64_t seed = 0);
  Example<> get(int64_t index) override;
  int64_t size() const override { return x_.size(0); }

 private:
  Tensor x_, y_;
};

class Blobs : public gb::data::Dataset<Example<>> {
 public:
  Blobs(int64_t n, int64_t classes = 3, int64_t dims = 2, double std = 1.0, uint64_t seed = 0);
  Example<> get(int64_t index) override;
  int64_t size() const override { return x_.size(0); }

 private:
  Tensor x_, y_;
};

class Shapes : public gb::data::Dataset<Example<>> {
 public:
  static constexpr int64_t kClasses = 4;  // circle, square, triangle, cross
  explicit Shapes(int64_t n, int64_t image_size = 16, uint64_t seed = 0, transforms::ImageTransform transform = {});
  Example<> get(int64_t index) override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_, s_;
  uint64_t seed_;
  transforms::ImageTransform transform_;
};

class Digits : public gb::data::Dataset<Example<>> {
 public:
  static constexpr int64_t kClasses = 10;
  explicit Digits(int64_t n, int64_t image_size = 16, uint64_t seed = 0, transforms::ImageTransform transform = {});
  Example<> get(int64_t index) override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_, s_;
  uint64_t seed_;
  transforms::ImageTransform transform_;
};

}  // namespace gb::data::datasets
