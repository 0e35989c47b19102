// tests/engine/distributed/work_test.cpp — the Work handle of a collective: wait() returns once finished, rethrows
// the backend's error, and throws a message naming the collective when it does not finish within the timeout;
// waiters on other threads are woken.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "support/check.h"

using gb::distributed::Work;
using namespace std::chrono_literals;

TEST_CASE("Work: wait returns once finished; is_completed and is_success follow") {
  Work w("all_reduce");
  CHECK_FALSE(w.is_completed());
  CHECK_FALSE(w.is_success());
  w.finish();
  CHECK(w.is_completed());
  CHECK(w.is_success());
  CHECK(w.wait());
  CHECK(w.wait(0ms));
  w.finish(std::make_exception_ptr(std::runtime_error("late")));  // a second outcome is ignored
  CHECK(w.is_success());
}

TEST_CASE("Work: the backend's error is rethrown by wait, and kept") {
  Work w("broadcast");
  w.finish(std::make_exception_ptr(gb::Error("MPI_Bcast failed: MPI_ERR_TRUNCATE")));
  CHECK(w.is_completed());
  CHECK_FALSE(w.is_success());
  CHECK(w.exception() != nullptr);
  CHECK_THROWS_WITH_AS(w.wait(), doctest::Contains("MPI_ERR_TRUNCATE"), gb::Error);
}

TEST_CASE("Work: a collective that does not finish in time names itself and what to check") {
  Work w("all_reduce");
  w.set_description("1024 x float32, sum, rank 0 of 2, mpi");
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(
      w.wait(50ms), doctest::Contains("all_reduce (1024 x float32, sum, rank 0 of 2, mpi) did not finish within 50 ms"),
      gb::Error);
  CHECK(std::chrono::steady_clock::now() - t0 >= 50ms);
  w.set_default_timeout(20ms);
  CHECK_THROWS_WITH_AS(w.wait(), doctest::Contains("within 20 ms"), gb::Error);
  CHECK_THROWS_WITH_AS(w.wait(), doctest::Contains("same collectives in the same order"), gb::Error);
}

TEST_CASE("Work: a waiter on another thread is woken by finish") {
  Work w("barrier");
  bool ok = false;
  std::thread waiter([&] { ok = w.wait(10s); });
  std::this_thread::sleep_for(20ms);
  w.finish();
  waiter.join();
  CHECK(ok);
}

TEST_CASE("reduce_op_name") {
  using gb::distributed::ReduceOp;
  CHECK(std::string(gb::distributed::reduce_op_name(ReduceOp::SUM)) == "sum");
  CHECK(std::string(gb::distributed::reduce_op_name(ReduceOp::AVG)) == "avg");
  CHECK(std::string(gb::distributed::reduce_op_name(ReduceOp::PRODUCT)) == "product");
  CHECK(std::string(gb::distributed::reduce_op_name(ReduceOp::MIN)) == "min");
  CHECK(std::string(gb::distributed::reduce_op_name(ReduceOp::MAX)) == "max");
}
