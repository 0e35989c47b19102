// Tests engine/monitor/scan.cpp: NaN / Inf / zero counts, the sum of squares against float64, the largest finite
// |x|, every floating dtype, non-contiguous tensors, and the fused update norm.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <limits>

#include "monitor/scan.h"

using gb::monitor::detail::scan;

TEST_CASE("scan counts NaN, Inf and zeros and sums squares like float64 (a length that is no block multiple)") {
  gb::manual_seed(3);
  gb::Tensor t = gb::randn({1000, 3});  // 3000 elements: 11 full blocks and a tail
  auto flat = t.view({-1});
  flat.narrow(0, 10, 4).fill_(0.0);
  double want = 0, max_abs = 0;
  gb::Tensor d = t.to(gb::kDouble);
  for (int64_t i = 0; i < 3000; ++i) {
    double v = d.view({-1})[i].item<double>();
    want += v * v;
    max_abs = std::max(max_abs, std::fabs(v));
  }
  auto r = scan(t);
  CHECK(r.scanned);
  CHECK(r.n == 3000);
  CHECK(r.nan == 0);
  CHECK(r.inf == 0);
  CHECK(r.zeros == 4);
  CHECK(r.sumsq == doctest::Approx(want).epsilon(1e-7));
  CHECK(r.max_abs == doctest::Approx(max_abs).epsilon(1e-7));
  flat.narrow(0, 2999, 1).fill_(std::nan(""));
  flat.narrow(0, 5, 2).fill_(-INFINITY);
  r = scan(t);
  CHECK(r.nan == 1);
  CHECK(r.inf == 2);
  CHECK(std::isnan(r.norm()));
  CHECK(r.max_abs == INFINITY);
}

TEST_CASE("scan: float64, bfloat16, float16, non-contiguous; integers and meta are not scanned") {
  gb::Tensor x = gb::tensor(std::vector<double>{3, 0, -4, 0});
  for (auto dt : {gb::kDouble, gb::kFloat, gb::kBFloat16, gb::kHalf}) {
    auto r = scan(x.to(dt));
    CHECK(r.scanned);
    CHECK(r.sumsq == 25.0);
    CHECK(r.norm() == 5.0);
    CHECK(r.max_abs == 4.0);
    CHECK(r.zeros == 2);
  }
  gb::Tensor m = gb::arange(12, gb::TensorOptions().dtype(gb::kFloat)).view({3, 4}).t();
  CHECK(!m.is_contiguous());
  CHECK(scan(m).sumsq == 506.0);  // 0^2 + ... + 11^2 (a transpose: scanned in place)
  gb::Tensor strided = gb::arange(12, gb::TensorOptions().dtype(gb::kFloat)).view({3, 4}).narrow(1, 0, 2);
  CHECK(scan(strided).sumsq == 0 + 1 + 16 + 25 + 64 + 81);  // not dense: through a copy
  CHECK(!scan(gb::ones({3}, gb::TensorOptions().dtype(gb::kLong))).scanned);
  CHECK(!scan(gb::empty({3}, gb::TensorOptions().device(gb::kMeta))).scanned);
}

TEST_CASE("update_sums: |u|^2 for u = cp * p + ca * a / b, and the norm of p before cp * p, from one pass, vs float64") {
  gb::manual_seed(4);
  gb::Tensor p = gb::randn({777}), a = gb::randn({777}), b = gb::rand({777}) + 0.5;
  auto check = [&](double cp, const gb::Tensor& bb, double ca, const gb::Tensor& pp, const gb::Tensor& aa, double eps) {
    gb::Tensor pd = pp.to(gb::kDouble), ad = aa.to(gb::kDouble);
    gb::Tensor u = pd * cp + (bb.defined() ? ad / bb.to(gb::kDouble) : ad) * ca;
    auto r = gb::monitor::detail::update_sums(pp, cp, aa, bb, ca);
    CHECK(r.norm() == doctest::Approx(u.pow(2).sum().sqrt().item<double>()).epsilon(eps));
    // p already holds the cp * p part (p = p0 + cp * p): the parameter before the update is (1 - cp) * p
    CHECK(r.param_norm_before() == doctest::Approx((pd * (1 - cp)).pow(2).sum().sqrt().item<double>()).epsilon(eps));
  };
  check(-0.01, b, 0.3, p, a, 1e-6);                                                // AdamW: decay and m / denom
  check(0, gb::Tensor(), -0.1, p, a, 1e-6);                                        // SGD
  check(0, gb::Tensor(), -0.1, p.to(gb::kDouble), a.to(gb::kDouble), 1e-12);       // float64
  check(0, gb::Tensor(), -0.1, p.view({7, 111}).t(), a.view({7, 111}).t(), 1e-6);  // non-contiguous
}

TEST_CASE("all_finite finds one NaN or Inf anywhere: in a 32-element group, in the tail, in a transposed tensor") {
  using gb::monitor::detail::all_finite;
  gb::manual_seed(5);
  for (int64_t n : {1, 31, 32, 33, 1000, 4099}) {
    CAPTURE(n);
    gb::Tensor t = gb::randn({n});
    CHECK(all_finite(t));
    for (int64_t at : {int64_t(0), n / 2, n - 1}) {
      CAPTURE(at);
      gb::Tensor u = t.clone();
      u.narrow(0, at, 1).fill_(std::nan(""));
      CHECK_FALSE(all_finite(u));
      u.narrow(0, at, 1).fill_(-INFINITY);
      CHECK_FALSE(all_finite(u));
      u.narrow(0, at, 1).fill_(3.4e38);  // the largest floats are finite
      CHECK(all_finite(u));
    }
  }
  gb::Tensor m = gb::randn({40, 7});
  m.narrow(0, 39, 1).narrow(1, 6, 1).fill_(INFINITY);
  CHECK_FALSE(all_finite(m.t()));                                // dense, not contiguous: read as it lies
  CHECK_FALSE(all_finite(m.to(gb::kDouble)));                    // other dtypes: through scan
  CHECK(all_finite(gb::randint(0, 3, {5})));                     // not scannable: nothing to find
  CHECK_FALSE(all_finite(m.narrow(0, 30, 10).narrow(1, 5, 2)));  // neither: a copy
}

TEST_CASE("count_zeros counts exact zeros of either sign and sees a NaN or an Inf, like scan") {
  using gb::monitor::detail::count_zeros;
  gb::Tensor t = gb::relu(gb::randn({33, 31}));  // 1023 elements: blocks of 256 and a tail
  auto z = count_zeros(t);
  auto s = gb::monitor::detail::scan(t);
  CHECK(z.n == 1023);
  CHECK(z.zeros == s.zeros);
  CHECK(z.zeros > 300);
  CHECK(z.finite);
  t.view({-1}).narrow(0, 1022, 1).fill_(-0.0);
  t.view({-1}).narrow(0, 1000, 1).fill_(std::nan(""));
  z = count_zeros(t);
  CHECK(z.zeros == count_zeros(t.t()).zeros);  // transposed: read as it lies
  CHECK(z.zeros == gb::monitor::detail::scan(t).zeros);
  CHECK_FALSE(z.finite);
  CHECK(count_zeros(t.to(gb::kDouble)).zeros == z.zeros);  // other dtypes: through scan
}

TEST_CASE("a tensor large enough to be checked by the pool's threads: the same answers, a NaN or Inf in any part") {
  using gb::monitor::detail::all_finite;
  using gb::monitor::detail::count_zeros;
  const int before = gb::get_num_threads();
  gb::set_num_threads(2);
  gb::Tensor t = gb::relu(gb::randn({1000, 333}));  // 333,000 elements: parts of 65,536 and a short last one
  CHECK(all_finite(t));
  auto z = count_zeros(t);
  CHECK(z.n == 333000);
  CHECK(z.zeros == gb::monitor::detail::scan(t).zeros);  // the serial full scan agrees
  CHECK(z.finite);
  for (int64_t at : {int64_t(0), int64_t(70000), int64_t(200001), int64_t(332999)}) {
    CAPTURE(at);
    gb::Tensor u = t.clone();
    u.view({-1}).narrow(0, at, 1).fill_(at % 2 ? std::numeric_limits<double>::infinity() : std::nan(""));
    CHECK_FALSE(all_finite(u));
    CHECK_FALSE(count_zeros(u).finite);
    CHECK(count_zeros(u).zeros == z.zeros - (t.view({-1})[at].item<float>() == 0.0f ? 1 : 0));
  }
  gb::set_num_threads(before);
}
