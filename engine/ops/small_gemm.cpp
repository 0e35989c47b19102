// engine/ops/small_gemm.cpp — small matrix products on libxsmm (small_gemm.h).
#include "ops/small_gemm.h"

#include <mutex>
#include <vector>

#include "core/cpu_isa.h"
#include "instrument/probe.h"

#if GLASSBOX_WITH_XSMM
#include <libxsmm.h>
#endif

namespace gb::detail {

#if GLASSBOX_WITH_XSMM
// libxsmm starts once, aimed at the instruction set glassbox's kernels run (its own detection could name a set
// glassbox's does not use, e.g. AVX-512 without BW).
void xsmm_start() {
  static std::once_flag once;
  std::call_once(once, [] {
    libxsmm_init();
    if (cpu_isa_supported() == CpuIsa::avx2) libxsmm_set_target_arch("hsw");
  });
}

namespace {

// Measured single-threaded on this project's VM (bench/bench_matmul.cpp, and square to 256^3): libxsmm's kernels
// ran 0.43-0.49x OpenBLAS's time with the AVX2 kernels OPENBLAS_CORETYPE=Haswell holds it to, 0.79-1.0x with its
// own AVX-512 choice, at every size; above 4M multiply-adds a product is OpenBLAS's again, on every thread.
constexpr double kMaxMnk = 4.0 * 1024 * 1024;
// libxsmm's transposition is fast up to 8K elements (64x128: 0.6 us) and slow past them (128x128: 5 us), and the
// copy must stay small against the product: at least 4 rows of A.
constexpr int64_t kMaxTransposed = 8192;
constexpr int64_t kMinRowsToTranspose = 4;

bool isa_ok() {
  const CpuIsa isa = cpu_isa();
  return isa != CpuIsa::baseline && isa == cpu_isa_supported();
}

template <typename T>
T* scratch(int64_t n) {
  thread_local std::vector<T> buf;
  if (static_cast<int64_t>(buf.size()) < n) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

}  // namespace

bool small_gemm_fits(bool trans_b, int64_t n, int64_t m, int64_t k, double alpha, double beta) {
  if (alpha != 1.0 || (beta != 0.0 && beta != 1.0)) return false;
  if (n <= 0 || m <= 0 || k <= 0 || double(n) * double(m) * double(k) > kMaxMnk) return false;
  if (trans_b && (n < kMinRowsToTranspose || k * m > kMaxTransposed)) return false;
  return isa_ok();
}

template <typename T>
bool small_gemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (!small_gemm_fits(trans_b, n, m, k, alpha, beta)) return false;
  xsmm_start();
  // libxsmm is column-major: the row-major C (n x m) is a column-major (m x n) matrix, C^T = op(B)^T op(A)^T, so
  // libxsmm's A is our B (m x k column-major when B is not transposed) and its B our A (transposed when ours is).
  if (trans_b) {  // B stored (m x k) row-major: copy it out as op(B), (k x m) row-major
    T* bt = scratch<T>(k * m);
    libxsmm_otrans(bt, b, sizeof(T), static_cast<libxsmm_blasint>(k), static_cast<libxsmm_blasint>(m),
                   static_cast<libxsmm_blasint>(ldb), static_cast<libxsmm_blasint>(m));
    b = bt;
    ldb = m;
  }
  const libxsmm_blasint xm = m, xn = n, xk = k, xlda = ldb, xldb = lda, xldc = ldc;
  const int flags = trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  const T one = 1;
  if constexpr (std::is_same_v<T, float>) {
    const libxsmm_smmfunction f = libxsmm_smmdispatch(xm, xn, xk, &xlda, &xldb, &xldc, &one, &beta, &flags, nullptr);
    if (!f) return false;
    f(b, a, c);
  } else {
    const libxsmm_dmmfunction f = libxsmm_dmmdispatch(xm, xn, xk, &xlda, &xldb, &xldc, &one, &beta, &flags, nullptr);
    if (!f) return false;
    f(b, a, c);
  }
  return true;
}

std::string small_gemm_backend() {
  xsmm_start();
  return std::string("libxsmm ") + LIBXSMM_VERSION + " (" + libxsmm_get_target_arch() + ")" +
         (isa_ok() ? "" : ", unused: GLASSBOX_CPU_CAPABILITY is narrower than the CPU's");
}

#else  // built without libxsmm: every product is OpenBLAS's

bool small_gemm_fits(bool, int64_t, int64_t, int64_t, double, double) { return false; }

template <typename T>
bool small_gemm(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*, int64_t) {
  return false;
}

std::string small_gemm_backend() { return "off: built without libxsmm (apt-get install libxsmm-dev)"; }

#endif

namespace {
// A trace says which kernels its small products ran (meta small_gemm).
void write_meta() { trace::set_meta("small_gemm", small_gemm_backend()); }
const bool g_connected = [] {
  trace::add_session_hook(write_meta, nullptr);
  return true;
}();
}  // namespace

template bool small_gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                                int64_t, float, float*, int64_t);
template bool small_gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                                 int64_t, double, double*, int64_t);

}  // namespace gb::detail
