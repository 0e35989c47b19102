// tests/engine/data/batch_dataset_test.cpp — glassbox/data/batch_dataset.h: libtorch's Dataset<Self>, map() and
// TensorDataset as libtorch programs use them, and how a loader splits them into fetch and collate.
#include <doctest/doctest.h>

#include <type_traits>

#include "data_test_util.h"

namespace D = gb::data::datasets;
namespace T = gb::data::transforms;

namespace {
// Example i: data (2) = {i, 2i}, target () = i % 3; counts its get() calls.
struct Rows : D::Dataset<Rows> {
  explicit Rows(size_t n) : n(n) {}
  gb::data::Example<> get(size_t i) override {
    ++gets;
    double v = double(i);
    return {gb::tensor({v, 2 * v}), gb::tensor(int64_t(i % 3))};
  }
  gb::optional<size_t> size() const override { return n; }
  size_t n;
  int gets = 0;
};

struct Doubled : T::Transform<gb::data::Example<>, gb::data::Example<>> {
  gb::data::Example<> apply(gb::data::Example<> e) override { return {e.data * 2, e.target}; }
};
}  // namespace

TEST_CASE("Dataset<Self>: get_batch gets each index; size is an optional") {
  Rows rows(5);
  CHECK(rows.size().value() == 5);
  std::vector<size_t> idx = {4, 0};
  std::vector<gb::data::Example<>> b = rows.get_batch(idx);
  REQUIRE(b.size() == 2);
  CHECK(b[0].data[1].item<double>() == 8.0);
  CHECK(b[1].target.item<int64_t>() == 0);
  CHECK(rows.gets == 2);
}

TEST_CASE("map: a per-example transform, then Stack<>, gives stacked batches; the source is moved, not copied") {
  auto ds = Rows(6).map(Doubled()).map(T::Stack<>());
  static_assert(std::is_same_v<decltype(ds)::BatchType, gb::data::Example<>>);
  CHECK(ds.size() == std::optional<size_t>(6));
  std::vector<size_t> idx = {1, 2, 5};
  gb::data::Example<> b = ds.get_batch(idx);
  CHECK(b.data.sizes() == gb::IntArrayRef({3, 2}));
  CHECK(b.data[2][1].item<double>() == 20.0);  // 2 * (2 * 5)
  CHECK(b.target.sizes() == gb::IntArrayRef({3}));
  CHECK(b.target[2].item<int64_t>() == 2);
  CHECK(ds.dataset().dataset().gets == 3);

  // map on an lvalue copies the dataset
  Rows rows(4);
  auto mapped = rows.map(T::Stack<>());
  mapped.get_batch(std::vector<size_t>{0});
  CHECK(rows.gets == 0);
}

TEST_CASE("the loader's split: per-example transforms before the first batch transform are fetched, the rest collated") {
  using Fetched = gb::data::detail::Pipeline<D::MapDataset<D::MapDataset<Rows, Doubled>, T::Stack<>>>;
  static_assert(Fetched::supported);
  static_assert(std::is_same_v<Fetched::Example, gb::data::Example<>>);
  static_assert(std::is_same_v<Fetched::Batch, gb::data::Example<>>);
  static_assert(!gb::data::detail::Pipeline<D::MapDataset<Rows, T::Stack<>>>::per_example);
  // after the collation a per-example transform applies to the batch (apply_batch of a vector: none here)
  using Unstacked = gb::data::detail::Pipeline<D::MapDataset<Rows, Doubled>>;
  static_assert(std::is_same_v<Unstacked::Batch, std::vector<gb::data::Example<>>>);
  static_assert(!gb::data::detail::Pipeline<gb::data::datasets::MNIST>::collated);
  static_assert(!gb::data::detail::loadable_dataset<gbtest::RandomData>);  // glassbox's own: not through this path

  auto ds = Rows(3).map(Doubled()).map(T::Stack<>());
  gb::data::Example<> e = Fetched::get(ds, 2);
  CHECK(e.data[0].item<double>() == 4.0);
  gb::data::Example<> b = Fetched::collate(ds, {Fetched::get(ds, 0), e});
  CHECK(b.data.sizes() == gb::IntArrayRef({2, 2}));
}

TEST_CASE("TensorDataset: the rows of a tensor as examples without a target; Stack<TensorExample> stacks them") {
  D::TensorDataset ds(gb::arange(12, gb::kDouble).view({4, 3}));
  CHECK(ds.size().value() == 4);
  gb::data::TensorExample e = ds.get(2);
  CHECK(e.data[0].item<double>() == 6.0);
  gb::Tensor& as_tensor = e;  // an example without a target is usable as its data
  CHECK(as_tensor.numel() == 3);
  auto stacked = D::TensorDataset({gb::ones({2}), gb::zeros({2})}).map(T::Stack<gb::data::TensorExample>());
  gb::data::TensorExample b = stacked.get_batch(std::vector<size_t>{1, 0});
  CHECK(b.data.sizes() == gb::IntArrayRef({2, 2}));
  CHECK(b.data[1][0].item<float>() == 1.0f);
  CHECK_THROWS_WITH(D::TensorDataset(gb::tensor(1.0)), gbtest::contains("TensorDataset: expected a tensor of at least one dim"));
}
