// engine/monitor/scan.cpp — the monitor's one pass per tensor: non-finite and zero counts, sum of squares, max |x|.
// Bit tests on the IEEE representation (exponent all ones: Inf or NaN) and per-block float partial sums keep the
// loops branch-free, so they vectorize; target_clones adds an AVX2 version picked at load time where it runs.
#include "monitor/scan.h"

#include <cmath>
#include <cstring>

#include "glassbox/core/half.h"

namespace gb::monitor::detail {

double ScanResult::norm() const { return nan ? std::nan("") : std::sqrt(sumsq); }

namespace {

constexpr int64_t kBlock = 256;  // float partial sums of at most 32 squares per lane, then double

struct Partial {
  int64_t nan = 0, inf = 0, zeros = 0;
  double sumsq = 0;
  float max_abs = 0;
};

// float32: one block at a time in 8-lane vectors (GCC/Clang vector extensions; two SSE registers by default, one
// AVX2 register in the avx2 clone): counts as uint32 lanes (a comparison is -1 where true), the largest finite |x|
// as the integer order of its bits (the float order for non-negative finite values), squares as float partial sums
// added into double per block.
typedef float vf8 __attribute__((vector_size(32)));
typedef uint32_t vu8 __attribute__((vector_size(32)));

__attribute__((target_clones("avx2", "default"))) void scan_f32(const float* x, int64_t n, Partial& out) {
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    const float* p = x + b;
    vu8 nonfinite = {}, nan = {}, zeros = {}, mx = {};
    vf8 acc = {};
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      vf8 v;
      std::memcpy(&v, p + i, sizeof v);
      vu8 u;
      std::memcpy(&u, &v, sizeof u);
      const vu8 a = u & 0x7fffffffu;
      const vu8 bad = (vu8)(a >= 0x7f800000u);
      nonfinite -= bad;
      nan -= (vu8)(a > 0x7f800000u);
      zeros -= (vu8)(a == 0u);
      const vu8 f = a & ~bad;
      mx = f > mx ? f : mx;
      acc += v * v;
    }
    uint32_t tail_bad = 0, tail_nan = 0, tail_zero = 0, top = 0;
    float tail_acc = 0;
    for (; i < m; ++i) {
      const float v = p[i];
      uint32_t u;
      std::memcpy(&u, &v, 4);
      const uint32_t a = u & 0x7fffffffu;
      const bool bad = a >= 0x7f800000u;
      tail_bad += bad;
      tail_nan += a > 0x7f800000u;
      tail_zero += a == 0;
      if (!bad) top = std::max(top, a);
      tail_acc += v * v;
    }
    double s = tail_acc;
    for (int j = 0; j < 8; ++j) {
      out.nan += nan[j];
      out.inf += nonfinite[j] - nan[j];
      out.zeros += zeros[j];
      s += acc[j];
      top = std::max(top, mx[j]);
    }
    out.nan += tail_nan;
    out.inf += tail_bad - tail_nan;
    out.zeros += tail_zero;
    out.sumsq += s;
    float top_f;
    std::memcpy(&top_f, &top, 4);
    out.max_abs = std::max(out.max_abs, top_f);
  }
}

// Any other floating type, element by element in double (float64 tensors and the 16-bit types are rare here).
template <typename T>
void scan_generic(const T* x, int64_t n, Partial& out, double& max_abs) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = static_cast<double>(static_cast<float>(x[i]));
    if constexpr (std::is_same_v<T, double>) v = x[i];
    if (std::isnan(v)) ++out.nan;
    else if (std::isinf(v)) ++out.inf;
    else max_abs = std::max(max_abs, std::fabs(v));
    out.zeros += v == 0;
    s += v * v;
  }
  out.sumsq += s;
}

}  // namespace

bool scannable(const Tensor& t) {
  return t.defined() && t.is_floating_point() && t.device().is_cpu() && t.numel() > 0;
}

ScanResult scan(const Tensor& t) {
  ScanResult r;
  if (!scannable(t)) return r;
  Tensor c = t.is_contiguous() ? t : t.contiguous();
  Partial p;
  double max_abs = 0;
  const int64_t n = c.numel();
  switch (c.scalar_type()) {
    case kFloat: scan_f32(static_cast<const float*>(c.data_ptr()), n, p); max_abs = p.max_abs; break;
    case kDouble: scan_generic(static_cast<const double*>(c.data_ptr()), n, p, max_abs); break;
    case kHalf: scan_generic(static_cast<const Half*>(c.data_ptr()), n, p, max_abs); break;
    case kBFloat16: scan_generic(static_cast<const BFloat16*>(c.data_ptr()), n, p, max_abs); break;
    default: return r;
  }
  r.scanned = true;
  r.n = n;
  r.nan = p.nan;
  r.inf = p.inf;
  r.zeros = p.zeros;
  r.sumsq = p.sumsq;
  r.max_abs = p.inf ? INFINITY : max_abs;
  return r;
}

namespace {
__attribute__((target_clones("avx2", "default"))) double update_f32(const float* p, double cp, const float* a,
                                                                    const float* b, double ca, int64_t n) {
  double total = 0;
  const float fp = static_cast<float>(cp), fa = static_cast<float>(ca);
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= m; i += 8)
      for (int j = 0; j < 8; ++j) {
        int64_t k = s + i + j;
        float u = fp * p[k] + fa * (b ? a[k] / b[k] : a[k]);
        acc[j] += u * u;
      }
    for (; i < m; ++i) {
      int64_t k = s + i;
      float u = fp * p[k] + fa * (b ? a[k] / b[k] : a[k]);
      acc[0] += u * u;
    }
    for (float v : acc) total += v;
  }
  return total;
}
}  // namespace

double update_sumsq(const Tensor& p, double cp, const Tensor& a, const Tensor& b, double ca) {
  if (!scannable(p) || !a.defined() || a.numel() != p.numel()) return std::nan("");
  const bool f32 = p.scalar_type() == kFloat && a.scalar_type() == kFloat && (!b.defined() || b.scalar_type() == kFloat);
  if (f32) {
    Tensor pc = p.contiguous(), ac = a.contiguous(), bc = b.defined() ? b.contiguous() : Tensor();
    return update_f32(pc.data_ptr<float>(), cp, ac.data_ptr<float>(), bc.defined() ? bc.data_ptr<float>() : nullptr,
                      ca, p.numel());
  }
  Tensor pc = p.to(kDouble).contiguous(), ac = a.to(kDouble).contiguous();
  Tensor bc = b.defined() ? b.to(kDouble).contiguous() : Tensor();
  const double* pp = pc.data_ptr<double>();
  const double* ap = ac.data_ptr<double>();
  const double* bp = bc.defined() ? bc.data_ptr<double>() : nullptr;
  double total = 0;
  for (int64_t k = 0; k < p.numel(); ++k) {
    double u = cp * pp[k] + ca * (bp ? ap[k] / bp[k] : ap[k]);
    total += u * u;
  }
  return total;
}

}  // namespace gb::monitor::detail
