// glassbox/data/dataloader_options.h — the DataLoader's options, named and defaulted as in torch.utils.data.DataLoader.
//
//   gb::data::DataLoaderOptions().batch_size(64).shuffle(true).num_workers(2).pin_memory(true)
//
// libtorch's spellings work too: DataLoaderOptions(64).workers(2).enforce_ordering(true).max_jobs(8)
// .timeout(std::chrono::milliseconds(500)) (workers = num_workers, enforce_ordering = in_order; max_jobs caps the
// batches in flight across workers, libtorch's default being 2 per worker as prefetch_factor's).
//
// validate() (called by the DataLoader's constructor) throws gb::Error with PyTorch's messages for contradictory
// options. Differences from PyTorch: workers are threads, not processes (nothing is pickled, datasets are shared),
// and `device` asks the loader to copy each batch there (the `transfer` stage), which PyTorch leaves to the loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "glassbox/core/device.h"
#include "glassbox/core/generator.h"
#include "glassbox/data/sampler.h"
#include "glassbox/nn/options.h"

namespace gb::data {

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(int64_t batch_size) : batch_size_(batch_size) {}  // NOLINT: libtorch's make_data_loader(ds, 64)

  GB_ARG(int64_t, batch_size) = 1;
  GB_ARG(bool, shuffle) = false;                       // a RandomSampler over the dataset
  GB_ARG(std::shared_ptr<Sampler>, sampler);           // exclusive with shuffle
  GB_ARG(std::shared_ptr<BatchSampler>, batch_sampler);  // exclusive with batch_size, shuffle, sampler, drop_last
  GB_ARG(int64_t, num_workers) = 0;                    // worker threads; 0 loads on the caller's thread
  GB_ARG(std::optional<int64_t>, prefetch_factor);     // batches in flight per worker; 2 when num_workers > 0
  GB_ARG(bool, pin_memory) = false;                    // copy batches into page-locked staging buffers
  GB_ARG(bool, drop_last) = false;                     // drop the last batch when it is short
  GB_ARG(double, timeout) = 0;                         // seconds to wait for a worker's batch; 0 = forever
  GB_ARG(std::function<void(int64_t)>, worker_init_fn);  // called on each worker thread with its id, once
  GB_ARG(std::shared_ptr<Generator>, generator);       // base seeds and samplers; default: seeded from gb's default
  GB_ARG(bool, persistent_workers) = false;            // keep the worker threads between epochs
  GB_ARG(bool, in_order) = true;                       // batches in sampler order (a reorder buffer); else as ready
  GB_ARG(std::optional<Device>, device);               // copy each batch to this device (the transfer stage)
  GB_ARG(std::optional<int64_t>, max_jobs);            // libtorch's: batches in flight across all workers

 public:
  // libtorch's names for num_workers, in_order and a timeout as a duration.
  DataLoaderOptions& workers(int64_t n) { return num_workers(n); }
  int64_t workers() const noexcept { return num_workers_; }
  DataLoaderOptions& enforce_ordering(bool on) { return in_order(on); }
  bool enforce_ordering() const noexcept { return in_order_; }
  DataLoaderOptions& timeout(std::chrono::milliseconds t) { return timeout(double(t.count()) / 1000.0); }

  // Throws gb::Error with PyTorch's message when options contradict each other. `iterable`: the dataset is an
  // IterableDataset (no shuffle, sampler or batch_sampler then).
  void validate(bool iterable = false) const;
  // prefetch_factor with its default applied (0 when num_workers == 0).
  int64_t effective_prefetch_factor() const;
};

}  // namespace gb::data
