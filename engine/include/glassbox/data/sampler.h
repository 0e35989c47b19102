// glassbox/data/sampler.h — which dataset indices an epoch visits, and how they are grouped into batches.
//
// A Sampler yields one epoch's indices (torch.utils.data.Sampler); a BatchSampler groups a sampler's indices into
// batches (drop_last drops a last, short batch). Samplers that draw random numbers use their own generator when
// given a seed, else the DataLoader's generator (DataLoaderOptions::generator), so a seeded loader is reproducible.
//
//   auto s = std::make_shared<gb::data::RandomSampler>(dataset_size);       // a permutation per epoch
//   gb::data::DataLoader loader(ds, gb::data::DataLoaderOptions().batch_size(32).sampler(s));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "glassbox/core/generator.h"

namespace gb::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // One epoch's indices. `gen` is the loader's generator (samplers built with a seed use their own instead).
  virtual std::vector<int64_t> indices(Generator& gen) = 0;
  virtual int64_t size() const = 0;  // len(sampler): indices per epoch
};

// 0, 1, ..., n-1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  std::vector<int64_t> indices(Generator& gen) override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
};

// A fresh permutation of [0, n) each epoch; with replacement, num_samples independent uniform draws.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t n, bool replacement = false, std::optional<int64_t> num_samples = std::nullopt,
                         std::optional<uint64_t> seed = std::nullopt);
  std::vector<int64_t> indices(Generator& gen) override;
  int64_t size() const override { return num_samples_; }

 private:
  int64_t n_, num_samples_;
  bool replacement_;
  std::optional<Generator> own_;
};

// A fresh permutation of the given indices each epoch (a train/validation split; one rank's shard).
class SubsetRandomSampler : public Sampler {
 public:
  explicit SubsetRandomSampler(std::vector<int64_t> indices, std::optional<uint64_t> seed = std::nullopt);
  std::vector<int64_t> indices(Generator& gen) override;
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }

 private:
  std::vector<int64_t> indices_;
  std::optional<Generator> own_;
};

// num_samples indices drawn with probability proportional to weights (with replacement by default).
class WeightedRandomSampler : public Sampler {
 public:
  WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement = true,
                        std::optional<uint64_t> seed = std::nullopt);
  std::vector<int64_t> indices(Generator& gen) override;
  int64_t size() const override { return num_samples_; }

 private:
  std::vector<double> weights_;
  int64_t num_samples_;
  bool replacement_;
  std::optional<Generator> own_;
};

// torch.utils.data.DistributedSampler: rank's share of [0, n) among num_replicas, the same permutation on every
// rank (seeded by seed + epoch; call set_epoch(e) each epoch), padded by repeating indices so every rank gets
// ceil(n / num_replicas) (or floor with drop_last).
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t n, int64_t num_replicas, int64_t rank, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false);
  std::vector<int64_t> indices(Generator& gen) override;
  int64_t size() const override { return num_samples_; }
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  bool drop_last() const { return drop_last_; }

 private:
  int64_t n_, num_replicas_, rank_, num_samples_;
  bool shuffle_, drop_last_;
  uint64_t seed_;
  int64_t epoch_ = 0;
};

// Groups a sampler's indices into batches. Subclass it to make your own batches (the batch_sampler option).
class BatchSampler {
 public:
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last);
  virtual ~BatchSampler() = default;
  virtual void reset(Generator& gen);                       // a new epoch: asks the sampler for its indices
  virtual std::optional<std::vector<int64_t>> next();       // the next batch; nullopt at the epoch's end
  virtual int64_t size() const;                             // batches per epoch

 protected:
  BatchSampler() = default;  // for subclasses that make batches their own way

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_ = 1;
  bool drop_last_ = false;
  std::vector<int64_t> epoch_;
  size_t pos_ = 0;
};

}  // namespace gb::data
