// tests/engine/core/parallel_test.cpp — the thread pool: coverage of ranges, exceptions, nesting, resizing.
#include <atomic>
#include <thread>

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
