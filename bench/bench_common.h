// bench/bench_common.h — timing and JSON-line output shared by the benchmarks; the rules they follow are
// docs/design/performance.md, the performance doctrine.
//
// Each benchmark times glassbox and libtorch in the same process, alternating rounds so both see the same machine
// state, and prints one JSON object per metric: {"bench", "metric", "value", "unit", "peer", "peer_value", "ratio"}.
// ratio = value / peer_value (for times, below 1 means glassbox is faster).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

// The peer this executable was built against (bench/CMakeLists.txt: "libtorch 1.13.1", "libtorch 2.15.0").
#ifndef GLASSBOX_PEER
#define GLASSBOX_PEER "libtorch"
#endif

namespace bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs fn in batches of `inner` calls until `seconds` have passed; returns the median seconds per call.
inline double time_per_call(const std::function<void()>& fn, int inner, double seconds) {
  for (int i = 0; i < inner; ++i) fn();  // warm up
  std::vector<double> samples;
  double end = now_s() + seconds;
  while (now_s() < end || samples.size() < 5) {
    double t0 = now_s();
    for (int i = 0; i < inner; ++i) fn();
    samples.push_back((now_s() - t0) / inner);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// Alternates rounds of the two candidates and keeps each one's best median (robust to a noisy neighbour).
inline std::pair<double, double> compare(const std::function<void()>& ours, const std::function<void()>& peer, int inner,
                                         double seconds_per_round, int rounds = 3) {
  double best_ours = 1e30, best_peer = 1e30;
  for (int r = 0; r < rounds; ++r) {
    best_ours = std::min(best_ours, time_per_call(ours, inner, seconds_per_round));
    best_peer = std::min(best_peer, time_per_call(peer, inner, seconds_per_round));
  }
  return {best_ours, best_peer};
}

// The same line with another peer than libtorch (e.g. "malloc" where libtorch's numbers are not comparable).
inline void emit_vs(const std::string& bench, const std::string& metric, double value, const std::string& unit,
                    const std::string& peer, double peer_value, const std::string& extra = "") {
  std::printf("{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\", \"peer\": \"%s\", "
              "\"peer_value\": %.6g, \"ratio\": %.4f%s%s}\n",
              bench.c_str(), metric.c_str(), value, unit.c_str(), peer.c_str(), peer_value, value / peer_value,
              extra.empty() ? "" : ", ", extra.c_str());
  std::fflush(stdout);
}

inline void emit(const std::string& bench, const std::string& metric, double value, const std::string& unit,
                 double peer_value, const std::string& extra = "") {
  emit_vs(bench, metric, value, unit, GLASSBOX_PEER, peer_value, extra);
}

// STREAM's triad a = b + s c over three arrays of 64 MiB, split over `threads` threads; bytes counted as STREAM
// does (three arrays, no write-allocate traffic). Returns GB/s, the best of 10 passes.
inline double triad_gbs(int threads) {
  const size_t n = size_t(16) << 20;  // floats per array
  std::vector<float> a(n), b(n, 1.f), c(n, 2.f);
  auto pass = [&] {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const size_t lo = n * size_t(t) / size_t(threads), hi = n * size_t(t + 1) / size_t(threads);
        for (size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.f * c[i];
      });
    for (auto& th : pool) th.join();
  };
  pass();  // first touch
  double best = 1e30;
  for (int r = 0; r < 10; ++r) {
    const double t0 = bench::now_s();
    pass();
    best = std::min(best, bench::now_s() - t0);
  }
  return 3.0 * double(n) * sizeof(float) / best / 1e9;
}

}  // namespace bench
