// tests/engine/ops/gemm_reference.h — a matrix product computed in double, the reference the GEMM paths' tests
// (small_gemm_test.cpp, blocked_gemm_test.cpp) check against.
#pragma once

#include <cstddef>
#include <vector>

namespace gbtest {

// C (n x m, ldc) = op(A) op(B) + beta C in double, A and B read as cblas reads them (row-major, transposed or not).
template <typename T>
std::vector<double> gemm_in_double(bool ta, bool tb, int n, int m, int k, const std::vector<T>& a, int lda,
                                   const std::vector<T>& b, int ldb, double beta, const std::vector<T>& c, int ldc) {
  std::vector<double> out(size_t(n) * size_t(ldc));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += double(ta ? a[size_t(p) * lda + i] : a[size_t(i) * lda + p]) *
             double(tb ? b[size_t(j) * ldb + p] : b[size_t(p) * ldb + j]);
      out[size_t(i) * ldc + j] = s + beta * double(c[size_t(i) * ldc + j]);
    }
  return out;
}

}  // namespace gbtest
