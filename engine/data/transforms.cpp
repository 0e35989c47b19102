// engine/data/transforms.cpp — the per-sample transforms, as plain loops over contiguous (C,H,W) floats (a sample
// is small: no kernel dispatch per pixel op). Decoding is engine/data/image_decode.cpp.
#include "glassbox/data/transforms.h"

#include <algorithm>

#include "glassbox/data/dataset.h"
#include "glassbox/ops/factory.h"

namespace gb::data {

namespace transforms {
namespace {
Tensor check_chw(const Tensor& x, const char* op) {
  GB_CHECK(x.dim() == 3 && x.scalar_type() == kFloat, op, ": expected a (C,H,W) float32 tensor, got ", x.dim(), "-D ",
           x.sizes(), " ", python_name(x.scalar_type()), "; ToTensor() makes one from an Image");
  return x.contiguous();
}
}  // namespace

Tensor ToTensor::operator()(const Image& img) const {
  const int64_t C = img.channels, H = img.height, W = img.width;
  Tensor out = gb::empty({C, H, W});
  float* o = out.data_ptr<float>();
  const uint8_t* p = img.pixels.data();
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < H * W; ++i) o[c * H * W + i] = float(p[i * C + c]) * (1.0f / 255.0f);
  return out;
}

namespace detail {
void check_normalize(const std::vector<double>& mean, const std::vector<double>& std) {
  GB_CHECK(!mean.empty() && mean.size() == std.size(),
           "Normalize: mean and std need the same number of values "
           "(one per channel, or one for all), got ",
           mean.size(), " and ", std.size());
  for (double v : std) GB_CHECK(v != 0, "Normalize: std evaluated to zero, leading to division by zero.");
}

Tensor normalize(const Tensor& input, const std::vector<double>& mean, const std::vector<double>& std) {
  GB_CHECK(input.defined() && input.dim() >= 1, "Normalize: expected an image tensor (C,H,W), got ",
           input.defined() ? std::to_string(input.dim()) + "-D" : std::string("an undefined tensor"));
  const int64_t channel_dim = input.dim() >= 3 ? input.dim() - 3 : 0;
  const int64_t C = input.dim() >= 3 ? input.size(channel_dim) : 1;
  GB_CHECK(mean.size() == 1 || int64_t(mean.size()) == C, "Normalize: ", mean.size(), " means for ", C,
           " channels; give one per channel or one for all");
  if (input.dim() != 3 || input.scalar_type() != kFloat || input.requires_grad() || !input.device().is_cpu()) {
    // libtorch's formula: mean and std as (C,1,1) tensors, broadcast.
    GB_CHECK(input.is_floating_point(), "Normalize: expected a floating-point tensor, got ",
             python_name(input.scalar_type()), "; convert it with .to(gb::kFloat) first");
    auto column = [&](const std::vector<double>& v) {
      return gb::tensor(ArrayRef<double>(v), TensorOptions().dtype(input.scalar_type()).device(input.device()))
          .view({int64_t(v.size()), 1, 1});
    };
    return input.sub(column(mean)).div(column(std));
  }
  Tensor x = input.contiguous();
  const int64_t HW = x.size(1) * x.size(2);
  Tensor out = gb::empty_like(x);
  const float* p = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t c = 0; c < C; ++c) {
    size_t k = mean.size() == 1 ? 0 : size_t(c);
    float m = float(mean[k]), inv = float(1.0 / std[k]);
    for (int64_t i = 0; i < HW; ++i) o[c * HW + i] = (p[c * HW + i] - m) * inv;
  }
  return out;
}
}  // namespace detail

RandomCrop::RandomCrop(int64_t h, int64_t w, int64_t pad) : height(h), width(w), padding(pad) {
  GB_CHECK(h > 0 && w > 0 && pad >= 0, "RandomCrop: size must be positive and padding non-negative, got size (", h,
           ", ", w, ") padding ", pad);
}
Tensor RandomCrop::operator()(const Tensor& input) const {
  Tensor x = check_chw(input, "RandomCrop");
  const int64_t C = x.size(0), H = x.size(1), W = x.size(2);
  const int64_t PH = H + 2 * padding, PW = W + 2 * padding;
  GB_CHECK(height <= PH && width <= PW, "RandomCrop: required crop size (", height, ", ", width,
           ") is larger than the padded input image size (", PH, ", ", PW, ")");
  Generator& gen = sample_generator();
  int64_t top = int64_t(gen.next_u64() % uint64_t(PH - height + 1));
  int64_t left = int64_t(gen.next_u64() % uint64_t(PW - width + 1));
  Tensor out = gb::zeros({C, height, width});
  const float* p = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < height; ++i) {
      int64_t sy = top + i - padding;
      if (sy < 0 || sy >= H) continue;
      for (int64_t j = 0; j < width; ++j) {
        int64_t sx = left + j - padding;
        if (sx >= 0 && sx < W) o[(c * height + i) * width + j] = p[(c * H + sy) * W + sx];
      }
    }
  return out;
}

Tensor RandomHorizontalFlip::operator()(const Tensor& input) const {
  Tensor x = check_chw(input, "RandomHorizontalFlip");
  if (sample_generator().uniform_double() >= p) return x;
  const int64_t C = x.size(0), H = x.size(1), W = x.size(2);
  Tensor out = gb::empty_like(x);
  const float* s = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t r = 0; r < C * H; ++r)
    for (int64_t j = 0; j < W; ++j) o[r * W + j] = s[r * W + W - 1 - j];
  return out;
}

Tensor Compose::operator()(const Tensor& x) const {
  Tensor y = x;
  for (const ImageTransform& t : transforms) y = t(y);
  return y;
}

}  // namespace transforms
}  // namespace gb::data
