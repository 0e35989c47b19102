// engine/monitor/scan.cpp — the monitor's one pass per tensor: non-finite and zero counts, sum of squares, max |x|.
// Bit tests on the IEEE representation (exponent all ones: Inf or NaN) and per-block float partial sums keep the
// loops branch-free, so they vectorize; target_clones adds an AVX2 version picked at load time where it runs.
#include "monitor/scan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "glassbox/core/half.h"
#include "glassbox/core/parallel.h"
#include "core/multiversion.h"
#include "monitor/lanes.h"

namespace gb::monitor::detail {

double ScanResult::norm() const { return nan ? std::nan("") : std::sqrt(sumsq); }

namespace {

constexpr int64_t kBlock = 256;  // float partial sums of at most 32 squares per lane, then double

struct Partial {
  int64_t nan = 0, inf = 0, zeros = 0;
  double sumsq = 0;
  float max_abs = 0;
};

// float32: one block at a time in 8-lane vectors, the counts and the largest finite |x| by lanes.h's bit tests,
// squares as float partial sums added into double per block.
GB_AVX2_CLONES void scan_f32(const float* x, int64_t n, Partial& out) {
  uint32_t top;
  std::memcpy(&top, &out.max_abs, 4);
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    const float* p = x + b;
    LaneCounts lanes;
    vf8 acc = {};
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      vf8 v;
      std::memcpy(&v, p + i, sizeof v);
      lanes.add(v);
      acc += v * v;
    }
    float tail_acc = 0;
    for (; i < m; ++i) {
      lanes.add_one(p[i]);
      tail_acc += p[i] * p[i];
    }
    double s = tail_acc;
    for (int j = 0; j < 8; ++j) s += acc[j];
    lanes.drain(out.nan, out.inf, out.zeros, top);
    out.sumsq += s;
  }
  std::memcpy(&out.max_abs, &top, 4);
}

// float32: the largest |x| as bits over 32 elements a step (four independent 8-lane maxima); an exponent of all ones
// is an Inf or a NaN.
GB_AVX2_CLONES bool finite_f32(const float* x, int64_t n) {
  vu8 m0 = {}, m1 = {}, m2 = {}, m3 = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    vu8 a, b, c, d;
    std::memcpy(&a, x + i, sizeof a);
    std::memcpy(&b, x + i + 8, sizeof b);
    std::memcpy(&c, x + i + 16, sizeof c);
    std::memcpy(&d, x + i + 24, sizeof d);
    a &= 0x7fffffffu;
    b &= 0x7fffffffu;
    c &= 0x7fffffffu;
    d &= 0x7fffffffu;
    m0 = a > m0 ? a : m0;
    m1 = b > m1 ? b : m1;
    m2 = c > m2 ? c : m2;
    m3 = d > m3 ? d : m3;
  }
  m0 = m1 > m0 ? m1 : m0;
  m2 = m3 > m2 ? m3 : m2;
  m0 = m2 > m0 ? m2 : m0;
  uint32_t top = 0;
  for (int j = 0; j < 8; ++j) top = std::max(top, m0[j]);
  for (; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, 4);
    top = std::max(top, u & 0x7fffffffu);
  }
  return top < 0x7f800000u;
}

// float32: exact zeros (either sign) and the largest |x| as bits, 8 lanes at a time.
GB_AVX2_CLONES void zeros_f32(const float* x, int64_t n, int64_t& zeros,
                                                                 uint32_t& top) {
  for (int64_t b = 0; b < n; b += kBlock) {  // uint32 lane counts: a block keeps them small
    const int64_t m = std::min(kBlock, n - b);
    vu8 z = {}, mx = {};
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      vu8 u;
      std::memcpy(&u, x + b + i, sizeof u);
      u &= 0x7fffffffu;
      z -= (vu8)(u == 0u);
      mx = u > mx ? u : mx;
    }
    for (int j = 0; j < 8; ++j) {
      zeros += z[j];
      top = std::max(top, mx[j]);
    }
    for (; i < m; ++i) {
      uint32_t u;
      std::memcpy(&u, x + b + i, 4);
      u &= 0x7fffffffu;
      zeros += u == 0;
      top = std::max(top, u);
    }
  }
}

// Any other floating type, element by element in double (float64 tensors and the 16-bit types are rare here).
template <typename T>
void scan_generic(const T* x, int64_t n, Partial& out, double& max_abs) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = static_cast<double>(static_cast<float>(x[i]));
    if constexpr (std::is_same_v<T, double>) v = x[i];
    if (std::isnan(v))
      ++out.nan;
    else if (std::isinf(v))
      ++out.inf;
    else
      max_abs = std::max(max_abs, std::fabs(v));
    out.zeros += v == 0;
    s += v * v;
  }
  out.sumsq += s;
}

}  // namespace

bool scannable(const Tensor& t) { return t.defined() && t.is_floating_point() && t.device().is_cpu() && t.numel() > 0; }

namespace {
// True when t's elements fill one block of memory in some order (a transpose or permute of a contiguous tensor):
// counts and sums do not depend on the order, so the block is scanned as it lies, without a copy.
bool dense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims with size > 1
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) dims.emplace_back(t.stride(d), t.size(d));
  std::sort(dims.begin(), dims.end());
  int64_t expect = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expect) return false;
    expect *= size;
  }
  return true;
}
}  // namespace

// A large activation or gradient (a conv's output) is checked by the pool's threads, each over its own part: the
// check is a memory-bound pass, and the cores the step's kernels use are idle while the training thread makes it.
constexpr int64_t kParallelGrain = 1 << 16;  // elements per part; a smaller tensor is one pass on this thread

bool all_finite(const Tensor& t) {
  if (!scannable(t)) return true;
  if (t.scalar_type() == kFloat && (t.is_contiguous() || dense(t))) {
    const float* x = static_cast<const float*>(t.data_ptr());
    const int64_t n = t.numel();
    if (n < 2 * kParallelGrain) return finite_f32(x, n);
    std::atomic<bool> finite{true};
    parallel_for(0, n, kParallelGrain, [&](int64_t b, int64_t e) {
      if (!finite_f32(x + b, e - b)) finite.store(false, std::memory_order_relaxed);
    });
    return finite.load(std::memory_order_relaxed);
  }
  return scan(t).nonfinite() == 0;
}

ZeroCount count_zeros(const Tensor& t) {
  ZeroCount z;
  if (!scannable(t)) return z;
  z.n = t.numel();
  if (t.scalar_type() == kFloat && (t.is_contiguous() || dense(t))) {
    const float* x = static_cast<const float*>(t.data_ptr());
    uint32_t top = 0;
    if (z.n < 2 * kParallelGrain) {
      zeros_f32(x, z.n, z.zeros, top);
    } else {
      std::atomic<int64_t> zeros{0};
      std::atomic<uint32_t> max_bits{0};
      parallel_for(0, z.n, kParallelGrain, [&](int64_t b, int64_t e) {
        int64_t part = 0;
        uint32_t part_top = 0;
        zeros_f32(x + b, e - b, part, part_top);
        zeros.fetch_add(part, std::memory_order_relaxed);
        uint32_t seen = max_bits.load(std::memory_order_relaxed);
        while (part_top > seen && !max_bits.compare_exchange_weak(seen, part_top, std::memory_order_relaxed)) {
        }
      });
      z.zeros = zeros.load(std::memory_order_relaxed);
      top = max_bits.load(std::memory_order_relaxed);
    }
    z.finite = top < 0x7f800000u;
    return z;
  }
  const ScanResult s = scan(t);
  z.zeros = s.zeros;
  z.finite = s.nonfinite() == 0;
  return z;
}

ScanResult scan(const Tensor& t) {
  ScanResult r;
  if (!scannable(t)) return r;
  Tensor c = t.is_contiguous() || dense(t) ? t : t.contiguous();
  Partial p;
  double max_abs = 0;
  const int64_t n = c.numel();
  switch (c.scalar_type()) {
    case kFloat:
      scan_f32(static_cast<const float*>(c.data_ptr()), n, p);
      max_abs = p.max_abs;
      break;
    case kDouble:
      scan_generic(static_cast<const double*>(c.data_ptr()), n, p, max_abs);
      break;
    case kHalf:
      scan_generic(static_cast<const Half*>(c.data_ptr()), n, p, max_abs);
      break;
    case kBFloat16:
      scan_generic(static_cast<const BFloat16*>(c.data_ptr()), n, p, max_abs);
      break;
    default:
      return r;
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
// One pass over p, a (and b): sums of u^2 and p^2 for u = cp * p + ca * a / b, in float lanes per block, double
// across blocks. B: whether b is given. (Inlined into the two target_clones functions below: Clang multiversions
// no function templates.)
template <bool B>
__attribute__((always_inline)) inline void update_f32_impl(const float* p, double cp, const float* a, const float* b,
                                                           double ca, int64_t n, UpdateSums& out) {
  const float fp = static_cast<float>(cp), fa = static_cast<float>(ca);
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    vf8 uu = {}, pp = {};
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) {
      vf8 vp, va;
      std::memcpy(&vp, p + s + i, sizeof vp);
      std::memcpy(&va, a + s + i, sizeof va);
      if constexpr (B) {
        vf8 vb;
        std::memcpy(&vb, b + s + i, sizeof vb);
        va /= vb;
      }
      const vf8 u = fp * vp + fa * va;  // fa * va: the part added after this pass
      uu += u * u;
      pp += vp * vp;
    }
    double suu = 0, spp = 0;
    for (; i < m; ++i) {
      const int64_t k = s + i;
      const float u = fp * p[k] + fa * (B ? a[k] / b[k] : a[k]);
      suu += u * u;
      spp += p[k] * p[k];
    }
    for (int j = 0; j < 8; ++j) {
      suu += uu[j];
      spp += pp[j];
    }
    out.uu += suu;
    out.pp += spp;
  }
}
GB_AVX2_CLONES void update_f32(const float* p, double cp, const float* a, double ca,
                                                                  int64_t n, UpdateSums& out) {
  update_f32_impl<false>(p, cp, a, nullptr, ca, n, out);
}
GB_AVX2_CLONES void update_f32_ratio(const float* p, double cp, const float* a,
                                                                        const float* b, double ca, int64_t n,
                                                                        UpdateSums& out) {
  update_f32_impl<true>(p, cp, a, b, ca, n, out);
}
}  // namespace

// p holds the value after cp * p was done to it (AdamW's decay: p = p0 + cp * p), so p0 = (1 - cp) * p.
double UpdateSums::param_norm_before() const { return std::abs(1 - cp) * std::sqrt(std::max(0.0, pp)); }

UpdateSums update_sums(const Tensor& p, double cp, const Tensor& a, const Tensor& b, double ca) {
  UpdateSums r;
  r.cp = cp;
  if (!scannable(p) || !a.defined() || a.numel() != p.numel()) {
    r.uu = r.pp = std::nan("");
    return r;
  }
  const bool f32 =
      p.scalar_type() == kFloat && a.scalar_type() == kFloat && (!b.defined() || b.scalar_type() == kFloat);
  if (f32 && p.is_contiguous() && a.is_contiguous() && (!b.defined() || b.is_contiguous())) {
    if (b.defined())
      update_f32_ratio(p.data_ptr<float>(), cp, a.data_ptr<float>(), b.data_ptr<float>(), ca, p.numel(), r);
    else
      update_f32(p.data_ptr<float>(), cp, a.data_ptr<float>(), ca, p.numel(), r);
    return r;
  }
  Tensor pc = p.to(kDouble).contiguous(), ac = a.to(kDouble).contiguous();
  Tensor bc = b.defined() ? b.to(kDouble).contiguous() : Tensor();
  const double* pd = pc.data_ptr<double>();
  const double* ad = ac.data_ptr<double>();
  const double* bd = bc.defined() ? bc.data_ptr<double>() : nullptr;
  for (int64_t k = 0; k < p.numel(); ++k) {
    const double w = ca * (bd ? ad[k] / bd[k] : ad[k]);
    const double u = cp * pd[k] + w;
    r.uu += u * u;
    r.pp += pd[k] * pd[k];
  }
  return r;
}

}  // namespace gb::monitor::detail
