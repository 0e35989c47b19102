// tests/engine/ops/vec_math_test.cpp — engine/ops/vec_math.h: the 16-lane exp (exp_vec_inplace at each instruction
// set's native width) gives the scalar exp_vec's bits on every lane, over a sweep of the float range and the special
// values, under every instruction set this CPU has; exp_vec within 2 ulp of std::exp; extreme_vec's max and min with
// NaN and tails.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/cpu_isa.h"
#include "ops/vec_math.h"
#include "support/check.h"

namespace {

using gb::detail::CpuIsa;
using gb::detail::Float16v;

// The 16-lane exp compiled for each instruction set at its native width, over n (a multiple of 16) floats: an
// always-inline body in the per-ISA wrappers, as the engine's kernels are written (core/cpu_isa.h).
template <int W>
GB_ALWAYS_INLINE void exp16_rows(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    Float16v v = gb::detail::load16(x + i);
    gb::detail::exp_vec_inplace<W>(v);
    gb::detail::store16(y + i, v);
  }
}
void exp16_rows_baseline(const float* x, float* y, int64_t n) { exp16_rows<4>(x, y, n); }
#if GB_HAS_ISA_VARIANTS
GB_TARGET_AVX2 void exp16_rows_avx2(const float* x, float* y, int64_t n) { exp16_rows<8>(x, y, n); }
GB_TARGET_AVX512 void exp16_rows_avx512(const float* x, float* y, int64_t n) { exp16_rows<16>(x, y, n); }
#endif

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::vector<float> sweep() {
  std::vector<float> x;
  for (int i = -120000; i < 100000; ++i) x.push_back(float(i) * 1e-3f);  // -120 .. 100: both clamps and between
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (float s : {0.0f, -0.0f, inf, -inf, nan, -nan, 88.72283f, 88.7229f, -104.0f, -104.0001f, -87.3f, 1e-30f, -1e-30f,
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::lowest()})
    x.push_back(s);
  while (x.size() % 16) x.push_back(1.0f);
  return x;
}

}  // namespace

TEST_CASE("the 16-lane exp has the scalar exp's bits on every lane, under every instruction set") {
  const std::vector<float> x = sweep();
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = gb::detail::exp_vec(x[i]);
  using Fn = void (*)(const float*, float*, int64_t);
  std::vector<std::pair<CpuIsa, Fn>> paths{{CpuIsa::baseline, &exp16_rows_baseline}};
#if GB_HAS_ISA_VARIANTS
  paths.push_back({CpuIsa::avx2, &exp16_rows_avx2});
  paths.push_back({CpuIsa::avx512, &exp16_rows_avx512});
#endif
  for (const auto& path : paths) {
    const CpuIsa isa = path.first;
    const Fn fn = path.second;
    if (static_cast<int>(isa) > static_cast<int>(gb::detail::cpu_isa_supported())) {
      MESSAGE("this CPU has no " << gb::detail::cpu_isa_name(isa) << ": that path is not run here");
      continue;
    }
    CAPTURE(gb::detail::cpu_isa_name(isa));
    std::vector<float> got(x.size());
    fn(x.data(), got.data(), int64_t(x.size()));
    size_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const bool same = std::isnan(want[i]) ? std::isnan(got[i]) : bits(got[i]) == bits(want[i]);
      if (!same && bad++ < 5) FAIL_CHECK("exp(" << x[i] << "): lane gives " << got[i] << ", scalar " << want[i]);
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("exp_vec: within 2 ulp of std::exp where the result is normal, 0 far below, inf above, NaN for NaN") {
  for (int i = -87000; i < 88000; ++i) {
    const float x = float(i) * 1e-3f;
    const float got = gb::detail::exp_vec(x), want = std::exp(x);
    const int64_t ulp = std::llabs(int64_t(bits(got)) - int64_t(bits(want)));
    if (ulp > 2) FAIL_CHECK("exp_vec(" << x << ") = " << got << " vs " << want << ": " << ulp << " ulp");
  }
  CHECK(gb::detail::exp_vec(-200.0f) == 0.0f);
  CHECK(gb::detail::exp_vec(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isinf(gb::detail::exp_vec(89.0f)));
  CHECK(std::isnan(gb::detail::exp_vec(std::numeric_limits<float>::quiet_NaN())));
  CHECK(gb::detail::exp_vec(0.0f) == 1.0f);
}

TEST_CASE("extreme_vec: the max and min of every length, a NaN anywhere propagates") {
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 37) % 101) - 50.0f;
    float mx = v[0], mn = v[0];
    for (float f : v) mx = std::max(mx, f), mn = std::min(mn, f);
    CHECK(gb::detail::extreme_vec<float, true>(v.data(), n) == mx);
    CHECK(gb::detail::extreme_vec<float, false>(v.data(), n) == mn);
    for (int64_t at : {int64_t(0), n / 2, n - 1}) {
      std::vector<float> w = v;
      w[size_t(at)] = std::numeric_limits<float>::quiet_NaN();
      CAPTURE(n);
      CAPTURE(at);
      CHECK(std::isnan(gb::detail::extreme_vec<float, true>(w.data(), n)));
      CHECK(std::isnan(gb::detail::extreme_vec<float, false>(w.data(), n)));
    }
  }
}
