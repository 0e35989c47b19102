// tests/engine/data/dataloader_test.cpp — glassbox/data/dataloader.h: batches, epochs, reproducibility, order.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "data_test_util.h"
#include "support/sanitizers.h"

using gb::data::DataLoader;
using gb::data::DataLoaderOptions;
using gb::data::Example;
using gbtest::RandomData;

namespace {

std::vector<std::vector<unsigned char>> run_epochs(int64_t workers, int epochs, bool in_order = true) {
  auto ds = std::make_shared<RandomData>(37);
  DataLoaderOptions o = DataLoaderOptions().batch_size(4).shuffle(true).num_workers(workers).in_order(in_order);
  o.generator(std::make_shared<gb::Generator>(1234));
  DataLoader loader(ds, o);
  std::vector<std::vector<unsigned char>> out;
  for (int e = 0; e < epochs; ++e)
    for (auto& b : loader) {
      out.push_back(gbtest::bytes(b.data));
      out.push_back(gbtest::bytes(b.target));
    }
  return out;
}

std::vector<int64_t> targets(const gb::Tensor& t) {
  gb::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

TEST_CASE("batches are bit-identical for num_workers 0, 1, 2, 4 (shuffle and per-sample randomness, 2 epochs)") {
  auto ref = run_epochs(0, 2);
  REQUIRE(ref.size() == 2 * 2 * 10);  // 37 samples in batches of 4: 10 batches per epoch
  CHECK(ref[0] != ref[20]);           // the two epochs differ (a new permutation and new draws)
  for (int64_t w : {1, 2, 4}) {
    CAPTURE(w);
    CHECK(run_epochs(w, 2) == ref);
  }
  CHECK(run_epochs(0, 2) == ref);  // and a second run of the same seed
}

TEST_CASE("every sample exactly once per epoch, with and without drop_last; len() agrees") {
  for (int64_t w : {0, 2}) {
    for (bool drop_last : {false, true}) {
      CAPTURE(w);
      CAPTURE(drop_last);
      auto ds = std::make_shared<RandomData>(23);
      DataLoader loader(ds, DataLoaderOptions().batch_size(5).shuffle(true).drop_last(drop_last).num_workers(w));
      CHECK(loader.size() == (drop_last ? 4 : 5));
      for (int epoch = 0; epoch < 2; ++epoch) {
        std::vector<int64_t> seen;
        int64_t batches = 0;
        for (auto& b : loader) {
          CHECK(b.data.size(0) == (batches < 4 ? 5 : 3));
          auto t = targets(b.target);
          seen.insert(seen.end(), t.begin(), t.end());
          ++batches;
        }
        CHECK(batches == loader.size());
        std::set<int64_t> unique(seen.begin(), seen.end());
        CHECK(unique.size() == seen.size());
        CHECK(seen.size() == size_t(drop_last ? 20 : 23));
      }
    }
  }
}

TEST_CASE("in_order keeps sampler order behind a slow batch; in_order(false) yields batches as they are ready") {
  auto ds = std::make_shared<RandomData>(16);
  ds->sleep_for = [](int64_t i) { return i < 2 ? 200'000 : 0; };  // batch 0 takes 0.4 s, the others nothing
  {
    DataLoader loader(ds, DataLoaderOptions().batch_size(2).num_workers(2));
    std::vector<int64_t> order;
    for (auto& b : loader) order.push_back(targets(b.target)[0] / 2);
    CHECK(order == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  }
  {
    DataLoader loader(ds, DataLoaderOptions().batch_size(2).num_workers(2).in_order(false));
    std::vector<int64_t> order, indices;
    for (auto& b : loader) {
      order.push_back(targets(b.target)[0] / 2);
      indices.push_back(loader.batch_index());
    }
    CHECK(order == indices);        // batch_index() names the batch returned
    CHECK(order.front() != 0);      // batch 0 was overtaken
    std::sort(order.begin(), order.end());
    CHECK(order == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});  // and still all there
  }
}

TEST_CASE("a sequential loader yields 0..n-1; restarting mid-epoch starts over") {
  auto ds = std::make_shared<RandomData>(10);
  DataLoader loader(ds, DataLoaderOptions().batch_size(3).num_workers(2));
  auto it = loader.begin();
  CHECK(targets(it->target) == std::vector<int64_t>{0, 1, 2});
  ++it;
  CHECK(targets(it->target) == std::vector<int64_t>{3, 4, 5});
  std::vector<int64_t> all;
  for (auto& b : loader) {
    auto t = targets(b.target);
    all.insert(all.end(), t.begin(), t.end());
  }
  CHECK(all == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("worker info, worker_init_fn once per worker, persistent and non-persistent workers") {
  gb::get_num_threads();  // the engine's pool exists before we count threads
  int before = gbtest::thread_count_quiet();
  std::mutex m;
  std::set<int64_t> init_ids;
  std::atomic<int> inits{0};
  struct Info : gb::data::Dataset<int64_t> {
    int64_t get(int64_t) override {
      auto w = gb::data::get_worker_info();
      return w ? w->id * 1000 + w->num_workers : -1;
    }
    int64_t size() const override { return 12; }
  };
  for (bool persistent : {false, true}) {
    CAPTURE(persistent);
    inits = 0;
    {
      DataLoader loader(Info{}, DataLoaderOptions().batch_size(3).num_workers(3).persistent_workers(persistent)
                                    .worker_init_fn([&](int64_t id) {
                                      std::lock_guard<std::mutex> lk(m);
                                      init_ids.insert(id);
                                      ++inits;
                                    }));
      for (int epoch = 0; epoch < 2; ++epoch) {
        for (auto& b : loader) {
          auto v = targets(b);
          for (int64_t x : v) CHECK(x % 1000 == 3);  // on a worker: num_workers = 3
        }
        CHECK(loader.live_threads() == (persistent ? 3 : 0));
      }
    }  // joined: every worker started has run worker_init_fn (it runs before the worker looks for work)
    CHECK(inits.load() == (persistent ? 3 : 6));  // once per worker thread started
    CHECK(init_ids == std::set<int64_t>{0, 1, 2});
  }
  CHECK(gbtest::thread_count_settled(before) == before);
  DataLoader inline_loader(Info{}, DataLoaderOptions().batch_size(12));
  for (auto& b : inline_loader) CHECK(targets(b)[0] == -1);  // num_workers = 0: no worker info
}

TEST_CASE("an iterable dataset is read once per epoch, in order, whatever num_workers") {
  struct Counter : gb::data::IterableDataset<int64_t> {
    int64_t i = 0, n = 11;
    std::optional<int64_t> next() override { return i < n ? std::optional<int64_t>(i++) : std::nullopt; }
    void reset() override { i = 0; }
  };
  for (int64_t w : {0, 1, 3}) {
    for (bool drop_last : {false, true}) {
      CAPTURE(w);
      DataLoader loader(Counter{}, DataLoaderOptions().batch_size(4).num_workers(w).drop_last(drop_last));
      for (int epoch = 0; epoch < 2; ++epoch) {
        std::vector<int64_t> all;
        for (auto& b : loader) {
          auto t = targets(b);
          all.insert(all.end(), t.begin(), t.end());
        }
        std::vector<int64_t> want = {0, 1, 2, 3, 4, 5, 6, 7};
        if (!drop_last) want.insert(want.end(), {8, 9, 10});
        CHECK(all == want);
      }
    }
  }
  CHECK_THROWS_WITH(DataLoader(Counter{}, DataLoaderOptions().shuffle(true)),
                    "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=True");
}

TEST_CASE("a user collate pads variable-length samples; pin_memory pins every tensor of the batch") {
  struct Seq : gb::data::Dataset<gb::Tensor> {
    gb::Tensor get(int64_t i) override { return gb::full({i + 1}, double(i + 1)); }
    int64_t size() const override { return 5; }
  };
  auto pad = [](std::vector<gb::Tensor> s) {
    int64_t L = 0;
    for (auto& t : s) L = std::max(L, t.size(0));
    gb::Tensor out = gb::zeros({int64_t(s.size()), L});
    for (size_t i = 0; i < s.size(); ++i) out[int64_t(i)].narrow(0, 0, s[i].size(0)).copy_(s[i]);
    return out;
  };
  DataLoader loader(std::make_shared<Seq>(), DataLoaderOptions().batch_size(3), pad);
  std::vector<gb::Tensor> batches;
  for (auto& b : loader) batches.push_back(b);
  REQUIRE(batches.size() == 2);
  CHECK(batches[0].sizes() == gb::IntArrayRef({3, 3}));
  CHECK(batches[1].sizes() == gb::IntArrayRef({2, 5}));
  CHECK(batches[0][0][1].item<float>() == 0.0f);
  CHECK(batches[0][2][2].item<float>() == 3.0f);

  for (int64_t w : {0, 2}) {
    DataLoader pinned(std::make_shared<RandomData>(8),
                      DataLoaderOptions().batch_size(4).num_workers(w).pin_memory(true));
    int n = 0;
    for (auto& b : pinned) {
      CHECK(gb::data::is_pinned(b.data));
      CHECK(gb::data::is_pinned(b.target));
      ++n;
    }
    CHECK(n == 2);
  }
}

TEST_CASE("invalid options fail at construction with PyTorch's messages") {
  auto ds = std::make_shared<RandomData>(8);
  auto make = [&](DataLoaderOptions o) { DataLoader l(ds, o); };
  CHECK_THROWS_WITH(make(DataLoaderOptions().num_workers(-1)),
                    "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  CHECK_THROWS_WITH(make(DataLoaderOptions().timeout(-1)), "timeout option should be non-negative");
  CHECK_THROWS_WITH(make(DataLoaderOptions().prefetch_factor(2)),
                    "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
                    "enable multiprocessing, otherwise set prefetch_factor to None.");
  CHECK_THROWS_WITH(make(DataLoaderOptions().num_workers(1).prefetch_factor(-1)),
                    "prefetch_factor option should be non-negative");
  CHECK_THROWS_WITH(make(DataLoaderOptions().persistent_workers(true)),
                    "persistent_workers option needs num_workers > 0");
  auto sampler = std::make_shared<gb::data::SequentialSampler>(8);
  CHECK_THROWS_WITH(make(DataLoaderOptions().sampler(sampler).shuffle(true)),
                    "sampler option is mutually exclusive with shuffle");
  auto bs = std::make_shared<gb::data::BatchSampler>(sampler, 2, false);
  for (auto o : {DataLoaderOptions().batch_sampler(bs).batch_size(4), DataLoaderOptions().batch_sampler(bs).shuffle(true),
                 DataLoaderOptions().batch_sampler(bs).sampler(sampler),
                 DataLoaderOptions().batch_sampler(bs).drop_last(true)})
    CHECK_THROWS_WITH(make(o), "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                               "drop_last");
  CHECK_THROWS_WITH(make(DataLoaderOptions().batch_size(0)),
                    "batch_size should be a positive integer value, but got batch_size=0");
  if (!gb::cuda::is_available())
    CHECK_THROWS_WITH(make(DataLoaderOptions().device(gb::Device(gb::kCUDA, 0))),
                      gbtest::contains("CUDA is not available"));
  DataLoader ok(ds, DataLoaderOptions().batch_sampler(bs));  // a batch sampler alone is fine
  int n = 0;
  for (auto& b : ok) n += int(b.data.size(0));
  CHECK(n == 8);
}

// ---- the trace: stage spans linked by batch index, and the wait share that says data-bound or not ----

#include "traces/query/dataloader.h"
#include "traces/temp_dir.h"

namespace {

// Trains a stand-in loop: each step takes a batch then "computes" for compute_us; each sample costs sample_us.
double traced_wait_share(const std::string& path, int sample_us, int compute_us, int64_t workers) {
  {
    gb::trace::Session session(path, {.on_full = gb::trace::OnFull::block});
    auto ds = std::make_shared<RandomData>(64);
    ds->sleep_us = sample_us;
    DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(workers).pin_memory(true));
    int64_t step = 0;
    auto it = loader.begin();
    while (!(it == loader.end())) {
      gb::trace::StepScope s(step++);
      ++it;  // the next batch: the wait span lands inside the step
      std::this_thread::sleep_for(std::chrono::microseconds(compute_us));
    }
  }
  return gb::query::dataloader_summary(gb::query::TraceDb(path)).wait_share();
}

}  // namespace

TEST_CASE("traced: a slow transform is data-bound (wait share > 50%), a heavy step is not (< 10%)" *
          doctest::skip(gbtest::kThreadSanitizer)) {  // shares of elapsed time; TSan's slowdown is not the loader's
  TempDir tmp;
  double data_bound = traced_wait_share(tmp.file("slow_data.db"), 5000, 200, 2);     // 20 ms per batch / 2 workers
  double compute_bound = traced_wait_share(tmp.file("slow_step.db"), 100, 8000, 2);  // 0.4 ms per batch, 8 ms step
  CAPTURE(data_bound);
  CAPTURE(compute_bound);
  CHECK(data_bound > 0.5);
  CHECK(compute_bound < 0.1);
  double inline_share = traced_wait_share(tmp.file("inline.db"), 1000, 1000, 0);  // num_workers 0: wait = all loading
  CHECK(inline_share > 0.6);
}

TEST_CASE("traced: each batch has sample, wait, fetch, collate and pin spans with seq = batch index; workers have "
          "their role") {
  TempDir tmp;
  std::string path = tmp.file("stages.db");
  const int64_t batches = 6;
  {
    gb::trace::Session session(path, {.on_full = gb::trace::OnFull::block});
    DataLoader loader(std::make_shared<RandomData>(24), DataLoaderOptions().batch_size(4).num_workers(2).pin_memory(true));
    int64_t n = 0;
    for (auto& b : loader) n += b.data.size(0) > 0;
    CHECK(n == batches);
  }
  auto q = [&](const std::string& sql) { return sql_int(path, sql); };
  const std::string dl = "s.kind = 5 AND s.name_id = (SELECT id FROM strings WHERE text = ";
  for (const char* stage : {"sample", "wait", "fetch", "collate", "pin"}) {
    CAPTURE(stage);
    std::string where = dl + "'" + stage + "')";
    CHECK(q("SELECT COUNT(*) FROM spans s WHERE " + where + " AND seq >= 0") == batches);
    CHECK(q("SELECT COUNT(DISTINCT seq) FROM spans s WHERE " + where + " AND seq BETWEEN 0 AND 5") == batches);
  }
  for (const char* stage : {"fetch", "collate"})  // on worker threads, role dataloader_worker (1)
    CHECK(q("SELECT COUNT(*) FROM spans s JOIN threads t ON t.id = s.thread_id WHERE " + dl + "'" + stage +
            "') AND t.role = 1 AND t.name LIKE 'dataloader worker %'") == batches);
  CHECK(q("SELECT COUNT(*) FROM spans s JOIN threads t ON t.id = s.thread_id WHERE " + dl +
          "'pin') AND t.role = 2") == batches);
  CHECK(q("SELECT COUNT(*) FROM spans s JOIN threads t ON t.id = s.thread_id WHERE " + dl +
          "'wait') AND t.role IN (1, 2)") == 0);  // waiting happens on the training thread
  CHECK(q("SELECT COUNT(*) FROM counters c JOIN strings t ON t.id = c.name_id WHERE t.text = "
          "'dataloader.queue_depth'") > 0);
  CHECK(q("SELECT COUNT(*) FROM counters c JOIN strings t ON t.id = c.name_id WHERE t.text = "
          "'dataloader.prefetched'") > 0);
  // a batch's fetch ends before its collate starts, which ends before its wait ends
  CHECK(q("SELECT COUNT(*) FROM spans f JOIN spans c ON c.seq = f.seq JOIN spans w ON w.seq = f.seq WHERE "
          "f.kind = 5 AND c.kind = 5 AND w.kind = 5 AND "
          "f.name_id = (SELECT id FROM strings WHERE text = 'fetch') AND "
          "c.name_id = (SELECT id FROM strings WHERE text = 'collate') AND "
          "w.name_id = (SELECT id FROM strings WHERE text = 'wait') AND "
          "f.end_ns <= c.start_ns AND c.end_ns <= w.end_ns") == batches);
}
