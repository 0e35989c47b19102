// tests/engine/ops/small_gemm_test.cpp — small matrix products on libxsmm (ops/small_gemm.h): which products it
// takes, its results against a double-precision loop in every layout, and the products of mm/linear/bmm on either
// side of its size bounds.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "engine/ops/gemm_reference.h"
#include "ops/small_gemm.h"
#include "support/trace_meta.h"
#include "traces/temp_dir.h"

namespace {

bool have_xsmm() { return gb::detail::small_gemm_backend().rfind("libxsmm", 0) == 0; }

template <typename T>
void check_layouts(double tol) {
  const int n = 7, m = 13, k = 9, pad = 3;  // odd sizes and leading dimensions wider than the rows
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (double beta : {0.0, 1.0}) {
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(beta);
        const int lda = (ta ? n : k) + pad, ldb = (tb ? k : m) + pad, ldc = m + pad;
        std::vector<T> a(size_t((ta ? k : n) * lda)), b(size_t((tb ? m : k) * ldb)), c(size_t(n * ldc));
        for (size_t i = 0; i < a.size(); ++i) a[i] = T(std::sin(0.37 * double(i)));
        for (size_t i = 0; i < b.size(); ++i) b[i] = T(std::cos(0.21 * double(i)));
        for (size_t i = 0; i < c.size(); ++i) c[i] = T(0.5 * std::sin(double(i)));
        const auto want = gbtest::gemm_in_double<T>(ta, tb, n, m, k, a, lda, b, ldb, beta, c, ldc);
        std::vector<T> got = c;
        REQUIRE(
            gb::detail::small_gemm<T>(ta, tb, n, m, k, T(1), a.data(), lda, b.data(), ldb, T(beta), got.data(), ldc));
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < ldc; ++j) {
            const size_t at = size_t(i) * ldc + j;
            if (j < m)
              CHECK(std::abs(double(got[at]) - want[at]) <= tol);
            else
              CHECK(got[at] == c[at]);  // the padding between rows is never written
          }
      }
}

}  // namespace

TEST_CASE("small_gemm takes small products at alpha 1 and beta 0 or 1, and leaves the rest to OpenBLAS") {
  if (!have_xsmm()) {
    MESSAGE("built without libxsmm: " << gb::detail::small_gemm_backend());
    CHECK_FALSE(gb::detail::small_gemm_fits(false, 32, 64, 64, 1.0, 0.0));
    return;
  }
  using gb::detail::small_gemm_fits;
  if (gb::detail::cpu_isa() != gb::detail::cpu_isa_supported() ||
      gb::detail::cpu_isa_supported() == gb::detail::CpuIsa::baseline) {
    // GLASSBOX_CPU_CAPABILITY narrower than the CPU (the .baseline run), or a CPU without AVX2: OpenBLAS's
    CHECK_FALSE(small_gemm_fits(false, 32, 64, 64, 1.0, 0.0));
    if (gb::detail::cpu_isa() != gb::detail::cpu_isa_supported())
      CHECK(gb::detail::small_gemm_backend().find("unused") != std::string::npos);
    return;
  }
  CHECK(small_gemm_fits(false, 32, 64, 64, 1.0, 0.0));
  CHECK(small_gemm_fits(true, 32, 64, 64, 1.0, 1.0));
  CHECK(small_gemm_fits(false, 256, 128, 128, 1.0, 0.0));        // 4M multiply-adds: the bound itself
  CHECK_FALSE(small_gemm_fits(false, 257, 128, 128, 1.0, 0.0));  // past it
  CHECK(small_gemm_fits(true, 128, 128, 64, 1.0, 0.0));          // a transposed B of 8K elements is copied
  CHECK_FALSE(small_gemm_fits(true, 128, 128, 65, 1.0, 0.0));    // a bigger one is not
  CHECK_FALSE(small_gemm_fits(false, 32, 64, 64, 2.0, 0.0));     // alpha other than 1
  CHECK_FALSE(small_gemm_fits(false, 32, 64, 64, 1.0, 0.5));     // beta other than 0 or 1
  CHECK_FALSE(small_gemm_fits(true, 3, 64, 64, 1.0, 0.0));       // a transposed B with too few rows to pay its copy
  CHECK(small_gemm_fits(false, 3, 64, 64, 1.0, 0.0));
  CHECK_FALSE(small_gemm_fits(false, 0, 64, 64, 1.0, 0.0));
  {  // kernels held narrower than the CPU's: products stay on OpenBLAS
    gb::detail::CpuIsaGuard narrow(gb::detail::CpuIsa::baseline);
    CHECK_FALSE(small_gemm_fits(false, 32, 64, 64, 1.0, 0.0));
  }
  CHECK(gb::detail::small_gemm_backend().find("unused") == std::string::npos);
}

TEST_CASE("small_gemm matches a double-precision product in every layout, leading dimension and beta") {
  if (!have_xsmm() || !gb::detail::small_gemm_fits(false, 8, 8, 8, 1.0, 0.0)) return;  // see the case above
  check_layouts<float>(1e-5);
  check_layouts<double>(1e-12);
}

TEST_CASE("mm, linear and bmm agree with a double-precision product on either side of the small bound") {
  gb::manual_seed(3);
  for (int64_t s : {4, 32, 64, 65, 96, 160}) {  // 160^2 x 163 is past 4M multiply-adds: OpenBLAS
    CAPTURE(s);
    auto a = gb::randn({s, s + 3}), w = gb::randn({s - 1, s + 3}), bias = gb::randn({s - 1});
    auto want = gb::mm(a.to(gb::kDouble), w.to(gb::kDouble).t());
    CHECK(gb::allclose(gb::mm(a, w.t()).to(gb::kDouble), want, 1e-4, 1e-4));
    CHECK(
        gb::allclose(gb::nn::functional::linear(a, w, bias).to(gb::kDouble), want + bias.to(gb::kDouble), 1e-4, 1e-4));
    CHECK(gb::allclose(gb::mm(a.t().contiguous().t(), w.t()).to(gb::kDouble), want, 1e-4, 1e-4));
    auto ab = gb::randn({3, s, 8}), bb = gb::randn({3, 8, s});
    CHECK(gb::allclose(gb::bmm(ab, bb).to(gb::kDouble), gb::bmm(ab.to(gb::kDouble), bb.to(gb::kDouble)), 1e-4, 1e-4));
  }
}

TEST_CASE("a product repeats bit for bit: the same shape always takes the same path") {
  auto a = gb::randn({32, 64}), w = gb::randn({48, 64});
  auto first = gb::mm(a, w.t());
  for (int i = 0; i < 3; ++i) CHECK(gb::equal(gb::mm(a, w.t()), first));
}

#ifndef GLASSBOX_NO_PROBES  // a build without probes writes no meta
TEST_CASE("a trace records which kernels ran its small products (meta small_gemm)") {
  TempDir tmp;
  const std::string path = tmp.file("t.db");
  {
    gb::trace::Session session(path);
    gb::mm(gb::randn({8, 8}), gb::randn({8, 8}));
  }
  const std::string value = gbtest::trace_meta(path, "small_gemm");
  CHECK(value == gb::detail::small_gemm_backend());
  CHECK((value.rfind("libxsmm ", 0) == 0 || value.rfind("off: ", 0) == 0));
}
#endif
