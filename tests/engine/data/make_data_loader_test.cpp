// tests/engine/data/make_data_loader_test.cpp — glassbox/data/make_data_loader.h: libtorch's make_data_loader over
// libtorch-style datasets, samplers and transforms, loading through glassbox's DataLoader (workers, traced stages,
// bit-identical batches).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "data_test_util.h"
#include "traces/temp_dir.h"

namespace D = gb::data::datasets;
namespace T = gb::data::transforms;
namespace S = gb::data::samplers;
using gb::data::Example;

namespace {
// Example i: data (3) = {i, two draws of the sample's randomness}, target () = i.
struct Noisy : D::Dataset<Noisy> {
  explicit Noisy(size_t n) : n(n) {}
  Example<> get(size_t i) override {
    return {gb::cat({gb::tensor({double(i)}, gb::kDouble), gb::rand({2}, gb::kDouble)}), gb::tensor(int64_t(i))};
  }
  gb::optional<size_t> size() const override { return n; }
  size_t n;
};

std::vector<int64_t> values(const gb::Tensor& t) {
  gb::Tensor c = t.to(gb::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}
}  // namespace

TEST_CASE("SequentialSampler: batches of batch_size in order, the last one short unless drop_last") {
  auto loader = gb::data::make_data_loader<S::SequentialSampler>(Noisy(10).map(T::Stack<>()), 4);
  static_assert(std::is_same_v<std::decay_t<decltype(*loader->begin())>, Example<>>);
  std::vector<int64_t> seen, sizes;
  for (auto& batch : *loader) {
    sizes.push_back(batch.data.size(0));
    for (int64_t t : values(batch.target)) seen.push_back(t);
    CHECK(batch.data.sizes()[1] == 3);
  }
  CHECK(sizes == std::vector<int64_t>{4, 4, 2});
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(loader->size() == 3);
  auto dropping = gb::data::make_data_loader<S::SequentialSampler>(
      Noisy(10).map(T::Stack<>()), gb::data::DataLoaderOptions().batch_size(4).drop_last(true));
  int64_t n = 0;
  for (auto& batch : *dropping) n += batch.data.size(0);
  CHECK(n == 8);
  CHECK(dropping->size() == 2);
}

TEST_CASE("the default RandomSampler: every example once per epoch, a new order each epoch") {
  gb::manual_seed(3);
  auto loader = gb::data::make_data_loader(Noisy(20).map(T::Stack<>()), gb::data::DataLoaderOptions(6));
  std::vector<std::vector<int64_t>> epochs;
  for (int e = 0; e < 2; ++e) {
    std::vector<int64_t> order;
    for (auto& batch : *loader)
      for (int64_t t : values(batch.target)) order.push_back(t);
    epochs.push_back(order);
    std::sort(order.begin(), order.end());
    for (int64_t i = 0; i < 20; ++i) CHECK(order[size_t(i)] == i);
  }
  CHECK(epochs[0] != epochs[1]);
}

TEST_CASE("workers(2) gives the batches of workers(0), bit for bit (per-sample randomness), in order") {
  auto run = [](int64_t workers) {
    gb::manual_seed(11);
    auto loader = gb::data::make_data_loader(
        Noisy(30).map(T::Normalize<>(0.5, 2.0)).map(T::Stack<>()),
        gb::data::DataLoaderOptions().batch_size(4).workers(workers).enforce_ordering(true));
    std::vector<std::vector<unsigned char>> out;
    for (int e = 0; e < 2; ++e)
      for (auto& batch : *loader) {
        out.push_back(gbtest::bytes(batch.data));
        out.push_back(gbtest::bytes(batch.target));
      }
    return out;
  };
  auto ref = run(0);
  CHECK(ref.size() == 2 * 2 * 8);
  CHECK(run(2) == ref);
}

TEST_CASE("without a collation a batch is the vector of examples; a loader takes a sampler object too") {
  S::DistributedSequentialSampler half(10, 2, 1);  // examples 5..9
  auto loader = gb::data::make_data_loader(Noisy(10), std::move(half), gb::data::DataLoaderOptions(3));
  std::vector<int64_t> seen;
  for (std::vector<Example<>>& batch : *loader)
    for (auto& e : batch) seen.push_back(e.target.item<int64_t>());
  CHECK(seen == std::vector<int64_t>{5, 6, 7, 8, 9});
  CHECK(loader->size() == 2);
}

TEST_CASE("gb::data::DataLoader loads a libtorch-style dataset with glassbox's options (shuffle, workers)") {
  gb::data::DataLoader loader(Noisy(12).map(T::Stack<>()),
                              gb::data::DataLoaderOptions().batch_size(5).shuffle(true).num_workers(2));
  int64_t n = 0;
  for (Example<>& batch : loader) n += batch.target.size(0);
  CHECK(n == 12);
}

TEST_CASE("bad options and unsized datasets are refused with what to do") {
  CHECK_THROWS_WITH(gb::data::make_data_loader(Noisy(4), gb::data::DataLoaderOptions().shuffle(true)),
                    gbtest::contains("the sampler is make_data_loader's"));
  CHECK_THROWS_WITH(gb::data::make_data_loader(Noisy(4), gb::data::DataLoaderOptions(0)),
                    gbtest::contains("batch_size should be a positive integer value"));
  CHECK_THROWS_WITH(gb::data::make_data_loader(Noisy(4), gb::data::DataLoaderOptions(2).max_jobs(0).workers(1)),
                    gbtest::contains("max_jobs option should be positive"));
  struct Unsized : D::Dataset<Unsized> {
    Example<> get(size_t) override { return {}; }
    gb::optional<size_t> size() const override { return gb::nullopt; }
  };
  CHECK_THROWS_WITH(gb::data::make_data_loader(Unsized()), gbtest::contains("Expected the dataset to be sized"));
}

TEST_CASE("MNIST as libtorch's example reads it: Normalize<>, Stack<>, kTest, traced loader stages") {
  TempDir tmp;
  auto idx = [&](const std::string& name, std::vector<uint8_t> header, size_t n_values, int seed) {
    std::ofstream f(tmp.file(name), std::ios::binary);
    f.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
    for (size_t i = 0; i < n_values; ++i) f.put(char((i * 37 + size_t(seed)) % 256));
  };
  // 7 training and 3 test images of 4x4, labels 0..9 by position
  idx("train-images-idx3-ubyte", {0, 0, 8, 3, 0, 0, 0, 7, 0, 0, 0, 4, 0, 0, 0, 4}, 7 * 16, 1);
  idx("t10k-images-idx3-ubyte", {0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 4}, 3 * 16, 2);
  {
    std::ofstream l(tmp.file("train-labels-idx1-ubyte"), std::ios::binary);
    l.write("\0\0\x08\x01\0\0\0\x07", 8);
    for (char c = 0; c < 7; ++c) l.put(c);
    std::ofstream t(tmp.file("t10k-labels-idx1-ubyte"), std::ios::binary);
    t.write("\0\0\x08\x01\0\0\0\x03", 8);
    for (char c = 7; c < 10; ++c) t.put(c);
  }
  D::MNIST train_raw(tmp.dir.string());
  CHECK(train_raw.is_train());
  CHECK(train_raw.size().value() == 7);
  auto test = D::MNIST(tmp.dir.string(), D::MNIST::Mode::kTest)
                  .map(T::Normalize<>(0.1307, 0.3081))
                  .map(T::Stack<>());
  CHECK_FALSE(test.dataset().dataset().is_train());
  const size_t test_size = test.size().value();
  CHECK(test_size == 3);

  const std::string path = tmp.file("mnist.db");
  {
    gb::trace::Session session(path, {.on_full = gb::trace::OnFull::block});
    auto loader = gb::data::make_data_loader(std::move(test), gb::data::DataLoaderOptions().batch_size(2).workers(1));
    std::vector<int64_t> labels;
    for (const auto& batch : *loader) {
      CHECK(batch.data.sizes()[1] == 1);
      CHECK(batch.data.sizes()[2] == 4);
      for (int64_t t : values(batch.target)) labels.push_back(t);
      CHECK(batch.data.min().item<float>() >= (0.0f - 0.1307f) / 0.3081f - 1e-5f);
    }
    std::sort(labels.begin(), labels.end());
    CHECK(labels == std::vector<int64_t>{7, 8, 9});
  }
#ifndef GLASSBOX_NO_PROBES  // a build without probes writes no spans (make test-options)
  for (const char* stage : {"sample", "fetch", "collate", "wait"}) {
    CAPTURE(stage);
    CHECK(sql_int(path, std::string("SELECT COUNT(*) FROM spans s WHERE s.kind = 5 AND s.name_id = (SELECT id FROM "
                                    "strings WHERE text = '") + stage + "') AND seq >= 0") == 2);
  }
#endif
  // the first test image's first pixel: byte 2, scaled to [0, 1] and normalized
  auto one = D::MNIST(tmp.dir.string(), D::MNIST::Mode::kTest).map(T::Normalize<>(0.1307, 0.3081));
  CHECK(gb::data::detail::Pipeline<decltype(one)>::get(one, 0).data[0][0][0].item<float>() ==
        doctest::Approx((2.0 / 255.0 - 0.1307) / 0.3081));
}
