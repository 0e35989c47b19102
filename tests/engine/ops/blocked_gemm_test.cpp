// tests/engine/ops/blocked_gemm_test.cpp — large float products on libxsmm blocked over the pool
// (ops/blocked_gemm.h): which products it takes, its results against a double-precision loop in every layout with
// every block's tail, the same bits on one thread and two, and mm/linear/addmm/bmm past small_gemm's bound.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "engine/ops/gemm_reference.h"
#include "ops/blocked_gemm.h"
#include "support/trace_meta.h"
#include "traces/temp_dir.h"

namespace {

bool blocked_on() { return gb::detail::blocked_gemm_backend().rfind("libxsmm", 0) == 0; }

// Every layout and beta of an n x m x k product, on t1 threads and on t2: within float rounding of the double
// product, the padding between C's rows untouched, and the two thread counts bit for bit equal.
void check_product(int n, int m, int k, int t1, int t2) {
  const int pad = 5;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (double beta : {0.0, 1.0}) {
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(beta);
        const int lda = (ta ? n : k) + pad, ldb = (tb ? k : m) + pad, ldc = m + pad;
        std::vector<float> a(size_t(ta ? k : n) * lda), b(size_t(tb ? m : k) * ldb), c(size_t(n) * ldc);
        for (size_t i = 0; i < a.size(); ++i) a[i] = float(std::sin(0.37 * double(i)));
        for (size_t i = 0; i < b.size(); ++i) b[i] = float(std::cos(0.21 * double(i)));
        for (size_t i = 0; i < c.size(); ++i) c[i] = float(0.5 * std::sin(double(i)));
        const auto want = gbtest::gemm_in_double<float>(ta, tb, n, m, k, a, lda, b, ldb, beta, c, ldc);
        std::vector<float> one = c, two = c;
        REQUIRE(
            gb::detail::blocked_gemm(ta, tb, n, m, k, a.data(), lda, b.data(), ldb, float(beta), one.data(), ldc, t1));
        REQUIRE(
            gb::detail::blocked_gemm(ta, tb, n, m, k, a.data(), lda, b.data(), ldb, float(beta), two.data(), ldc, t2));
        int wrong = 0, padding_written = 0, thread_bits = 0;
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < ldc; ++j) {
            const size_t at = size_t(i) * ldc + j;
            if (j >= m) {
              padding_written += one[at] != c[at] || two[at] != c[at];
              continue;
            }
            // sums of k terms of magnitude <= 1 in float: a few ulps of sqrt(k) per term at most
            wrong += std::abs(double(one[at]) - want[at]) > 2e-4 * std::sqrt(double(k)) + 1e-5 * std::abs(want[at]);
            thread_bits += one[at] != two[at];
          }
        CHECK(wrong == 0);
        CHECK(padding_written == 0);
        CHECK(thread_bits == 0);
      }
}

}  // namespace

TEST_CASE("blocked_gemm takes large float products at alpha 1 and beta 0 or 1 on AVX-512 CPUs only") {
  using gb::detail::blocked_gemm_fits;
  if (!blocked_on()) {
    MESSAGE("large products run on OpenBLAS here: " << gb::detail::blocked_gemm_backend());
    CHECK_FALSE(blocked_gemm_fits(256, 1024, 1024, 1.0, 0.0, 2));
    CHECK(gb::detail::blocked_gemm_backend().rfind("off: ", 0) == 0);
    return;
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    CHECK(blocked_gemm_fits(256, 1024, 1024, 1.0, 0.0, threads));
    CHECK(blocked_gemm_fits(256, 1024, 1024, 1.0, 1.0, threads));
    CHECK(blocked_gemm_fits(257, 128, 128, 1.0, 0.0, threads));           // just past small_gemm's 4M
    CHECK_FALSE(blocked_gemm_fits(256, 1024, 1024, 2.0, 0.0, threads));   // alpha other than 1
    CHECK_FALSE(blocked_gemm_fits(256, 1024, 1024, 1.0, 0.5, threads));   // beta other than 0 or 1
    CHECK_FALSE(blocked_gemm_fits(8, 1 << 20, 1024, 1.0, 0.0, threads));  // a dim under 16 (matrix-vector)
    CHECK_FALSE(blocked_gemm_fits(1 << 20, 1024, 15, 1.0, 0.0, threads));
  }
  CHECK_FALSE(blocked_gemm_fits(256, 128, 128, 1.0, 0.0, 1));  // 4M on one thread: small_gemm's
  CHECK(blocked_gemm_fits(96, 96, 96, 1.0, 0.0, 2));           // past 512K with threads to share it
  CHECK_FALSE(blocked_gemm_fits(80, 80, 80, 1.0, 0.0, 2));     // 512K: the bound itself
  {  // glassbox's kernels held to AVX2 (or baseline): OpenBLAS's
    gb::detail::CpuIsaGuard narrow(gb::detail::CpuIsa::avx2);
    CHECK_FALSE(blocked_gemm_fits(256, 1024, 1024, 1.0, 0.0, 2));
    CHECK(gb::detail::blocked_gemm_backend().find("needs AVX-512") != std::string::npos);
  }
  CHECK(gb::detail::blocked_gemm_backend().find(" blocks") != std::string::npos);
}

TEST_CASE("blocked_gemm matches a double product in every layout and block tail, the same on any thread count") {
  if (!blocked_on()) return;  // see the case above
  // rows past one 256-row block, depth past one 256 slice, columns not a multiple of 64: every tail
  SUBCASE("two row blocks, nine column blocks") { check_product(300, 520, 300, 1, 2); }
  SUBCASE("a short last row block, four column blocks") { check_product(301, 200, 270, 1, 2); }
  // a mid-size product (threads only): its rows cut into blocks of 32 so that its 12 tiles split evenly
  SUBCASE("a mid-size product on 2 and 3 threads") { check_product(100, 150, 120, 2, 3); }
}

TEST_CASE("mm, linear, addmm and bmm past small_gemm's bound agree with double and repeat on any thread count") {
  gb::manual_seed(5);
  const int restore = gb::get_num_threads();
  auto x = gb::randn({260, 390}), w = gb::randn({330, 390}), bias = gb::randn({330});
  auto want = gb::mm(x.to(gb::kDouble), w.to(gb::kDouble).t());
  auto y = gb::nn::functional::linear(x, w, bias);
  CHECK(gb::allclose(y.to(gb::kDouble), want + bias.to(gb::kDouble), 1e-4, 1e-4));
  CHECK(gb::allclose(gb::mm(x, w.t()).to(gb::kDouble), want, 1e-4, 1e-4));
  CHECK(gb::allclose(gb::mm(x.t().contiguous().t(), w.t().contiguous()).to(gb::kDouble), want, 1e-4, 1e-4));
  auto g = gb::randn({260, 330});  // a linear layer's weight gradient: g^T x
  CHECK(gb::allclose(gb::mm(g.t(), x).to(gb::kDouble), gb::mm(g.to(gb::kDouble).t(), x.to(gb::kDouble)), 1e-4, 1e-4));
  auto ab = gb::randn({2, 200, 180}), bb = gb::randn({2, 180, 150});
  CHECK(gb::allclose(gb::bmm(ab, bb).to(gb::kDouble), gb::bmm(ab.to(gb::kDouble), bb.to(gb::kDouble)), 1e-4, 1e-4));
  gb::set_num_threads(1);
  auto y1 = gb::nn::functional::linear(x, w, bias);
  auto m1 = gb::mm(x, w.t());
  gb::set_num_threads(2);
  auto y2 = gb::nn::functional::linear(x, w, bias);
  auto m2 = gb::mm(x, w.t());
  gb::set_num_threads(restore);
  if (!blocked_on()) return;  // OpenBLAS's products may differ in their last bits between thread counts
  CHECK(gb::equal(m1, m2));
  CHECK(gb::equal(y1, y2));
  CHECK(gb::equal(y1, y));
}

#ifndef GLASSBOX_NO_PROBES  // a build without probes writes no meta
TEST_CASE("a trace records which kernels ran its large products (meta large_gemm)") {
  TempDir tmp;
  const std::string path = tmp.file("t.db");
  {
    gb::trace::Session session(path);
    gb::mm(gb::randn({8, 8}), gb::randn({8, 8}));
  }
  const std::string value = gbtest::trace_meta(path, "large_gemm");
  CHECK(value == gb::detail::blocked_gemm_backend());
  CHECK((value.rfind("libxsmm ", 0) == 0 || value.rfind("off: ", 0) == 0));
}
#endif
