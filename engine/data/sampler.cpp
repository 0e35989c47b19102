// engine/data/sampler.cpp — the samplers' index lists (Fisher–Yates shuffles and weighted draws from a Generator).
#include "glassbox/data/sampler.h"

#include <algorithm>
#include <numeric>

#include "glassbox/core/error.h"

namespace gb::data {
namespace {

int64_t below(Generator& gen, int64_t n) { return static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(n)); }

void shuffle(std::vector<int64_t>& v, Generator& gen) {
  for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i) std::swap(v[i], v[below(gen, i + 1)]);
}

std::optional<Generator> own_generator(std::optional<uint64_t> seed) {
  return seed ? std::optional<Generator>(Generator(*seed)) : std::nullopt;
}

}  // namespace

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  GB_CHECK(n >= 0, "SequentialSampler: the dataset size must be non-negative, got ", n);
}
std::vector<int64_t> SequentialSampler::indices(Generator&) {
  std::vector<int64_t> v(n_);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

RandomSampler::RandomSampler(int64_t n, bool replacement, std::optional<int64_t> num_samples,
                             std::optional<uint64_t> seed)
    : n_(n), num_samples_(num_samples.value_or(n)), replacement_(replacement), own_(own_generator(seed)) {
  GB_CHECK(!num_samples || *num_samples > 0,
           "num_samples should be a positive integer value, but got num_samples=", num_samples.value_or(0));
  GB_CHECK(n > 0 || num_samples_ == 0, "RandomSampler: the dataset is empty");
}
std::vector<int64_t> RandomSampler::indices(Generator& loader_gen) {
  Generator& gen = own_ ? *own_ : loader_gen;
  std::vector<int64_t> v;
  v.reserve(num_samples_);
  if (replacement_) {
    for (int64_t i = 0; i < num_samples_; ++i) v.push_back(below(gen, n_));
    return v;
  }
  while (static_cast<int64_t>(v.size()) < num_samples_) {  // num_samples > n: whole permutations, then a part
    std::vector<int64_t> p(n_);
    std::iota(p.begin(), p.end(), 0);
    shuffle(p, gen);
    p.resize(std::min<int64_t>(n_, num_samples_ - static_cast<int64_t>(v.size())));
    v.insert(v.end(), p.begin(), p.end());
  }
  return v;
}

SubsetRandomSampler::SubsetRandomSampler(std::vector<int64_t> indices, std::optional<uint64_t> seed)
    : indices_(std::move(indices)), own_(own_generator(seed)) {}
std::vector<int64_t> SubsetRandomSampler::indices(Generator& loader_gen) {
  std::vector<int64_t> v = indices_;
  shuffle(v, own_ ? *own_ : loader_gen);
  return v;
}

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement,
                                             std::optional<uint64_t> seed)
    : weights_(std::move(weights)), num_samples_(num_samples), replacement_(replacement), own_(own_generator(seed)) {
  GB_CHECK(num_samples > 0, "num_samples should be a positive integer value, but got num_samples=", num_samples);
  double total = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    GB_CHECK(weights_[i] >= 0 && std::isfinite(weights_[i]), "WeightedRandomSampler: weight ", i, " is ",
             weights_[i], "; weights must be finite and non-negative");
    total += weights_[i];
  }
  GB_CHECK(total > 0, "WeightedRandomSampler: the weights sum to 0; give at least one sample a positive weight");
  if (!replacement) {
    int64_t positive = std::count_if(weights_.begin(), weights_.end(), [](double w) { return w > 0; });
    GB_CHECK(num_samples <= positive, "WeightedRandomSampler: cannot draw ", num_samples,
             " samples without replacement from ", positive, " with a positive weight");
  }
}
std::vector<int64_t> WeightedRandomSampler::indices(Generator& loader_gen) {
  Generator& gen = own_ ? *own_ : loader_gen;
  std::vector<double> w = weights_;
  std::vector<double> cdf(w.size());
  std::vector<int64_t> v;
  v.reserve(num_samples_);
  for (int64_t k = 0; k < num_samples_; ++k) {
    std::partial_sum(w.begin(), w.end(), cdf.begin());
    double u = gen.uniform_double() * cdf.back();
    int64_t i = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    i = std::min<int64_t>(i, static_cast<int64_t>(w.size()) - 1);
    while (w[i] == 0) --i;  // u landed on a boundary: take the last index with weight
    v.push_back(i);
    if (!replacement_) w[i] = 0;
    if (replacement_ && k == 0) {  // with replacement the cdf never changes: draw the rest from it directly
      for (++k; k < num_samples_; ++k) {
        double x = gen.uniform_double() * cdf.back();
        int64_t j = std::min<int64_t>(std::upper_bound(cdf.begin(), cdf.end(), x) - cdf.begin(),
                                      static_cast<int64_t>(w.size()) - 1);
        while (w[j] == 0) --j;
        v.push_back(j);
      }
    }
  }
  return v;
}

DistributedSampler::DistributedSampler(int64_t n, int64_t num_replicas, int64_t rank, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : n_(n), num_replicas_(num_replicas), rank_(rank), shuffle_(shuffle), drop_last_(drop_last), seed_(seed) {
  GB_CHECK(num_replicas > 0, "DistributedSampler: num_replicas must be positive, got ", num_replicas);
  GB_CHECK(rank >= 0 && rank < num_replicas, "Invalid rank ", rank, ", rank should be in the interval [0, ",
           num_replicas - 1, "]");
  num_samples_ = drop_last && n % num_replicas != 0 ? n / num_replicas : (n + num_replicas - 1) / num_replicas;
}
std::vector<int64_t> DistributedSampler::indices(Generator&) {
  std::vector<int64_t> all(n_);
  std::iota(all.begin(), all.end(), 0);
  if (shuffle_) {
    Generator gen(seed_ + static_cast<uint64_t>(epoch_));  // the same on every rank
    shuffle(all, gen);
  }
  int64_t total = num_samples_ * num_replicas_;
  if (static_cast<int64_t>(all.size()) < total) {  // pad by repeating from the start
    for (int64_t i = 0; static_cast<int64_t>(all.size()) < total; ++i) all.push_back(all[i % n_]);
  }
  all.resize(total);
  std::vector<int64_t> mine;
  for (int64_t i = rank_; i < total; i += num_replicas_) mine.push_back(all[i]);
  return mine;
}

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  GB_CHECK(sampler_, "BatchSampler: the sampler is null");
  GB_CHECK(batch_size > 0, "batch_size should be a positive integer value, but got batch_size=", batch_size);
}
void BatchSampler::reset(Generator& gen) {
  epoch_ = sampler_->indices(gen);
  pos_ = 0;
}
std::optional<std::vector<int64_t>> BatchSampler::next() {
  size_t left = epoch_.size() - pos_;
  if (left == 0 || (drop_last_ && left < static_cast<size_t>(batch_size_))) return std::nullopt;
  size_t n = std::min(left, static_cast<size_t>(batch_size_));
  std::vector<int64_t> b(epoch_.begin() + pos_, epoch_.begin() + pos_ + n);
  pos_ += n;
  return b;
}
int64_t BatchSampler::size() const {
  int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

}  // namespace gb::data
