// engine/core/print.cpp — operator<< for tensors, in PyTorch's repr format (torch/_tensor_str.py):
//
//   tensor([[ 1.0000, -0.5000],
//           [ 3.2500,  0.0000]], dtype=gb.float64, requires_grad=True)
//
// Same rules as PyTorch: 4 digits of precision; integer mode ("1.") when every finite value is whole; scientific
// notation when max/min > 1000, max > 1e8 or min < 1e-4; right-aligned columns; 80-column wrapping; tensors over
// 1000 elements summarized with "..." and 3 edge items per dim.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/dispatch.h"
#include "glassbox/autograd/node.h"
#include "glassbox/core/tensor.h"
#include "glassbox/ops/factory.h"

namespace gb {
namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

struct Formatter {
  bool floating = false, is_bool = false, int_mode = true, sci_mode = false;
  size_t max_width = 1;

  std::string raw(double v) const {
    char buf[64];
    if (is_bool) return v != 0 ? "True" : "False";
    if (!floating) {
      std::snprintf(buf, sizeof buf, "%lld", (long long)v);
      return buf;
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode) std::snprintf(buf, sizeof buf, "%.*e", kPrecision, v);
    else if (int_mode) std::snprintf(buf, sizeof buf, "%.0f.", v);
    else std::snprintf(buf, sizeof buf, "%.*f", kPrecision, v);
    return buf;
  }
  std::string format(double v) const {
    std::string s = raw(v);
    if (s.size() < max_width) s.insert(0, max_width - s.size(), ' ');
    return s;
  }
};

// All values of the (contiguous, double) tensor that will be shown: the summarized corners when summarizing.
void collect_shown(const double* p, IntArrayRef sizes, int64_t dim, int64_t offset, const std::vector<int64_t>& strides,
                   bool summarize, std::vector<double>& out) {
  if (dim == int64_t(sizes.size())) {
    out.push_back(p[offset]);
    return;
  }
  int64_t n = sizes[dim];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    collect_shown(p, sizes, dim + 1, offset + i * strides[dim], strides, summarize, out);
  }
}

Formatter make_formatter(const std::vector<double>& vals, ScalarType t) {
  Formatter f;
  f.floating = is_floating_point(t);
  f.is_bool = t == kBool;
  if (!f.floating) {
    for (double v : vals) f.max_width = std::max(f.max_width, f.raw(v).size());
    return f;
  }
  std::vector<double> nz;
  for (double v : vals)
    if (std::isfinite(v) && v != 0) nz.push_back(v);
  if (nz.empty()) return f;
  double amin = INFINITY, amax = 0;
  for (double v : nz) {
    amin = std::min(amin, std::fabs(v));
    amax = std::max(amax, std::fabs(v));
    if (v != std::ceil(v)) f.int_mode = false;
  }
  if (f.int_mode) {
    if (amax / amin > 1000. || amax > 1e8) f.sci_mode = true;
  } else {
    if (amax / amin > 1000. || amax > 1e8 || amin < 1e-4) f.sci_mode = true;
  }
  for (double v : nz) f.max_width = std::max(f.max_width, f.raw(v).size());
  return f;
}

std::string vector_str(const double* p, int64_t n, int64_t stride, int64_t offset, int indent, bool summarize,
                       const Formatter& f) {
  size_t element_length = f.max_width + 2;
  int64_t per_line = std::max<int64_t>(1, int64_t(std::floor(double(kLineWidth - indent) / double(element_length))));
  std::vector<std::string> data;
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) data.push_back(f.format(p[offset + i * stride]));
    data.push_back(" ...");
    for (int64_t i = n - kEdgeItems; i < n; ++i) data.push_back(f.format(p[offset + i * stride]));
  } else {
    for (int64_t i = 0; i < n; ++i) data.push_back(f.format(p[offset + i * stride]));
  }
  std::string out = "[";
  for (size_t i = 0; i < data.size(); ++i) {
    if (i > 0) {
      if (int64_t(i) % per_line == 0) out += ",\n" + std::string(size_t(indent + 1), ' ');
      else out += ", ";
    }
    out += data[i];
  }
  return out + "]";
}

std::string tensor_str(const double* p, IntArrayRef sizes, const std::vector<int64_t>& strides, int64_t dim,
                       int64_t offset, int indent, bool summarize, const Formatter& f) {
  int64_t nd = int64_t(sizes.size()) - dim;
  if (nd == 1) return vector_str(p, sizes[dim], strides[dim], offset, indent, summarize, f);
  int64_t n = sizes[dim];
  std::vector<std::string> slices;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      slices.push_back("...");
      i = n - kEdgeItems;
    }
    slices.push_back(tensor_str(p, sizes, strides, dim + 1, offset + i * strides[dim], indent + 1, summarize, f));
  }
  std::string sep = "," + std::string(size_t(nd - 1), '\n') + std::string(size_t(indent + 1), ' ');
  std::string out = "[";
  for (size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
  return out + "]";
}

}  // namespace

void Tensor::print() const {
  if (!defined()) {
    std::cout << "[UndefinedTensorImpl]" << std::endl;
    return;
  }
  std::cout << "[" << (is_cuda() ? "CUDA" : is_meta() ? "Meta" : "CPU") << to_string(scalar_type()) << "Type [";
  for (int64_t d = 0; d < dim(); ++d) std::cout << (d ? ", " : "") << size(d);
  std::cout << "]]" << std::endl;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int indent = int(prefix.size());
  std::vector<std::string> suffixes;
  std::string body;
  if (t.is_meta()) {
    body = "...";
    std::ostringstream s;
    s << "size=(";
    for (int64_t d = 0; d < t.dim(); ++d) s << (d ? ", " : "") << t.size(d);
    s << (t.dim() == 1 ? ",)" : ")");
    suffixes.push_back(s.str());
  } else if (t.numel() == 0 && t.dim() > 0) {
    body = "[]";
    if (!(t.dim() == 1 && t.size(0) == 0)) {
      std::ostringstream s;
      s << "size=(";
      for (int64_t d = 0; d < t.dim(); ++d) s << (d ? ", " : "") << t.size(d);
      s << (t.dim() == 1 ? ",)" : ")");
      suffixes.push_back(s.str());
    }
  } else {
    Tensor c = t.detach().to(kCPU).to(kDouble).contiguous();  // a cuda tensor's values are copied to the host
    const double* p = c.data_ptr<double>();
    bool summarize = t.numel() > kThreshold;
    std::vector<double> shown;
    std::vector<int64_t> strides = c.strides().vec();
    collect_shown(p, c.sizes(), 0, 0, strides, summarize, shown);
    Formatter f = make_formatter(shown, t.scalar_type());
    if (t.dim() == 0) {
      f.max_width = 0;
      body = f.format(p[0]);
    } else {
      body = tensor_str(p, c.sizes(), strides, 0, 0, indent, summarize, f);
    }
  }
  if (!t.device().is_cpu()) suffixes.insert(suffixes.begin(), "device='" + t.device().str() + "'");
  ScalarType dt = t.scalar_type();
  if (dt != get_default_dtype() && dt != kInt64 && dt != kBool)
    suffixes.push_back(std::string("dtype=gb.") + python_name(dt));
  if (t.grad_fn()) suffixes.push_back("grad_fn=<" + t.grad_fn()->name() + ">");
  else if (t.requires_grad()) suffixes.push_back("requires_grad=True");

  std::string out = prefix + body;
  for (const auto& s : suffixes) {
    size_t last_nl = out.rfind('\n');
    size_t last_len = last_nl == std::string::npos ? out.size() : out.size() - last_nl - 1;
    if (last_len + s.size() + 2 > size_t(kLineWidth)) out += ",\n" + std::string(size_t(indent), ' ') + s;
    else out += ", " + s;
  }
  return os << out << ')';
}

}  // namespace gb
