// glassbox/data/dataloader.h — gb::data::DataLoader: batches from a dataset, on worker threads, every stage traced.
//
//   auto ds = std::make_shared<gb::data::datasets::Shapes>(gb::data::datasets::ShapesOptions().size(1024));
//   gb::data::DataLoader loader(ds, gb::data::DataLoaderOptions().batch_size(64).shuffle(true).num_workers(2));
//   for (int epoch = 0; epoch < 3; ++epoch)
//     for (auto& batch : loader) { ... batch.data (64,1,H,W), batch.target (64) ... }
//
// Each `for` over the loader is one epoch (begin() starts it; calling begin() again mid-epoch restarts).
// Options and their defaults are PyTorch's (dataloader_options.h); invalid ones throw at construction.
//
// Stages, traced as spans of kind dataloader whose seq is the batch index (traces/SCHEMA.md):
//   sample   caller's thread   the batch sampler picks the batch's indices
//   fetch    worker thread     dataset.get(i) for each index (transforms included)
//   collate  worker thread     samples -> one batch (collate.h, or your collate function)
//   pin      pin thread        copy into page-locked staging (pin_memory)
//   transfer caller's thread   copy to options.device
//   wait     caller's thread   blocked until the next batch is ready; with num_workers = 0 the whole load
// Counters: dataloader.queue_depth (batches ready, not yet taken), dataloader.prefetched (in flight).
//
// Reproducibility: each epoch draws base_seed from the loader's generator; worker w's seed is base_seed + w
// (get_worker_info()); each sample's randomness comes from a generator seeded by (base_seed, its position in
// the epoch) (dataset.h), so the batches are bit-identical for num_workers = 0, 1, 2, 4, ...
//
// Datasets: glassbox's (dataset.h, PyTorch-Python's API) or libtorch's (batch_dataset.h: datasets::Dataset<Self>,
// MNIST, .map(Stack<>())); make_data_loader (make_data_loader.h) is libtorch's way to build one of these loaders.
//
// Workers are threads sharing the dataset: get() must be safe to call concurrently. Tensor ops on a worker run
// single-threaded (gb::detail::SerialRegion), leaving the engine's pool to the training thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassbox/core/cuda.h"
#include "glassbox/core/generator.h"
#include "glassbox/data/batch_dataset.h"
#include "glassbox/data/collate.h"
#include "glassbox/data/dataloader_options.h"
#include "glassbox/data/dataset.h"
#include "glassbox/data/pin_memory.h"
#include "glassbox/data/sampler.h"
#include "glassbox/data/worker_pool.h"
#include "glassbox/ops/factory.h"
#include "instrument/probe.h"

namespace gb::data {

template <class Sample, class Batch = CollateResult<Sample>>
class DataLoader {
 public:
  using CollateFn = std::function<Batch(std::vector<Sample>)>;

  // A map-style dataset.
  DataLoader(std::shared_ptr<Dataset<Sample>> dataset, DataLoaderOptions options = {}, CollateFn collate_fn = {})
      : map_(std::move(dataset)), options_(std::move(options)), collate_(std::move(collate_fn)) {
    GB_CHECK(map_, "DataLoader: the dataset is null");
    init(false);
  }
  // An iterable dataset (no shuffle, sampler or batch_sampler; size() is unknown).
  DataLoader(std::shared_ptr<IterableDataset<Sample>> dataset, DataLoaderOptions options = {},
             CollateFn collate_fn = {})
      : stream_(std::move(dataset)), options_(std::move(options)), collate_(std::move(collate_fn)) {
    GB_CHECK(stream_, "DataLoader: the dataset is null");
    init(true);
  }
  // A dataset by value (moved into a shared_ptr).
  template <class D>
    requires std::is_base_of_v<Dataset<Sample>, D> || std::is_base_of_v<IterableDataset<Sample>, D>
  DataLoader(D dataset, DataLoaderOptions options = {}, CollateFn collate_fn = {})
      : DataLoader(std::shared_ptr<std::conditional_t<std::is_base_of_v<Dataset<Sample>, D>, Dataset<Sample>,
                                                      IterableDataset<Sample>>>(
                       std::make_shared<D>(std::move(dataset))),
                   std::move(options), std::move(collate_fn)) {}

  // A libtorch-style dataset (batch_dataset.h: a datasets::Dataset<Self> or its .map()s): its examples are fetched
  // one by one and its batch transforms (Stack<>, ...) are the collate function.
  template <class D>
    requires detail::loadable_dataset<D>
  DataLoader(std::shared_ptr<D> dataset, DataLoaderOptions options = {})
      : DataLoader(std::shared_ptr<Dataset<Sample>>(std::make_shared<detail::TorchDatasetAdapter<D>>(dataset)),
                   std::move(options), detail::torch_collate(dataset)) {}
  template <class D>
    requires detail::loadable_dataset<D>
  DataLoader(D dataset, DataLoaderOptions options = {})
      : DataLoader(std::make_shared<D>(std::move(dataset)), std::move(options)) {}

  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  struct Sentinel {};
  class Iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    Batch& operator*() const { return *batch_; }
    Batch* operator->() const { return batch_.get(); }
    Iterator& operator++() {
      batch_ = loader_->next_batch();
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(Sentinel) const { return !batch_; }

   private:
    friend class DataLoader;
    Iterator(DataLoader* l, std::shared_ptr<Batch> b) : loader_(l), batch_(std::move(b)) {}
    DataLoader* loader_;
    std::shared_ptr<Batch> batch_;
  };

  // A new epoch; the first batch is loaded before begin() returns.
  Iterator begin() {
    start_epoch();
    return Iterator(this, next_batch());
  }
  Sentinel end() const { return {}; }

  // Batches per epoch (len(loader)); throws for an iterable dataset, whose length is unknown.
  int64_t size() const {
    GB_CHECK(!stream_, "DataLoader: an iterable dataset has no length (len() of an IterableDataset loader)");
    return batch_sampler_->size();
  }
  const DataLoaderOptions& options() const { return options_; }
  // Index of the batch last returned (its spans' seq), -1 before the first.
  int64_t batch_index() const { return last_index_; }
  // Threads running now (workers + pin thread): 0 between epochs unless persistent_workers.
  int64_t live_threads() const { return pool_->live_threads(); }

 private:
  void init(bool iterable) {
    options_.validate(iterable);
    if (!collate_) {
      if constexpr (Collate<Sample>::supported && std::is_same_v<Batch, CollateResult<Sample>>) {
        collate_ = [](std::vector<Sample> s) { return collate(std::move(s)); };
      } else {
        throw gb::Error("DataLoader: no default collate for this sample type; pass a collate function (the third "
                        "constructor argument) or specialize gb::data::Collate<T>");
      }
    }
    if (options_.pin_memory() || (options_.device() && !options_.device()->is_cpu())) {
      if constexpr (!has_tensors_v<Batch>) {
        throw gb::Error("DataLoader: pin_memory and device need to reach the batch's tensors; specialize "
                        "gb::data::Collate<Batch> with for_each_tensor for your batch type");
      }
    }
    if (options_.device() && options_.device()->is_cuda())
      GB_CHECK(gb::cuda::is_available(), "DataLoader: device ", *options_.device(),
               " was given but CUDA is not available: ", gb::cuda::unavailable_reason(),
               ". Leave device unset to keep batches on the cpu");
    generator_ = options_.generator() ? options_.generator()
                                      : std::make_shared<Generator>(gb::default_generator().next_u64());
    if (!iterable) {
      if (options_.batch_sampler()) {
        batch_sampler_ = options_.batch_sampler();
      } else {
        std::shared_ptr<Sampler> s = options_.sampler();
        if (!s && options_.shuffle()) s = std::make_shared<RandomSampler>(map_->size());
        if (!s) s = std::make_shared<SequentialSampler>(map_->size());
        batch_sampler_ = std::make_shared<BatchSampler>(s, options_.batch_size(), options_.drop_last());
      }
    }
    detail::PoolConfig config{.num_workers = options_.num_workers(),
                              .prefetch_factor = options_.effective_prefetch_factor(),
                              .pin_memory = options_.pin_memory(),
                              .persistent_workers = options_.persistent_workers(),
                              .in_order = options_.in_order(),
                              .timeout = options_.timeout(),
                              .worker_init_fn = options_.worker_init_fn()};
    pool_ = std::make_unique<detail::WorkerPool>(
        config, [this](const detail::BatchJob& job, const std::atomic<bool>& stop) { return load(job, stop); },
        [](detail::BatchPtr& b) {
          if constexpr (has_tensors_v<Batch>)
            for_each_tensor(*static_cast<Batch*>(b.get()), [](Tensor& t) { t = pin_memory(t); });
        });
  }

  void start_epoch() {
    last_index_ = -1;
    uint64_t base_seed = generator_->next_u64();  // PyTorch's _base_seed, drawn each epoch
    int64_t position = 0;
    if (stream_) {
      {
        std::lock_guard<std::mutex> lk(stream_mutex_);
        stream_->reset();
        next_stream_batch_ = 0;
        stream_done_ = false;
        ++stream_epoch_;  // the pool numbers epochs the same way (1, 2, ...)
      }
      pool_->start_epoch(base_seed, [this, position]() mutable -> std::optional<detail::BatchJob> {
        detail::BatchJob job;
        job.first_position = position;
        position += options_.batch_size();
        return job;
      });
      return;
    }
    bool reset = false;
    pool_->start_epoch(base_seed, [this, position, reset]() mutable -> std::optional<detail::BatchJob> {
      if (!reset) {
        batch_sampler_->reset(*generator_);
        reset = true;
      }
      std::optional<std::vector<int64_t>> idx = batch_sampler_->next();
      if (!idx) return std::nullopt;
      detail::BatchJob job;
      job.first_position = position;
      position += static_cast<int64_t>(idx->size());
      job.indices = std::move(*idx);
      return job;
    });
  }

  // fetch + collate, on a worker (or the caller with num_workers = 0).
  detail::BatchPtr load(const detail::BatchJob& job, const std::atomic<bool>& stop) {
    static const gb::trace::SourceLocation* fetch_loc = gb::trace::location("fetch", gb::trace::SpanKind::dataloader);
    static const gb::trace::SourceLocation* collate_loc =
        gb::trace::location("collate", gb::trace::SpanKind::dataloader);
    std::vector<Sample> samples;
    {
      gb::trace::Span span(fetch_loc, job.index);
      if (stream_) {
        if (!fetch_stream(job, stop, samples)) return nullptr;
      } else {
        samples.reserve(job.indices.size());
        for (size_t i = 0; i < job.indices.size(); ++i) {
          if (stop.load(std::memory_order_relaxed)) return nullptr;
          detail::SampleScope scope(job.base_seed, job.first_position + static_cast<int64_t>(i));
          samples.push_back(map_->get(job.indices[i]));
        }
      }
    }
    gb::trace::Span span(collate_loc, job.index);
    return std::make_shared<Batch>(collate_(std::move(samples)));
  }

  // An iterable dataset is read in batch order: batch b's worker waits for batch b-1's to finish reading.
  bool fetch_stream(const detail::BatchJob& job, const std::atomic<bool>& stop, std::vector<Sample>& out) {
    std::unique_lock<std::mutex> lk(stream_mutex_);
    // Polls stop (a shutdown clears the queue, so batch b-1 may never come) and drops jobs of an older epoch.
    while (!(job.epoch == stream_epoch_ && next_stream_batch_ == job.index)) {
      if (stop.load() || job.epoch != stream_epoch_) return false;
      stream_cv_.wait_for(lk, std::chrono::milliseconds(5));
    }
    for (int64_t i = 0; i < options_.batch_size() && !stream_done_; ++i) {
      detail::SampleScope scope(job.base_seed, job.first_position + i);
      std::optional<Sample> s = stream_->next();
      if (!s) {
        stream_done_ = true;
        break;
      }
      out.push_back(std::move(*s));
    }
    ++next_stream_batch_;
    lk.unlock();
    stream_cv_.notify_all();
    return !out.empty() && !(options_.drop_last() && static_cast<int64_t>(out.size()) < options_.batch_size());
  }

  std::shared_ptr<Batch> next_batch() {
    auto [ptr, index] = pool_->next();
    if (!ptr) return nullptr;
    last_index_ = index;
    auto batch = std::static_pointer_cast<Batch>(ptr);
    if constexpr (has_tensors_v<Batch>) {
      if (options_.device() && *options_.device() != Device(kCPU)) {
        static const gb::trace::SourceLocation* loc = gb::trace::location("transfer", gb::trace::SpanKind::dataloader);
        gb::trace::Span span(loc, index);
        Device d = *options_.device();
        bool non_blocking = options_.pin_memory();
        for_each_tensor(*batch, [&](Tensor& t) { t = t.to(d, t.scalar_type(), non_blocking); });
      }
    }
    return batch;
  }

  std::shared_ptr<Dataset<Sample>> map_;
  std::shared_ptr<IterableDataset<Sample>> stream_;
  DataLoaderOptions options_;
  CollateFn collate_;
  std::shared_ptr<Generator> generator_;
  std::shared_ptr<BatchSampler> batch_sampler_;
  int64_t last_index_ = -1;
  std::mutex stream_mutex_;
  std::condition_variable stream_cv_;
  int64_t next_stream_batch_ = 0;
  uint64_t stream_epoch_ = 0;
  bool stream_done_ = false;
  std::unique_ptr<detail::WorkerPool> pool_;  // last: destroyed (threads joined) before the rest
};

template <class D>
DataLoader(std::shared_ptr<D>) -> DataLoader<typename D::SampleType>;
template <class D>
DataLoader(std::shared_ptr<D>, DataLoaderOptions) -> DataLoader<typename D::SampleType>;
template <class D, class F>
DataLoader(std::shared_ptr<D>, DataLoaderOptions, F)
    -> DataLoader<typename D::SampleType, std::invoke_result_t<F, std::vector<typename D::SampleType>>>;
template <class D>
DataLoader(D) -> DataLoader<typename D::SampleType>;
template <class D>
DataLoader(D, DataLoaderOptions) -> DataLoader<typename D::SampleType>;
template <class D>
  requires detail::loadable_dataset<D>
DataLoader(std::shared_ptr<D>) -> DataLoader<typename detail::Pipeline<D>::Example, typename detail::Pipeline<D>::Batch>;
template <class D>
  requires detail::loadable_dataset<D>
DataLoader(std::shared_ptr<D>, DataLoaderOptions)
    -> DataLoader<typename detail::Pipeline<D>::Example, typename detail::Pipeline<D>::Batch>;
template <class D>
  requires detail::loadable_dataset<D>
DataLoader(D) -> DataLoader<typename detail::Pipeline<D>::Example, typename detail::Pipeline<D>::Batch>;
template <class D>
  requires detail::loadable_dataset<D>
DataLoader(D, DataLoaderOptions) -> DataLoader<typename detail::Pipeline<D>::Example, typename detail::Pipeline<D>::Batch>;

}  // namespace gb::data
