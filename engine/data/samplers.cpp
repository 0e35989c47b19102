// engine/data/samplers.cpp — libtorch's samplers: the same index sequences as libtorch's for the same draws (the
// distributed ones use std::mt19937 seeded by the epoch, as libtorch does, so replicas agree without communicating).
#include "glassbox/data/samplers.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "glassbox/io/archive.h"
#include "glassbox/ops/factory.h"

namespace gb::data::samplers {
namespace {

// libtorch keeps a sampler's counters as 0-dim int64 tensors marked as buffers.
void write_count(serialize::OutputArchive& archive, const char* key, size_t v) {
  archive.write(key, gb::tensor(static_cast<int64_t>(v)), /*is_buffer=*/true);
}
size_t read_count(serialize::InputArchive& archive, const char* key) {
  Tensor t;
  archive.read(key, t, /*is_buffer=*/true);
  GB_CHECK(t.numel() == 1 && is_integral(t.scalar_type()), "sampler load: '", key, "' is not one integer (shape ",
           t.sizes(), "); the archive was not written by a sampler's save");
  const int64_t v = t.item().to_long();
  GB_CHECK(v >= 0, "sampler load: '", key, "' is ", v, "; the archive was not written by a sampler's save");
  return static_cast<size_t>(v);
}

}  // namespace

RandomSampler::RandomSampler(int64_t size, ScalarType index_dtype)
    : indices_(gb::randperm(size, TensorOptions().dtype(index_dtype))) {
  GB_CHECK(size >= 0, "RandomSampler: the dataset size must be non-negative, got ", size);
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  const auto size = static_cast<int64_t>(new_size.value_or(static_cast<size_t>(indices_.numel())));
  indices_ = gb::randperm(size, TensorOptions().dtype(indices_.scalar_type()));
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  const size_t remaining = static_cast<size_t>(indices_.numel()) - index_;
  if (remaining == 0) return std::nullopt;
  const size_t n = std::min(batch_size, remaining);
  Tensor slice = indices_.slice(0, static_cast<int64_t>(index_), static_cast<int64_t>(index_ + n)).to(kLong);
  const int64_t* p = slice.data_ptr<int64_t>();
  std::vector<size_t> out(p, p + n);
  index_ += n;
  return out;
}

void RandomSampler::save(serialize::OutputArchive& archive) const {
  write_count(archive, "index", index_);
  archive.write("indices", indices_, /*is_buffer=*/true);
}

void RandomSampler::load(serialize::InputArchive& archive) {
  const size_t index = read_count(archive, "index");
  Tensor indices;
  archive.read("indices", indices, /*is_buffer=*/true);
  GB_CHECK(indices.dim() == 1 && is_integral(indices.scalar_type()) && index <= size_t(indices.numel()),
           "RandomSampler::load: 'indices' is not a list of indices covering 'index' (", index, ")");
  indices_ = indices;
  index_ = index;
}

void SequentialSampler::save(serialize::OutputArchive& archive) const { write_count(archive, "index", index_); }

void SequentialSampler::load(serialize::InputArchive& archive) {
  const size_t index = read_count(archive, "index");
  GB_CHECK(index <= size_, "SequentialSampler::load: the archive's index ", index, " is past this sampler's size ",
           size_, "; load it into a sampler over the same dataset");
  index_ = index;
}

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  const size_t remaining = size_ - index_;
  if (remaining == 0) return std::nullopt;
  std::vector<size_t> out(std::min(batch_size, remaining));
  std::iota(out.begin(), out.end(), index_);
  index_ += out.size();
  return out;
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  reset(size_);
}

void DistributedRandomSampler::populate_indices() {
  const size_t local = local_sample_count();
  const size_t count = num_replicas_ == 1 ? size_ : local * num_replicas_;
  all_indices_.resize(count);
  std::iota(all_indices_.begin(), all_indices_.end(), size_t{0});
  // Padding so every replica gets `local` indices wraps around to the start (duplicates), as libtorch's does.
  for (size_t i = size_; i < count; ++i) all_indices_[i] = size_ == 0 ? 0 : (i - size_) % size_;
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
  std::mt19937 rand(static_cast<std::mt19937::result_type>(epoch_));
  std::shuffle(all_indices_.begin(), all_indices_.end(), rand);
  sample_index_ = begin_index_;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<size_t> out(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_),
                          all_indices_.begin() + static_cast<std::ptrdiff_t>(end));
  sample_index_ = end;
  return out;
}

void DistributedRandomSampler::save(serialize::OutputArchive& archive) const {
  write_count(archive, "sample_index_", sample_index_);
  write_count(archive, "epoch_", epoch_);
}

void DistributedRandomSampler::load(serialize::InputArchive& archive) {
  const size_t sample_index = read_count(archive, "sample_index_");
  epoch_ = read_count(archive, "epoch_");
  reset(size_);  // the epoch's permutation again, then the position in it
  GB_CHECK(sample_index >= begin_index_ && sample_index <= end_index_, "DistributedRandomSampler::load: the "
           "archive's position ", sample_index, " is outside this replica's share [", begin_index_, ", ", end_index_,
           "); load it into the sampler of the same rank and dataset size");
  sample_index_ = sample_index;
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  const size_t size = new_size.value_or(size_);
  if (size != size_) {
    size_ = size;
    populate_indices();
  } else {
    sample_index_ = begin_index_;
  }
}

void DistributedSequentialSampler::save(serialize::OutputArchive& archive) const {
  write_count(archive, "sample_index_", sample_index_);
  write_count(archive, "epoch_", epoch_);
}

void DistributedSequentialSampler::load(serialize::InputArchive& archive) {
  const size_t sample_index = read_count(archive, "sample_index_");
  epoch_ = read_count(archive, "epoch_");
  GB_CHECK(sample_index >= begin_index_ && sample_index <= end_index_, "DistributedSequentialSampler::load: the "
           "archive's position ", sample_index, " is outside this replica's share [", begin_index_, ", ", end_index_,
           "); load it into the sampler of the same rank and dataset size");
  sample_index_ = sample_index;
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<size_t> out(end - sample_index_);
  std::iota(out.begin(), out.end(), sample_index_);
  if (end >= size_ && size_ > 0)
    for (size_t& i : out) i %= size_;  // the padding wraps around
  sample_index_ = end;
  return out;
}

}  // namespace gb::data::samplers
