// glassbox/data/worker_pool.h — the machinery under DataLoader, independent of sample and batch types.
//
// The caller's thread dispatches batch jobs (the `sample` stage: a BatchSampler step), up to prefetch_factor x
// num_workers in flight; worker threads run the load function (fetch + collate) and hand results to an optional
// pin thread (pin_memory) and then to a buffer keyed by batch index; next() waits (the `wait` stage) for the
// next batch in sampler order (in_order) or the first one ready. With num_workers == 0 next() does every stage
// inline, inside its `wait` span, so the trace's wait share is the loop's whole data time either way.
//
// Errors: a load that throws becomes a WorkerError naming the worker and batch; next() throws it and shuts the
// epoch down (threads joined, even persistent ones; the next epoch starts new ones). A result that is not there
// after `timeout` seconds throws "DataLoader timed out after N seconds". The destructor joins every thread; a
// worker checks for shutdown between samples, so it returns after at most one sample's get().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "glassbox/core/error.h"

namespace gb::data {

// An exception thrown by a dataset, transform or collate on a worker thread, as the training thread sees it:
// "Caught RuntimeError in DataLoader worker process 1 while loading batch 7: <the original message>".
class WorkerError : public gb::Error {
 public:
  WorkerError(int64_t worker_id, int64_t batch_index, std::string type, std::string original);
  int64_t worker_id() const { return worker_id_; }
  int64_t batch_index() const { return batch_index_; }
  const std::string& original_message() const { return original_; }

 private:
  int64_t worker_id_, batch_index_;
  std::string original_;
};

namespace detail {

struct BatchJob {
  int64_t index = 0;             // batch index in the epoch (spans' seq)
  int64_t first_position = 0;    // the position in the epoch of the batch's first sample (its seeds)
  std::vector<int64_t> indices;  // dataset indices; empty for an iterable dataset
  uint64_t base_seed = 0;
  uint64_t epoch = 0;
};

// A loaded batch, type-erased; null = an iterable dataset ran out (no more batches this epoch).
using BatchPtr = std::shared_ptr<void>;

struct PoolConfig {
  int64_t num_workers = 0;
  int64_t prefetch_factor = 2;
  bool pin_memory = false;
  bool persistent_workers = false;
  bool in_order = true;
  double timeout = 0;
  std::function<void(int64_t)> worker_init_fn;
};

class WorkerPool {
 public:
  // load: fetch + collate (on a worker or the caller); `stop` turns true when the pool shuts down (check it
  //       between samples and return nullptr).
  // pin:  pin_memory (on the pin thread or the caller), in place.
  // sample: the next batch's job (index, indices) or nullopt at the epoch's end; called on the caller's thread.
  using LoadFn = std::function<BatchPtr(const BatchJob&, const std::atomic<bool>& stop)>;
  using PinFn = std::function<void(BatchPtr&)>;
  using SampleFn = std::function<std::optional<BatchJob>()>;

  WorkerPool(PoolConfig config, LoadFn load, PinFn pin);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // A new epoch: forgets whatever the last one left in flight, starts the threads if they are not running.
  void start_epoch(uint64_t base_seed, SampleFn sample);
  // The next batch and its index, or {nullptr, -1} at the epoch's end. Throws WorkerError, or on timeout.
  std::pair<BatchPtr, int64_t> next();
  // Joins every thread (the destructor calls it).
  void shutdown();
  int64_t live_threads() const;

 private:
  struct Result {
    BatchPtr batch;
    std::exception_ptr error;
    uint64_t epoch = 0;
    int64_t samples = 0;  // the batch's samples (0: an iterable dataset's, not counted)
  };
  void start_threads();
  void worker_loop(int64_t id);
  void pin_loop();
  void deliver(int64_t index, Result r);  // to the ready buffer (lock held)
  bool dispatch_one();                    // lock not held
  void end_epoch();

  PoolConfig config_;
  LoadFn load_;
  PinFn pin_;
  SampleFn sample_;
  uint64_t base_seed_ = 0;
  uint64_t epoch_ = 0;

  mutable std::mutex m_;
  std::condition_variable work_cv_, pin_cv_, ready_cv_;
  std::deque<BatchJob> jobs_;
  std::deque<std::pair<int64_t, Result>> to_pin_;
  std::map<int64_t, Result> ready_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;

  // the caller's side (only the caller's thread touches these)
  int64_t next_dispatch_ = 0;  // jobs dispatched this epoch
  int64_t next_yield_ = 0;     // in_order: the batch index next() returns next
  int64_t outstanding_ = 0;    // dispatched, not yet returned
  bool sampler_done_ = true;
};

}  // namespace detail
}  // namespace gb::data
