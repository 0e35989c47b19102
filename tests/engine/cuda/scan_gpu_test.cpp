// GPU tier for engine/cuda/scan.cu (through monitor/deferred.h's tickets): the device scan counts NaN, Inf and
// zeros, sums squares and takes the largest finite |x| and element 0 as the cpu scan does, for every floating dtype,
// over many slots read back at once.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cmath>
#include <string>
#include <vector>

#include "monitor/deferred.h"

// First in this file (a process of its own under CTest): the monitor's slots are made here, with a pool stream
// current and the legacy stream busy with a long product, so zeros written on the legacy stream would land after the
// scan and erase its counts.
TEST_CASE("gpu: the first step's scans on a pool stream count exactly") {
  namespace md = gb::monitor::detail;
  gb::Tensor big = gb::randn({4096, 4096}).to(gb::kCUDA);  // on the legacy default stream (the thread's current)
  gb::Tensor busy = gb::mm(big, big);
  busy = gb::mm(busy, big);
  gb::cuda::CUDAStreamGuard guard(gb::cuda::getStreamFromPool());
  gb::Tensor x = gb::zeros({1 << 20});
  x.index_put_({gb::indexing::Slice(0, 1000)}, NAN);
  x.index_put_({gb::indexing::Slice(1000, 1500)}, INFINITY);
  x.index_put_({gb::indexing::Slice(1500, 3500)}, 2.0);
  const int64_t ticket = md::defer_scan(x.to(gb::kCUDA));
  const md::ScanResult got = md::deferred_result(ticket);
  CHECK(got.n == (1 << 20));
  CHECK(got.nan == 1000);
  CHECK(got.inf == 500);
  CHECK(got.zeros == (1 << 20) - 3500);
  CHECK(got.max_abs == INFINITY);
  md::deferred_reset();
}

TEST_CASE("gpu: the device scan counts and sums as the cpu scan does, every floating dtype, many slots") {
  namespace md = gb::monitor::detail;
  md::deferred_reset();
  gb::manual_seed(3);
  for (auto dt : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16}) {
    const std::string dtype = gb::to_string(dt);
    CAPTURE(dtype);
    gb::Tensor x = (gb::randn({100003}) * 3).to(dt);
    x.index_put_({gb::indexing::Slice(0, 700)}, 0);
    x.index_put_({12345}, NAN);
    x.index_put_({99999}, INFINITY);
    x.index_put_({4}, -INFINITY);
    const md::ScanResult want = md::scan(x);
    std::vector<int64_t> tickets;
    for (int i = 0; i < 50; ++i) tickets.push_back(md::defer_scan(x.to(gb::kCUDA)));
    for (int64_t t : tickets) {
      const md::ScanResult got = md::deferred_result(t);
      CHECK(got.n == want.n);
      CHECK(got.nan == want.nan);
      CHECK(got.inf == want.inf);
      CHECK(got.zeros == want.zeros);
      CHECK(got.max_abs == INFINITY);
    }
    gb::Tensor f = gb::randn({5000}).to(dt);
    const md::ScanResult fw = md::scan(f), fg = md::deferred_result(md::defer_scan(f.to(gb::kCUDA).t().contiguous()));
    CHECK(fg.sumsq == doctest::Approx(fw.sumsq).epsilon(1e-6));
    CHECK(fg.max_abs == doctest::Approx(fw.max_abs));
    CHECK(fg.first == doctest::Approx(f[0].item<double>()));
  }
  md::deferred_reset();
}

