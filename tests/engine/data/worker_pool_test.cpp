// tests/engine/data/worker_pool_test.cpp — engine/data/worker_pool.cpp: worker errors, timeouts, shutdown.
#include <doctest/doctest.h>

#include "data_test_util.h"

using gb::data::DataLoader;
using gb::data::DataLoaderOptions;
using gbtest::RandomData;

TEST_CASE("an exception in a worker reaches the training thread with worker id, batch index and message") {
  gb::get_num_threads();
  int before = gbtest::thread_count_quiet();
  for (bool pin : {false, true}) {
    auto ds = std::make_shared<RandomData>(40);
    ds->throw_at = 29;  // batch 7 with batch_size 4
    DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(2).pin_memory(pin));
    int64_t got = 0;
    try {
      for (auto& b : loader) {
        (void)b;
        ++got;
      }
      FAIL("no exception");
    } catch (const gb::data::WorkerError& e) {
      std::string msg = e.what();
      CHECK(msg.rfind("Caught RuntimeError in DataLoader worker process ", 0) == 0);
      CHECK(msg.find(" while loading batch 7: boom at index 29") != std::string::npos);
      CHECK((e.worker_id() == 0 || e.worker_id() == 1));
      CHECK(msg.find("process " + std::to_string(e.worker_id())) != std::string::npos);
      CHECK(e.batch_index() == 7);
      CHECK(e.original_message() == "boom at index 29");
    }
    CHECK(got == 7);                     // batches 0..6 came through in order
    CHECK(loader.live_threads() == 0);   // the epoch was shut down, no worker left behind
    ds->throw_at = -1;                   // and the loader works again next epoch
    int64_t n = 0;
    for (auto& b : loader) n += b.data.size(0);
    CHECK(n == 40);
  }
  CHECK(gbtest::thread_count_settled(before) == before);

  auto ds = std::make_shared<RandomData>(8);  // num_workers = 0: the dataset's own exception, as in PyTorch
  ds->throw_at = 5;
  DataLoader inline_loader(ds, DataLoaderOptions().batch_size(4));
  CHECK_THROWS_WITH(
      [&] {
        for (auto& b : inline_loader) (void)b;
      }(),
      "boom at index 5");
  struct Bad : gb::data::Dataset<gb::Tensor> {  // a gb::IndexError is reported as IndexError
    gb::Tensor get(int64_t i) override { return gb::arange(3)[i + 5]; }
    int64_t size() const override { return 2; }
  };
  DataLoader bad(Bad{}, DataLoaderOptions().num_workers(1));
  CHECK_THROWS_WITH(
      [&] {
        for (auto& b : bad) (void)b;
      }(),
      gbtest::contains("Caught IndexError in DataLoader worker process 0 while loading batch 0: "));
}

TEST_CASE("worker_init_fn errors surface as worker errors") {
  DataLoader loader(std::make_shared<RandomData>(4), DataLoaderOptions().num_workers(1).worker_init_fn([](int64_t) {
                      throw std::runtime_error("no GPU for you");
                    }));
  CHECK_THROWS_WITH(
      [&] {
        for (auto& b : loader) (void)b;
      }(),
      "Caught RuntimeError in DataLoader worker process 0 while loading batch 0: no GPU for you");
}

TEST_CASE("a batch slower than timeout throws PyTorch's message; the slow worker is joined") {
  gb::get_num_threads();
  int before = gbtest::thread_count_quiet();
  auto ds = std::make_shared<RandomData>(8);
  ds->sleep_for = [](int64_t i) { return i == 0 ? 300'000 : 0; };
  {
    DataLoader loader(ds, DataLoaderOptions().batch_size(2).num_workers(2).timeout(0.05));
    CHECK_THROWS_WITH(
        [&] {
          for (auto& b : loader) (void)b;
        }(),
        gbtest::contains("DataLoader timed out after 0.05 seconds"));
    CHECK(loader.live_threads() == 0);
  }
  CHECK(gbtest::thread_count_settled(before) == before);
  DataLoader patient(ds, DataLoaderOptions().batch_size(2).num_workers(2).timeout(5));
  int n = 0;
  for (auto& b : patient) n += int(b.data.size(0));
  CHECK(n == 8);
}

TEST_CASE("destroying a loader mid-epoch joins all its threads (counted in /proc/self/task)") {
  gb::get_num_threads();
  int before = gbtest::thread_count_quiet();
  for (bool persistent : {false, true}) {
    for (bool pin : {false, true}) {
      auto ds = std::make_shared<RandomData>(400);
      ds->sleep_us = 2000;
      {
        DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(4).prefetch_factor(3)
                                  .persistent_workers(persistent).pin_memory(pin));
        auto it = loader.begin();
        ++it;
        CHECK(gbtest::thread_count() == before + 4 + (pin ? 1 : 0));
        CHECK(loader.live_threads() == 4 + (pin ? 1 : 0));
      }  // 98 batches still to come
      CHECK(gbtest::thread_count_settled(before) == before);
    }
  }
}

TEST_CASE("worker threads run tensor ops inline, leaving the engine's pool to the training thread") {
  struct Probe : gb::data::Dataset<int64_t> {
    int64_t get(int64_t) override { return gb::detail::in_parallel_region() ? 1 : 0; }
    int64_t size() const override { return 6; }
  };
  DataLoader loader(Probe{}, DataLoaderOptions().batch_size(3).num_workers(2));
  for (auto& b : loader) CHECK(b.sum().item<int64_t>() == 3);
  CHECK_FALSE(gb::detail::in_parallel_region());  // the caller's thread keeps the pool
}
