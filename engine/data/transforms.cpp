// engine/data/transforms.cpp — image decoding (stb_image) and the per-sample transforms, as plain loops over
// contiguous (C,H,W) floats (a sample is small: no kernel dispatch per pixel op).
#include "glassbox/data/transforms.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>

#include "glassbox/data/dataset.h"
#include "glassbox/ops/factory.h"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#if __has_include(<stb/stb_image.h>)
#include <stb/stb_image.h>
#else
#include <stb_image.h>
#endif

namespace gb::data {

namespace {

// stb_image's binary PGM/PPM reader overflows an int on a long number, overruns its buffer on a damaged 16-bit file
// and allocates whatever size the header claims (all found by fuzz/image_fuzz.cpp): such a header is checked here,
// before stb_image sees it. 16-bit files are refused.
void check_pnm(const std::vector<uint8_t>& b, const std::string& name) {
  static const char* const kField[] = {"width", "height", "maximum value"};
  size_t i = 2;
  int64_t v[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    while (i < b.size() && (std::isspace(b[i]) || b[i] == '#')) {  // whitespace and # comments
      if (b[i] == '#')
        while (i < b.size() && b[i] != '\n' && b[i] != '\r') ++i;
      else
        ++i;
    }
    int digits = 0;
    for (; i < b.size() && std::isdigit(b[i]) && digits < 10; ++i, ++digits) v[k] = v[k] * 10 + (b[i] - '0');
    GB_CHECK(digits > 0 && digits < 10, "cannot decode image ", name, ": its PGM/PPM header is damaged (the ",
             kField[k], " is not a number below 10^9)");
  }
  GB_CHECK(v[2] <= 255, "cannot decode image ", name,
           ": 16-bit PGM/PPM images are not supported; convert it to 8 bits (e.g. `convert IN -depth 8 OUT`)");
  const int64_t need = v[0] * v[1] * (b[1] == '6' ? 3 : 1),
                have = static_cast<int64_t>(b.size() - std::min(b.size(), i + 1));
  GB_CHECK(need <= have, "cannot decode image ", name, ": its PGM/PPM header declares ", v[0], "x", v[1], " pixels (",
           need, " bytes) but the file holds ", have, " after it: the file is truncated or damaged");
}

constexpr int64_t kMaxPixels = 178'956'970;  // PIL refuses more (2x its decompression-bomb warning)

}  // namespace

Image decode_image(const std::vector<uint8_t>& bytes, const std::string& name, int channels) {
  GB_CHECK(channels >= 0 && channels <= 4, "decode_image: channels must be 0 (as in the file), 1, 3 or 4, got ",
           channels);
  int w = 0, h = 0, c = 0;
  if (bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6')) check_pnm(bytes, name);
  int iw = 0, ih = 0, ic = 0;
  if (stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &iw, &ih, &ic))
    GB_CHECK(int64_t(iw) * ih <= kMaxPixels, "cannot decode image ", name, ": it declares ", iw, "x", ih,
             " pixels, more than the ", kMaxPixels, " PIL also refuses (a decompression bomb or a damaged header)");
  uint8_t* p = stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &c, channels);
  GB_CHECK(p, "cannot decode image ", name, " (", bytes.size(), " bytes): ", stbi_failure_reason(),
           "; the file is not a PNG/JPEG/BMP/GIF/TGA/PNM image or is damaged: replace or remove it");
  Image img;
  img.height = h;
  img.width = w;
  img.channels = channels ? channels : c;
  img.pixels.assign(p, p + static_cast<size_t>(h) * w * img.channels);
  stbi_image_free(p);
  return img;
}

Image read_image(const std::string& path, int channels) {
  std::ifstream f(path, std::ios::binary);
  GB_CHECK(f, "cannot open image ", path, ": ", std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return decode_image(bytes, path, channels);
}

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

Normalize::Normalize(std::vector<double> m, std::vector<double> s) : mean(std::move(m)), std(std::move(s)) {
  GB_CHECK(!mean.empty() && mean.size() == std.size(),
           "Normalize: mean and std need the same number of values "
           "(one per channel, or one for all), got ",
           mean.size(), " and ", std.size());
  for (double v : std) GB_CHECK(v != 0, "Normalize: std evaluated to zero, leading to division by zero.");
}
Tensor Normalize::operator()(const Tensor& input) const {
  Tensor x = check_chw(input, "Normalize");
  const int64_t C = x.size(0), HW = x.size(1) * x.size(2);
  GB_CHECK(mean.size() == 1 || int64_t(mean.size()) == C, "Normalize: ", mean.size(), " means for ", C,
           " channels; give one per channel or one for all");
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
  for (const Transform& t : transforms) y = t(y);
  return y;
}

}  // namespace transforms
}  // namespace gb::data
