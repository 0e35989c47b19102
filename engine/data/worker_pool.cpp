// engine/data/worker_pool.cpp — the DataLoader's threads, queues, reorder buffer, timeouts and shutdown.
//
// One mutex guards the job queue, the pin queue and the ready buffer; jobs and results carry the epoch they
// belong to, so a new epoch (or a restart mid-epoch) drops stale results on arrival instead of waiting for them.
#include "glassbox/data/worker_pool.h"

#include <chrono>
#include <string>

#include "glassbox/core/generator.h"
#include "glassbox/core/parallel.h"
#include "glassbox/data/dataset.h"
#include "glassbox/ops/factory.h"
#include "instrument/probe.h"

namespace gb::data {

WorkerError::WorkerError(int64_t worker_id, int64_t batch_index, std::string type, std::string original)
    : gb::Error(gb::detail::str_cat("Caught ", type, " in DataLoader worker process ", worker_id,
                                " while loading batch ", batch_index, ": ", original)),
      worker_id_(worker_id),
      batch_index_(batch_index),
      original_(std::move(original)) {}

namespace detail {
namespace {

using gb::trace::SpanKind;
GB_TRACE_LOCATION(k_sample, SpanKind::dataloader, "sample");
GB_TRACE_LOCATION(k_pin, SpanKind::dataloader, "pin");
GB_TRACE_LOCATION(k_wait, SpanKind::dataloader, "wait");

std::exception_ptr as_worker_error(int64_t worker, int64_t batch, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const WorkerError&) {
    return std::current_exception();
  } catch (const gb::IndexError& x) {
    return std::make_exception_ptr(WorkerError(worker, batch, "IndexError", x.what()));
  } catch (const gb::TypeError& x) {
    return std::make_exception_ptr(WorkerError(worker, batch, "TypeError", x.what()));
  } catch (const std::exception& x) {
    return std::make_exception_ptr(WorkerError(worker, batch, "RuntimeError", x.what()));
  } catch (...) {
    return std::make_exception_ptr(WorkerError(worker, batch, "exception", "(not a std::exception)"));
  }
}

void count_ready(size_t n) { GB_TRACE_COUNTER("dataloader.queue_depth", n); }
void count_prefetched(int64_t n) { GB_TRACE_COUNTER("dataloader.prefetched", n); }

}  // namespace

WorkerPool::WorkerPool(PoolConfig config, LoadFn load, PinFn pin)
    : config_(std::move(config)), load_(std::move(load)), pin_(std::move(pin)) {
  if (config_.prefetch_factor < 1) config_.prefetch_factor = 1;
}

WorkerPool::~WorkerPool() { shutdown(); }

int64_t WorkerPool::live_threads() const { return static_cast<int64_t>(threads_.size()); }

void WorkerPool::start_threads() {
  if (config_.num_workers == 0 || !threads_.empty()) return;
  stop_ = false;
  for (int64_t id = 0; id < config_.num_workers; ++id) threads_.emplace_back([this, id] { worker_loop(id); });
  if (config_.pin_memory) threads_.emplace_back([this] { pin_loop(); });
}

void WorkerPool::shutdown() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
    jobs_.clear();
    to_pin_.clear();
    ready_.clear();
  }
  work_cv_.notify_all();
  pin_cv_.notify_all();
  ready_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  outstanding_ = 0;
  sampler_done_ = true;
}

void WorkerPool::start_epoch(uint64_t base_seed, SampleFn sample) {
  {
    std::lock_guard<std::mutex> lk(m_);
    ++epoch_;
    base_seed_ = base_seed;
    jobs_.clear();
    to_pin_.clear();
    ready_.clear();
  }
  sample_ = std::move(sample);
  next_dispatch_ = next_yield_ = outstanding_ = 0;
  sampler_done_ = false;
  start_threads();
}

bool WorkerPool::dispatch_one() {
  if (sampler_done_) return false;
  std::optional<BatchJob> job;
  {
    gb::trace::Span span(&k_sample, next_dispatch_);
    job = sample_();
    if (!job) span.set_seq(-1);  // the call that found the epoch's end belongs to no batch
  }
  if (!job) {
    sampler_done_ = true;
    return false;
  }
  job->index = next_dispatch_++;
  job->base_seed = base_seed_;
  job->epoch = epoch_;
  ++outstanding_;
  {
    std::lock_guard<std::mutex> lk(m_);
    jobs_.push_back(std::move(*job));
  }
  work_cv_.notify_one();
  count_prefetched(outstanding_);
  return true;
}

void WorkerPool::deliver(int64_t index, Result r) {
  if (r.epoch != epoch_ || stop_) return;  // a result of an epoch that was restarted or shut down
  ready_[index] = std::move(r);
  count_ready(ready_.size());
}

void WorkerPool::end_epoch() {
  sampler_done_ = true;
  if (!config_.persistent_workers) shutdown();
}

std::pair<BatchPtr, int64_t> WorkerPool::next() {
  if (config_.num_workers == 0) {  // every stage on the caller's thread, inside its wait span
    if (sampler_done_) return {nullptr, -1};
    gb::trace::Span wait(&k_wait, next_yield_);
    gb::trace::PhaseScope phase(gb::trace::Phase::data);  // the step's data_ns
    std::optional<BatchJob> job;
    {
      gb::trace::Span span(&k_sample, next_yield_);
      job = sample_();
      if (!job) span.set_seq(-1);
    }
    if (!job) {
      wait.set_seq(-1);
      sampler_done_ = true;
      return {nullptr, -1};
    }
    job->index = next_yield_++;
    job->base_seed = base_seed_;
    job->epoch = epoch_;
    BatchPtr b = load_(*job, stop_);
    if (!b) {
      wait.set_seq(-1);
      sampler_done_ = true;
      return {nullptr, -1};
    }
    if (config_.pin_memory) {
      gb::trace::Span span(&k_pin, job->index);
      pin_(b);
    }
    if (!job->indices.empty()) gb::trace::add_step_samples(static_cast<int64_t>(job->indices.size()));
    return {std::move(b), job->index};
  }

  const int64_t capacity = config_.num_workers * config_.prefetch_factor;
  for (;;) {
    while (outstanding_ < capacity && dispatch_one()) {
    }
    if (outstanding_ == 0) {
      end_epoch();
      return {nullptr, -1};
    }
    gb::trace::Span wait(&k_wait, config_.in_order ? next_yield_ : -1);
    gb::trace::PhaseScope phase(gb::trace::Phase::data);  // the step's data_ns
    std::unique_lock<std::mutex> lk(m_);
    auto is_ready = [&] { return config_.in_order ? ready_.count(next_yield_) > 0 : !ready_.empty(); };
    if (config_.timeout > 0) {
      auto limit = std::chrono::duration<double>(config_.timeout);
      if (!ready_cv_.wait_for(lk, limit, is_ready)) {
        lk.unlock();
        shutdown();
        throw gb::Error(gb::detail::str_cat("DataLoader timed out after ", config_.timeout,
                                            " seconds (the timeout option); a worker is slower than that on one "
                                            "batch: raise timeout, or find the slow get() in the trace's fetch spans"));
      }
    } else {
      ready_cv_.wait(lk, is_ready);
    }
    auto it = config_.in_order ? ready_.find(next_yield_) : ready_.begin();
    int64_t index = it->first;
    Result r = std::move(it->second);
    ready_.erase(it);
    size_t depth = ready_.size();
    lk.unlock();
    wait.set_seq(index);
    if (config_.in_order) ++next_yield_;
    --outstanding_;
    count_ready(depth);
    if (r.error) {
      shutdown();
      std::rethrow_exception(r.error);
    }
    if (!r.batch) {  // an iterable dataset ran out: batches after this one are empty too
      sampler_done_ = true;
      continue;
    }
    while (outstanding_ < capacity && dispatch_one()) {  // keep the workers busy while the caller trains
    }
    count_prefetched(outstanding_);
    if (r.samples > 0) gb::trace::add_step_samples(r.samples);
    return {std::move(r.batch), index};
  }
}

void WorkerPool::worker_loop(int64_t id) {
  gb::trace::set_thread_name("dataloader worker " + std::to_string(id), gb::trace::ThreadRole::dataloader_worker);
  gb::detail::SerialRegion serial;  // tensor ops here run inline: the pool belongs to the training thread
  uint64_t seed;
  {
    std::lock_guard<std::mutex> lk(m_);
    seed = base_seed_ + static_cast<uint64_t>(id);
  }
  Generator gen(seed);  // gb::default_generator() on this thread outside samples (worker_init_fn)
  DefaultGeneratorGuard guard(gen);
  set_worker_info(WorkerInfo{id, config_.num_workers, seed});
  std::exception_ptr init_error;
  if (config_.worker_init_fn) {
    try {
      config_.worker_init_fn(id);
    } catch (...) {
      init_error = std::current_exception();
    }
  }
  for (;;) {
    BatchJob job;
    {
      std::unique_lock<std::mutex> lk(m_);
      work_cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Result r;
    r.epoch = job.epoch;
    r.samples = static_cast<int64_t>(job.indices.size());
    try {
      if (init_error) std::rethrow_exception(init_error);
      r.batch = load_(job, stop_);
    } catch (...) {
      r.error = as_worker_error(id, job.index, std::current_exception());
    }
    {
      std::lock_guard<std::mutex> lk(m_);
      if (stop_) return;
      if (config_.pin_memory) {
        to_pin_.emplace_back(job.index, std::move(r));
      } else {
        deliver(job.index, std::move(r));
      }
    }
    if (config_.pin_memory) {
      pin_cv_.notify_one();
    } else {
      ready_cv_.notify_all();
    }
  }
}

void WorkerPool::pin_loop() {
  gb::trace::set_thread_name("pin memory", gb::trace::ThreadRole::pin_memory);
  gb::detail::SerialRegion serial;
  for (;;) {
    std::pair<int64_t, Result> item;
    {
      std::unique_lock<std::mutex> lk(m_);
      pin_cv_.wait(lk, [&] { return stop_ || !to_pin_.empty(); });
      if (stop_) return;
      item = std::move(to_pin_.front());
      to_pin_.pop_front();
    }
    Result& r = item.second;
    if (r.batch && !r.error) {
      try {
        gb::trace::Span span(&k_pin, item.first);
        pin_(r.batch);
      } catch (...) {
        r.error = as_worker_error(-1, item.first, std::current_exception());
      }
    }
    {
      std::lock_guard<std::mutex> lk(m_);
      if (stop_) return;
      deliver(item.first, std::move(r));
    }
    ready_cv_.notify_all();
  }
}

}  // namespace detail
}  // namespace gb::data
