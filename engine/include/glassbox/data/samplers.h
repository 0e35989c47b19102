// glassbox/data/samplers.h — libtorch's samplers (torch::data::samplers), which make_data_loader takes.
//
// A sampler hands out a dataset's indices a batch at a time: reset() starts an epoch, next(batch_size) returns up to
// batch_size indices, nullopt when the epoch is over. make_data_loader<samplers::SequentialSampler>(dataset, 64)
// builds one over the dataset's size; the loader resets it at the start of every epoch (each `for` over it).
//
//   RandomSampler(n)                a fresh permutation of [0, n) per reset, drawn from gb::default_generator()
//                                   (so gb::manual_seed(s) fixes the order, as torch::manual_seed does in libtorch)
//   SequentialSampler(n)            0, 1, ..., n-1
//   DistributedRandomSampler(n, num_replicas, rank, allow_duplicates)
//                                   rank's contiguous share of a permutation every replica draws the same
//                                   (std::mt19937 seeded with the epoch: call set_epoch(e)); with allow_duplicates the
//                                   share is ceil(n / num_replicas), padded by wrapping around, else floor
//   DistributedSequentialSampler(n, num_replicas, rank, allow_duplicates)   the same shares, in order
//
// size() (indices per epoch) is glassbox's addition: the loader reads it for its length. save/load write and read
// the sampler's position in libtorch's archive form (glassbox/io/archive.h), under libtorch's keys, so a run can
// resume mid-epoch. The PyTorch-Python samplers (Sampler, RandomSampler with replacement, WeightedRandomSampler, ...
// for DataLoaderOptions::sampler) are sampler.h's, in gb::data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "glassbox/core/dtype.h"
#include "glassbox/core/error.h"
#include "glassbox/core/tensor.h"

namespace gb::serialize {
class OutputArchive;
class InputArchive;
}  // namespace gb::serialize

namespace gb::data::samplers {

template <class BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  // A new epoch; new_size, when given, changes the number of indices.
  virtual void reset(std::optional<size_t> new_size) = 0;
  // Up to batch_size next indices; nullopt once the epoch's are all handed out.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
  // The sampler's state (where it is in the epoch) to and from an archive.
  virtual void save(serialize::OutputArchive& archive) const = 0;
  virtual void load(serialize::InputArchive& archive) = 0;
};

class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size, ScalarType index_dtype = kLong);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;  // "index", "indices"
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept { return index_; }  // indices handed out this epoch
  size_t size() const noexcept { return static_cast<size_t>(indices_.numel()); }

 private:
  Tensor indices_;
  size_t index_ = 0;
};

class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;  // "index"
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept { return index_; }
  size_t size() const noexcept { return size_; }

 private:
  size_t size_;
  size_t index_ = 0;
};

template <class BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true)
      : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
    GB_CHECK(num_replicas > 0 && rank < num_replicas, "DistributedSampler: rank ", rank, " is not in [0, ",
             num_replicas, "); give num_replicas >= 1 and 0 <= rank < num_replicas");
  }
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }
  // This replica's indices per epoch.
  size_t size() const { return local_sample_count(); }

 protected:
  size_t local_sample_count() const {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }
  size_t size_, num_replicas_, rank_;
  size_t epoch_ = 0;
  bool allow_duplicates_;
};

class DistributedRandomSampler : public DistributedSampler<> {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;  // "sample_index_", "epoch_"
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept { return sample_index_ - begin_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;  // "sample_index_", "epoch_"
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept { return sample_index_ - begin_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

}  // namespace gb::data::samplers
