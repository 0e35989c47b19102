// glassbox/data/make_data_loader.h — libtorch's torch::data::make_data_loader: a DataLoader over a libtorch-style
// dataset (batch_dataset.h) and a libtorch sampler (samplers.h), returned as a unique_ptr.
//
//   auto ds = gb::data::datasets::MNIST("data").map(gb::data::transforms::Stack<>());
//   auto loader = gb::data::make_data_loader<gb::data::samplers::SequentialSampler>(std::move(ds), 64);
//   for (auto& batch : *loader) { ... batch.data (64,1,28,28), batch.target (64) ... }
//
// The sampler defaults to samplers::RandomSampler (a new permutation each epoch), as in libtorch; the options are
// gb::data::DataLoaderOptions, libtorch's names (batch_size, workers, enforce_ordering, max_jobs, timeout,
// drop_last) or glassbox's (pin_memory, device, persistent_workers, ...); the sampler is make_data_loader's, so
// shuffle, sampler and batch_sampler are refused. The loader is a gb::data::DataLoader: its stages (sample, fetch,
// collate, pin, transfer, wait) are traced, its workers are threads sharing the dataset, and its batches are
// bit-identical for any number of workers.
#pragma once

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassbox/data/batch_dataset.h"
#include "glassbox/data/dataloader.h"
#include "glassbox/data/samplers.h"

namespace gb::data {

namespace detail {

template <class S>
concept torch_sampler = requires(S& s, size_t n) {
  s.reset(std::nullopt);
  { *s.next(n) } -> std::convertible_to<std::vector<size_t>>;
};

// A libtorch sampler as the loader's batch sampler: reset() each epoch, next(batch_size) per batch.
template <class S>
class TorchBatchSampler : public BatchSampler {
 public:
  TorchBatchSampler(S sampler, int64_t batch_size, bool drop_last, int64_t dataset_size)
      : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last), dataset_size_(dataset_size) {}
  void reset(Generator&) override { sampler_.reset(std::nullopt); }
  std::optional<std::vector<int64_t>> next() override {
    auto indices = sampler_.next(static_cast<size_t>(batch_size_));
    if (!indices || indices->empty()) return std::nullopt;
    if (drop_last_ && static_cast<int64_t>(indices->size()) < batch_size_) return std::nullopt;
    return std::vector<int64_t>(indices->begin(), indices->end());
  }
  // Batches per epoch: from the sampler's size() when it has one, else the dataset's.
  int64_t size() const override {
    int64_t n = dataset_size_;
    if constexpr (requires(const S& s) { s.size(); }) n = static_cast<int64_t>(sampler_.size());
    return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
  }

 private:
  S sampler_;
  int64_t batch_size_;
  bool drop_last_;
  int64_t dataset_size_;
};

template <class S>
DataLoaderOptions with_sampler(S sampler, DataLoaderOptions options, int64_t dataset_size) {
  GB_CHECK(!options.shuffle() && !options.sampler() && !options.batch_sampler(),
           "make_data_loader: the sampler is make_data_loader's (its template argument, samplers::RandomSampler by "
           "default, or its second argument); leave DataLoaderOptions' shuffle, sampler and batch_sampler unset, or "
           "build a gb::data::DataLoader instead");
  GB_CHECK(options.batch_size() > 0, "batch_size should be a positive integer value, but got batch_size=",
           options.batch_size());
  auto batches = std::make_shared<TorchBatchSampler<S>>(std::move(sampler), options.batch_size(), options.drop_last(),
                                                        dataset_size);
  options.batch_sampler(std::move(batches)).batch_size(1).drop_last(false);
  return options;
}

}  // namespace detail

// libtorch's StatelessDataLoader: a gb::data::DataLoader over dataset D, sampled by S. Iterating it yields D's
// batches (Example<> after Stack<>, std::vector<Example<>> without a collation).
template <class D, class S>
class StatelessDataLoader
    : public DataLoader<typename detail::Pipeline<D>::Example, typename detail::Pipeline<D>::Batch> {
  using Base = DataLoader<typename detail::Pipeline<D>::Example, typename detail::Pipeline<D>::Batch>;

 public:
  using BatchType = typename detail::Pipeline<D>::Batch;
  using SamplerType = S;
  StatelessDataLoader(D dataset, S sampler, DataLoaderOptions options)
      : StatelessDataLoader(std::make_shared<D>(std::move(dataset)), std::move(sampler), std::move(options)) {}

 private:
  StatelessDataLoader(std::shared_ptr<D> d, S sampler, DataLoaderOptions options)
      : Base(d, detail::with_sampler(std::move(sampler), std::move(options),
                                     static_cast<int64_t>(d->size().value_or(0)))) {}
};

template <class D, class S>
  requires detail::torch_sampler<S>
std::unique_ptr<StatelessDataLoader<D, S>> make_data_loader(D dataset, S sampler,
                                                            DataLoaderOptions options = DataLoaderOptions()) {
  static_assert(detail::loadable_dataset<D>,
                "make_data_loader: glassbox loads datasets derived from gb::data::datasets::Dataset<Self> (get(index) "
                "and size()) and their .map()s; a BatchDataset with its own get_batch is not supported");
  return std::make_unique<StatelessDataLoader<D, S>>(std::move(dataset), std::move(sampler), std::move(options));
}

template <class S = samplers::RandomSampler, class D>
std::unique_ptr<StatelessDataLoader<D, S>> make_data_loader(D dataset, DataLoaderOptions options = DataLoaderOptions()) {
  static_assert(detail::loadable_dataset<D>,
                "make_data_loader: glassbox loads datasets derived from gb::data::datasets::Dataset<Self> (get(index) "
                "and size()) and their .map()s; a BatchDataset with its own get_batch is not supported");
  const std::optional<size_t> size = dataset.size();
  GB_CHECK(size.has_value(), "Expected the dataset to be sized in order to construct the Sampler");
  return make_data_loader(std::move(dataset), S(*size), std::move(options));
}

}  // namespace gb::data
