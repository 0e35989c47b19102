// glassbox/data/dataset.h — what a DataLoader reads: map-style and iterable datasets, and the randomness of a sample.
//
// Map-style (torch.utils.data.Dataset): get(index) for index in [0, size()). The DataLoader calls get() from its
// worker threads at the same time, so get() must be safe to call concurrently (read-only state, or your own lock).
//
//   struct Squares : gb::data::Dataset<gb::data::Example<>> {
//     gb::data::Example<> get(int64_t i) override { return {gb::tensor({double(i)}), gb::tensor(i * i)}; }
//     int64_t size() const override { return 100; }
//   };
//
// Iterable (torch.utils.data.IterableDataset): next() until it returns nullopt; reset() starts a new epoch. The
// loader reads the one stream in order (a worker holds it for one batch's samples, batch after batch), so each
// sample is read once per epoch whatever num_workers is (PyTorch would replicate the stream per worker unless
// you shard it); next() is serial, collate runs in parallel. next() is never called concurrently.
//
// Randomness: inside get() (and anything it calls: transforms, gb::rand, gb::randint), sample_generator() and
// gb::default_generator() are a generator seeded from (the epoch's base_seed, the sample's position in the epoch).
// The position is its place in the sampler's order, not the worker that loads it, so batches are bit-identical
// for num_workers = 0, 1, 2, ... (PyTorch gives each worker a generator, so its augmentations change with
// num_workers; glassbox does better). Outside a DataLoader, sample_generator() is gb::default_generator().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "glassbox/core/generator.h"
#include "glassbox/core/tensor.h"
#include "glassbox/data/example.h"
#include "glassbox/ops/factory.h"

namespace gb::data {

template <class Sample>
class Dataset {
 public:
  using SampleType = Sample;
  virtual ~Dataset() = default;
  virtual Sample get(int64_t index) = 0;  // called concurrently from worker threads
  virtual int64_t size() const = 0;
};

template <class Sample>
class IterableDataset {
 public:
  using SampleType = Sample;
  virtual ~IterableDataset() = default;
  virtual std::optional<Sample> next() = 0;  // nullopt: the epoch's stream is over
  virtual void reset() {}                    // called at the start of every epoch
};

// Applies `transform` to each example's data (torchvision's `transform=`), on the worker that loads it.
template <class Data = Tensor, class Target = Tensor>
class TransformDataset : public Dataset<Example<Data, Target>> {
 public:
  TransformDataset(std::shared_ptr<Dataset<Example<Data, Target>>> base, std::function<Data(const Data&)> transform)
      : base_(std::move(base)), transform_(std::move(transform)) {}
  Example<Data, Target> get(int64_t index) override {
    Example<Data, Target> e = base_->get(index);
    e.data = transform_(e.data);
    return e;
  }
  int64_t size() const override { return base_->size(); }

 private:
  std::shared_ptr<Dataset<Example<Data, Target>>> base_;
  std::function<Data(const Data&)> transform_;
};

// The generator a sample's randomness must come from (see the top of this file).
Generator& sample_generator();

// torch.utils.data.get_worker_info(): on a worker thread, its id, the number of workers and its seed
// (base_seed + id); nullopt on the caller's thread (num_workers = 0) and outside a DataLoader.
struct WorkerInfo {
  int64_t id = 0;
  int64_t num_workers = 0;
  uint64_t seed = 0;
};
std::optional<WorkerInfo> get_worker_info();

namespace detail {
// The seed of the sample at `position` of an epoch whose base seed is `base_seed` (splitmix64 of both).
uint64_t sample_seed(uint64_t base_seed, int64_t position);
// Installs the sample's generator as sample_generator() and gb::default_generator() on this thread. The
// generator is seeded on first use: a sample that draws nothing costs no seeding.
class SampleScope {
 public:
  SampleScope(uint64_t base_seed, int64_t position);
  ~SampleScope();
  SampleScope(const SampleScope&) = delete;
  SampleScope& operator=(const SampleScope&) = delete;
  Generator& generator();

 private:
  uint64_t seed_;
  std::optional<Generator> gen_;
  SampleScope* prev_;
  DefaultGeneratorGuard default_guard_;
};
void set_worker_info(const std::optional<WorkerInfo>& info);
}  // namespace detail

}  // namespace gb::data
