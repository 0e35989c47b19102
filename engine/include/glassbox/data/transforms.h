// glassbox/data/transforms.h — image transforms (torchvision's names), applied per sample on the loading thread.
//
// Images decode to an Image (H,W,C bytes, like a PIL image: the engine has no uint8 dtype); ToTensor turns one
// into a (C,H,W) float tensor in [0,1]; the other transforms take and return (C,H,W) float tensors. Random ones
// draw from gb::data::sample_generator(), so a DataLoader's augmentations are reproducible whatever num_workers.
//
//   namespace T = gb::data::transforms;
//   T::Compose aug({T::RandomCrop(28, 4), T::RandomHorizontalFlip(0.5), T::Normalize({0.5}, {0.25})});
//   gb::Tensor x = aug(T::ToTensor()(image));   // (1,28,28)
//
// Normalize is also libtorch's transforms::Normalize<Target>, a TensorTransform for dataset.map(...)
// (batch_transform.h holds libtorch's other transforms: Stack<>, Lambda, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "glassbox/core/array_ref.h"
#include "glassbox/core/tensor.h"
#include "glassbox/data/batch_transform.h"

namespace gb::data {

// A decoded image: height x width x channels bytes, row-major (HWC).
struct Image {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

// PIL's limit on an image's pixels (twice its decompression-bomb warning): a larger header is refused.
inline constexpr int64_t kMaxImagePixels = 178'956'970;

// Decodes PNG, JPEG, BMP, GIF, TGA, PNM (8-bit) bytes (stb_image). channels 0 keeps the file's, else 1 (grey),
// 3 (RGB) or 4 (RGBA). Throws gb::Error naming `name` and the reason when the bytes are not a decodable image,
// when the header declares more than max_pixels pixels, or when the file is shorter than its header says
// (truncated: refused as PIL refuses it, not decoded into zeros).
Image decode_image(const std::vector<uint8_t>& bytes, const std::string& name, int channels = 0,
                   int64_t max_pixels = kMaxImagePixels);
Image read_image(const std::string& path, int channels = 0, int64_t max_pixels = kMaxImagePixels);

namespace transforms {

// A tensor -> tensor transform (what Compose chains and datasets' `transform` options take).
using ImageTransform = std::function<Tensor(const Tensor&)>;

// Image (H,W,C) bytes -> (C,H,W) float32 in [0,1].
struct ToTensor {
  Tensor operator()(const Image& image) const;
};

namespace detail {
void check_normalize(const std::vector<double>& mean, const std::vector<double>& std);
Tensor normalize(const Tensor& x, const std::vector<double>& mean, const std::vector<double>& std);
}  // namespace detail

// (x - mean[c]) / std[c] per channel c of a (C,H,W) image (the channel is dim -3: a (N,C,H,W) batch works too);
// one value applies to every channel. Float32 (C,H,W) images take a plain loop; other inputs broadcast mean and std
// as (C,1,1) tensors of their dtype, as libtorch's does, with autograd. Normalize<>(0.1307, 0.3081) is libtorch's
// spelling, Normalize({0.5, 0.5, 0.5}, {0.25, 0.25, 0.25}) torchvision's.
template <class Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev) : mean(mean.vec()), std(stddev.vec()) {
    detail::check_normalize(this->mean, this->std);
  }
  Tensor operator()(Tensor input) override { return detail::normalize(input, mean, std); }
  std::vector<double> mean, std;
};

// Pads each side by `padding` zeros, then crops a random size x size window.
struct RandomCrop {
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop(size, size, padding) {}
  RandomCrop(int64_t height, int64_t width, int64_t padding);
  Tensor operator()(const Tensor& x) const;
  int64_t height, width, padding;
};

// Mirrors left-right with probability p.
struct RandomHorizontalFlip {
  explicit RandomHorizontalFlip(double p = 0.5) : p(p) {}
  Tensor operator()(const Tensor& x) const;
  double p;
};

// Applies transforms in order.
struct Compose {
  explicit Compose(std::vector<ImageTransform> ts) : transforms(std::move(ts)) {}
  Tensor operator()(const Tensor& x) const;
  std::vector<ImageTransform> transforms;
};

}  // namespace transforms
}  // namespace gb::data
