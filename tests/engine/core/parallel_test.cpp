// tests/engine/core/parallel_test.cpp — the thread pool: coverage of ranges, exceptions, nesting, resizing, spinning
// and sleeping workers.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "support/check.h"

TEST_CASE("parallel_for covers every index exactly once") {
  gb::set_num_threads(2);
  std::vector<std::atomic<int>> hits(100000);
  gb::parallel_for(0, 100000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) CHECK(h.load() == 1);
}

TEST_CASE("exceptions inside chunks reach the caller; nested calls run inline") {
  gb::set_num_threads(2);
  CHECK_THROWS_WITH_AS(gb::parallel_for(0, 100000, 10, [](int64_t b, int64_t) {
                         if (b > 0) throw gb::Error("boom in a chunk");
                       }),
                       "boom in a chunk", gb::Error);
  std::atomic<int64_t> total{0};
  gb::parallel_for(0, 4, 1, [&](int64_t, int64_t) {
    gb::parallel_for(0, 1000, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
  });
  CHECK(total.load() >= 1000);
}

TEST_CASE("set_num_threads changes the pool and rejects nonsense") {
  gb::set_num_threads(1);
  CHECK(gb::get_num_threads() == 1);
  std::thread::id caller = std::this_thread::get_id();
  bool all_on_caller = true;
  gb::parallel_for(0, 1000000, 1, [&](int64_t, int64_t) { all_on_caller &= std::this_thread::get_id() == caller; });
  CHECK(all_on_caller);
  gb::set_num_threads(2);
  CHECK(gb::get_num_threads() == 2);
  CHECK_THROWS_WITH_AS(gb::set_num_threads(0), doctest::Contains("expected a positive number of threads"), gb::Error);
}

TEST_CASE("large elementwise ops give the same result on one and two threads") {
  auto a = gb::randn({300000});
  auto b = gb::randn({300000});
  gb::set_num_threads(1);
  auto one = gbtest::values(a * b + a);
  gb::set_num_threads(2);
  auto two = gbtest::values(a * b + a);
  CHECK(one == two);
}

TEST_CASE("back-to-back jobs, each chunk run exactly once, across parks and thread counts") {
  // Workers spin between jobs and claim chunks by generation: a worker late for one job must never run a chunk of
  // the next. 20000 jobs of 1 to 4 chunks in a row, each counting its indices; a park between some of them.
  for (int threads : {2, 3}) {
    gb::set_num_threads(threads);
    std::vector<std::atomic<int>> hits(64);
    for (int job = 0; job < 20000; ++job) {
      const int64_t n = 2 + job % 63;
      for (int64_t i = 0; i < n; ++i) hits[size_t(i)].store(0, std::memory_order_relaxed);
      gb::parallel_for(0, n, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
      });
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; ++i) wrong += hits[size_t(i)].load() != 1;
      REQUIRE(wrong == 0);
      if (job % 1000 == 999) gb::detail::park_workers();  // asleep now; the next job wakes them
    }
  }
  gb::set_num_threads(2);
}

TEST_CASE("a worker asleep after a long pause still takes its chunk") {
  gb::set_num_threads(2);
  std::atomic<int> on_worker{0};
  const auto caller = std::this_thread::get_id();
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // far past the spin: the worker sleeps
    // the caller's chunk waits until the other chunk has run, so only a woken worker lets this finish
    std::atomic<bool> other_done{false};
    // A woken worker may claim either chunk first (under ThreadSanitizer it often takes chunk 0 while the caller
    // takes chunk 1), so any chunk run off the caller's thread counts; the caller alone would run 1 and then 0.
    gb::parallel_for(0, 2, 1, [&](int64_t b, int64_t) {
      if (std::this_thread::get_id() != caller) on_worker.fetch_add(1);
      if (b == 0) {
        for (int i = 0; i < 2000 && !other_done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      } else {
        other_done.store(true);
      }
    });
    CHECK(other_done.load());
  }
  CHECK(on_worker.load() >= 1);
}
