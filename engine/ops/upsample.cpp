// engine/ops/upsample.cpp — upsample (torch's interpolate kernels for nearest, linear, bilinear, trilinear): one
// spatial dim at a time, each an index_select (nearest) or two index_selects blended by per-position weights
// (linear). The multilinear kernels are separable, so this is exactly the direct formula, and autograd composes
// the backward from index_select's.
#include <cmath>
#include <string>
#include <vector>

#include "core/op_scope.h"
#include "glassbox/nn/functional.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/shape.h"

namespace gb {
namespace {

// PyTorch's compute_scales_value: the requested factor's inverse when given, else in / out.
double source_scale(int64_t in, int64_t out, double requested) {
  return requested > 0 ? 1.0 / requested : double(in) / double(out);
}

Tensor index_tensor(const std::vector<int64_t>& v, const Device& device) {
  return tensor(ArrayRef<int64_t>(v), TensorOptions().dtype(kInt64)).to(device);
}

// The weights along dim d of a (1, .., n, .., 1) shape, to broadcast against the selected rows.
Tensor along(const std::vector<double>& w, int64_t d, int64_t ndim, const Tensor& like) {
  std::vector<int64_t> shape(size_t(ndim), 1);
  shape[size_t(d)] = int64_t(w.size());
  return tensor(ArrayRef<double>(w), TensorOptions().dtype(kDouble)).to(like.scalar_type()).to(like.device()).view(shape);
}

}  // namespace

Tensor upsample(const Tensor& x, IntArrayRef size, const std::string& mode, bool align_corners,
                const std::vector<double>& scales) {
  const char* op = "upsample";
  detail::OpScope op_scope(op, {x});
  detail::check_device(x, op);  // index_selects and pointwise ops: on cuda too
  const int64_t spatial = x.dim() - 2;
  GB_CHECK(spatial >= 1 && spatial <= 3, "upsample: expected a 3-D, 4-D or 5-D input (N, C, spatial...), got shape ",
           x.sizes());
  GB_CHECK(int64_t(size.size()) == spatial, "upsample: the output size ", size, " must give one size per spatial "
           "dim of the input of shape ", x.sizes());
  const bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  GB_CHECK(mode == "nearest" || linear, "upsample: mode '", mode, "' is not supported by glassbox (it has nearest, "
           "linear, bilinear, trilinear)");
  const int64_t want_dims = mode == "linear" ? 1 : mode == "bilinear" ? 2 : mode == "trilinear" ? 3 : spatial;
  GB_CHECK(want_dims == spatial, "upsample: mode '", mode, "' expects ", want_dims + 2, "-D input, got ", x.dim(),
           "-D (shape ", x.sizes(), ")");
  GB_CHECK_TYPE(!linear || is_floating_point(x.scalar_type()), "upsample: mode '", mode,
                "' needs a floating-point input, got ", to_string(x.scalar_type()));
  Tensor out = x;
  for (int64_t k = 0; k < spatial; ++k) {
    const int64_t d = 2 + k, in = x.size(d), n = size[size_t(k)];
    GB_CHECK(n > 0 && in > 0, "upsample: input and output sizes should be greater than 0, but got input ", in,
             " and output ", n, " in spatial dim ", k);
    const double requested = size_t(k) < scales.size() ? scales[size_t(k)] : 0.0;
    if (!linear) {
      const double scale = source_scale(in, n, requested);
      std::vector<int64_t> src(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        src[size_t(i)] = std::min(int64_t(std::floor(double(i) * scale)), in - 1);
      out = out.index_select(d, index_tensor(src, x.device()));
      continue;
    }
    const double scale = align_corners ? (n > 1 ? double(in - 1) / double(n - 1) : 0.0) : source_scale(in, n, requested);
    std::vector<int64_t> i0(static_cast<size_t>(n)), i1(static_cast<size_t>(n));
    std::vector<double> w0(static_cast<size_t>(n)), w1(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double s = align_corners ? scale * double(i) : scale * (double(i) + 0.5) - 0.5;
      if (s < 0) s = 0;
      const int64_t lo = std::min(int64_t(s), in - 1);
      i0[size_t(i)] = lo;
      i1[size_t(i)] = lo < in - 1 ? lo + 1 : lo;
      w1[size_t(i)] = s - double(lo);
      w0[size_t(i)] = 1.0 - w1[size_t(i)];
    }
    out = out.index_select(d, index_tensor(i0, x.device())) * along(w0, d, x.dim(), x) +
          out.index_select(d, index_tensor(i1, x.device())) * along(w1, d, x.dim(), x);
  }
  if (out.is_same(x)) out = x.clone();
  op_scope.set_output(out);
  return out;
}

namespace nn::functional {

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  const std::string mode = o.mode().name();
  const bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear" || mode == "bicubic";
  GB_CHECK(linear || !o.align_corners().has_value(), "interpolate: align_corners option can only be set with the "
           "interpolating modes: linear | bilinear | bicubic | trilinear");
  GB_CHECK(!o.antialias(), "interpolate: antialias is not supported by glassbox; leave it false");
  GB_CHECK(o.size().has_value() != o.scale_factor().has_value(), "interpolate: ",
           o.size() ? "only one of size or scale_factor should be defined" : "either size or scale_factor should be "
           "defined");
  const int64_t spatial = input.dim() - 2;
  GB_CHECK(spatial >= 1, "interpolate: expected an input of at least 3 dims (N, C, spatial...), got shape ",
           input.sizes());
  std::vector<int64_t> size;
  std::vector<double> scales;
  if (o.size()) {
    size = *o.size();
    if (size.size() == 1 && spatial > 1) size.assign(size_t(spatial), size[0]);
  } else {
    std::vector<double> f = *o.scale_factor();
    if (f.size() == 1 && spatial > 1) f.assign(size_t(spatial), f[0]);
    GB_CHECK(int64_t(f.size()) == spatial, "interpolate: scale_factor shape must match input shape. Input is ",
             spatial, "D, scale_factor size is ", f.size());
    for (int64_t k = 0; k < spatial; ++k) size.push_back(int64_t(std::floor(double(input.size(2 + k)) * f[size_t(k)])));
    if (!o.recompute_scale_factor().value_or(false)) scales = f;
  }
  return upsample(input, size, mode, o.align_corners().value_or(false), scales);
}

}  // namespace nn::functional
}  // namespace gb
