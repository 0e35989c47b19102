// engine/data/dataloader_options.cpp — the DataLoader's option checks, with PyTorch's messages.
#include "glassbox/data/dataloader_options.h"

#include <algorithm>

#include "glassbox/core/error.h"

namespace gb::data {

void DataLoaderOptions::validate(bool iterable) const {
  GB_CHECK(num_workers_ >= 0, "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  GB_CHECK(timeout_ >= 0, "timeout option should be non-negative");
  GB_CHECK(!(num_workers_ == 0 && prefetch_factor_),
           "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
           "multiprocessing, otherwise set prefetch_factor to None.");
  GB_CHECK(!prefetch_factor_ || *prefetch_factor_ >= 0, "prefetch_factor option should be non-negative");
  GB_CHECK(!(persistent_workers_ && num_workers_ == 0), "persistent_workers option needs num_workers > 0");
  if (iterable) {
    GB_CHECK(!shuffle_, "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=True");
    GB_CHECK(!sampler_, "DataLoader with IterableDataset: expected unspecified sampler option, but got a sampler");
    GB_CHECK(!batch_sampler_,
             "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got a batch_sampler");
  }
  GB_CHECK(!(sampler_ && shuffle_), "sampler option is mutually exclusive with shuffle");
  GB_CHECK(!(batch_sampler_ && (batch_size_ != 1 || shuffle_ || sampler_ || drop_last_)),
           "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last");
  GB_CHECK(!max_jobs_ || *max_jobs_ > 0, "max_jobs option should be positive, but got max_jobs=", max_jobs_.value_or(0));
  GB_CHECK(!(max_jobs_ && prefetch_factor_), "max_jobs and prefetch_factor both bound the batches in flight; give one");
  GB_CHECK(batch_size_ > 0, "batch_size should be a positive integer value, but got batch_size=", batch_size_);
}

int64_t DataLoaderOptions::effective_prefetch_factor() const {
  if (num_workers_ == 0) return 0;
  if (max_jobs_) return std::max<int64_t>(1, (*max_jobs_ + num_workers_ - 1) / num_workers_);
  return prefetch_factor_.value_or(2);
}

}  // namespace gb::data
