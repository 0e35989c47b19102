// engine/ops/blocked_gemm.cpp — large float products on libxsmm, blocked and threaded (blocked_gemm.h).
#include "ops/blocked_gemm.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/cpu_isa.h"
#include "glassbox/core/parallel.h"
#include "instrument/probe.h"
#include "ops/small_gemm.h"

#if GLASSBOX_WITH_XSMM
#include <libxsmm.h>
#endif

namespace gb::detail {

namespace {
// Block sizes, measured on the MLP's products (bench_matmul): a packed block of B is KB x NB floats (64 KB, L2), a
// block of A RB x KB (256 KB, L2 of 1 MB); NB 32 or 96, or KB 128 or 512, ran 5-25% slower.
constexpr int64_t kNB = 64, kKB = 256, kRB = 256;
// small_gemm's bound: below it a product is small_gemm's (or OpenBLAS's), except that a single product of more than
// 512K multiply-adds runs here when it can have more than one thread (small_gemm runs on one): 2 threads 96^3
// 15.7 -> 11-12 us, 128^3 36.7 -> 20-22 us, 160^3 71 -> 56 us (on one thread this path is 10-15% slower than
// small_gemm's at those sizes, so one thread keeps small_gemm).
constexpr double kMinMnk = 4.0 * 1024 * 1024, kMinMnkThreaded = 512.0 * 1024;
constexpr int64_t kMinDim = 16;
}  // namespace

#if GLASSBOX_WITH_XSMM
namespace {

bool isa_ok() { return cpu_isa() == CpuIsa::avx512 && cpu_isa_supported() == CpuIsa::avx512; }

struct Product {
  bool trans_a, trans_b;
  int64_t n, m, k;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;

  // C is cut into tiles of rb rows by kNB columns on a grid fixed by its shape alone, so that every element is
  // computed by the same kernel (libxsmm's kernels for different block widths add in different orders) whatever the
  // thread count. Thread t of `threads` takes a contiguous share of the tiles, numbered row block after row block.
  // rb is kRB, halved down to 32 while C has fewer than 8 tiles (a mid-size product's work still splits evenly).
  int64_t rb = kRB;
  int64_t col_blocks() const { return (m + kNB - 1) / kNB; }
  int64_t tiles() const { return (n + rb - 1) / rb * col_blocks(); }
  std::pair<int64_t, int64_t> share(int t, int threads) const {
    const int64_t per = (tiles() + threads - 1) / threads;
    return {std::min(tiles(), t * per), std::min(tiles(), (t + 1) * per)};
  }

  // The kernel for a block: w columns of C, `rows` rows, kb deep, beta for the first slice of k and 1 after it.
  libxsmm_smmfunction kernel(int64_t w, int64_t rows, int64_t kb, bool first) const {
    const libxsmm_blasint xm = w, xn = rows, xk = kb, xlda = w, xldb = lda, xldc = ldc;
    const float one = 1, bk = first ? beta : 1.0f;
    const int flags = trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
    return libxsmm_smmdispatch(xm, xn, xk, &xlda, &xldb, &xldc, &one, &bk, &flags, nullptr);
  }

  // Calls f(r0, rows, k0, kb, c0, w) for every block of tiles [t_lo, t_hi), in the order they run: per row block,
  // per slice of k, its tiles left to right (the slice of A stays in cache across them).
  template <typename F>
  void each_block(std::pair<int64_t, int64_t> share, const F& f) const {
    const auto [t_lo, t_hi] = share;
    if (t_lo >= t_hi) return;
    const int64_t ncb = col_blocks();
    for (int64_t rbi = t_lo / ncb; rbi <= (t_hi - 1) / ncb; ++rbi) {
      const int64_t cb_lo = std::max(t_lo, rbi * ncb) - rbi * ncb, cb_hi = std::min(t_hi, (rbi + 1) * ncb) - rbi * ncb;
      const int64_t r0 = rbi * rb, rows = std::min(rb, n - r0);
      for (int64_t k0 = 0; k0 < k; k0 += kKB)
        for (int64_t cb = cb_lo; cb < cb_hi; ++cb)
          f(r0, rows, k0, std::min(kKB, k - k0), cb * kNB, std::min(kNB, m - cb * kNB));
    }
  }

  // Copies op(B)'s block (rows k0.., columns c0..) into bp as a kb x w row-major matrix.
  void pack(float* bp, int64_t k0, int64_t kb, int64_t c0, int64_t w) const {
    if (trans_b)  // B stored m x k: the block is a w x kb slice, copied transposed
      libxsmm_otrans(bp, b + c0 * ldb + k0, sizeof(float), libxsmm_blasint(kb), libxsmm_blasint(w),
                     libxsmm_blasint(ldb), libxsmm_blasint(w));
    else
      for (int64_t p = 0; p < kb; ++p) std::memcpy(bp + p * w, b + (k0 + p) * ldb + c0, size_t(w) * sizeof(float));
  }

  void run(std::pair<int64_t, int64_t> share) const {
    if (share.first >= share.second) return;
    thread_local std::vector<float> buf;
    if (buf.size() < size_t(kKB * kNB + 16)) buf.resize(size_t(kKB * kNB + 16));
    float* bp = buf.data() + (16 - (reinterpret_cast<uintptr_t>(buf.data()) / sizeof(float)) % 16) % 16;  // 64 B
    each_block(share, [&](int64_t r0, int64_t rows, int64_t k0, int64_t kb, int64_t c0, int64_t w) {
      pack(bp, k0, kb, c0, w);
      // libxsmm is column-major: the row-major C block is its (w x rows) matrix = bp's (w x kb) times A's slice
      const float* as = trans_a ? a + k0 * lda + r0 : a + r0 * lda + k0;
      kernel(w, rows, kb, k0 == 0)(bp, as, c + r0 * ldc + c0);
    });
  }
};

}  // namespace

bool blocked_gemm_fits(int64_t n, int64_t m, int64_t k, double alpha, double beta, int threads) {
  if (alpha != 1.0 || (beta != 0.0 && beta != 1.0)) return false;
  if (n < kMinDim || m < kMinDim || k < kMinDim ||
      double(n) * double(m) * double(k) <= (threads > 1 ? kMinMnkThreaded : kMinMnk))
    return false;
  return isa_ok();
}

bool blocked_gemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads) {
  threads = std::max(1, threads);
  if (!blocked_gemm_fits(n, m, k, 1.0, beta, threads)) return false;
  xsmm_start();
  Product p{trans_a, trans_b, n, m, k, a, lda, b, ldb, beta, c, ldc};
  while (p.tiles() < 8 && p.rb > 32) p.rb /= 2;
  // Every kernel is generated before C is touched, so a shape libxsmm refuses leaves the whole product to OpenBLAS.
  bool generated = true;
  p.each_block({0, p.tiles()}, [&](int64_t, int64_t rows, int64_t k0, int64_t kb, int64_t, int64_t w) {
    generated = generated && p.kernel(w, rows, kb, k0 == 0) != nullptr;
  });
  if (!generated) return false;
  if (threads == 1) {
    p.run(p.share(0, 1));
    return true;
  }
  parallel_for(0, threads, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) p.run(p.share(int(t), threads));
  });
  return true;
}

std::string blocked_gemm_backend() {
  if (!isa_ok())
    return std::string("off: needs AVX-512 (glassbox's kernels: ") + cpu_isa_name(cpu_isa()) +
           ", this CPU: " + cpu_isa_name(cpu_isa_supported()) + "); large products run on OpenBLAS";
  xsmm_start();
  return std::string("libxsmm ") + LIBXSMM_VERSION + " (" + libxsmm_get_target_arch() + "), " + std::to_string(kNB) +
         "x" + std::to_string(kKB) + " blocks";
}

#else  // built without libxsmm: large products are OpenBLAS's

bool blocked_gemm_fits(int64_t, int64_t, int64_t, double, double, int) { return false; }

bool blocked_gemm(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float, float*,
                  int64_t, int) {
  return false;
}

std::string blocked_gemm_backend() { return "off: built without libxsmm (apt-get install libxsmm-dev)"; }

#endif

namespace {
// A trace says which kernels ran its large products (meta large_gemm).
void write_meta() { trace::set_meta("large_gemm", blocked_gemm_backend()); }
const bool g_connected = [] {
  trace::add_session_hook(write_meta, nullptr);
  return true;
}();
}  // namespace

}  // namespace gb::detail
