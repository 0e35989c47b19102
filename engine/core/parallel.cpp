// engine/core/parallel.cpp — one persistent pool of worker threads shared by the CPU kernels.
//
// A job is split into at most num_threads chunks; the caller runs chunks too, so n threads means n-1 workers.
// Only one job runs at a time: a second thread calling in while the pool is busy runs its job inline rather than
// queueing (no deadlocks, no oversubscription). OpenBLAS is told the same thread count.
#include "glassbox/core/parallel.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <cblas.h>

#include "glassbox/core/error.h"

namespace gb {
namespace {

thread_local bool t_in_parallel = false;

int initial_threads() {
  for (const char* var : {"GLASSBOX_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (const char* v = std::getenv(var)) {
      int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? int(hw) : 1;
}

class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { stop_workers(); }

  int size() const { return nthreads_; }

  void resize(int n) {
    std::lock_guard<std::mutex> job_lock(job_mutex_);
    stop_workers();
    nthreads_ = n;
    stop_ = false;
    for (int i = 1; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  void run(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
    std::unique_lock<std::mutex> job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock() || nthreads_ <= 1) {  // busy with another thread's job: run inline
      f(begin, end);
      return;
    }
    int64_t range = end - begin;
    int64_t nchunks = std::min<int64_t>(nthreads_, (range + grain - 1) / std::max<int64_t>(grain, 1));
    if (nchunks <= 1) {
      f(begin, end);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = &f;
      begin_ = begin;
      end_ = end;
      chunk_ = (range + nchunks - 1) / nchunks;
      nchunks_ = int(nchunks);
      next_.store(0);
      remaining_.store(int(nchunks));
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    work();
    // wait for the workers' chunks: spin briefly (they are usually done), then sleep
    for (int spin = 0; spin < 20000 && remaining_.load(std::memory_order_acquire) > 0; ++spin) {
    }
    {
      std::unique_lock<std::mutex> lk(m_);
      done_cv_.wait(lk, [&] { return remaining_.load() == 0; });
      job_ = nullptr;
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work() {
    bool prev = t_in_parallel;
    t_in_parallel = true;
    for (;;) {
      int c = next_.fetch_add(1);
      if (c >= nchunks_) break;
      int64_t b = begin_ + c * chunk_, e = std::min(end_, b + chunk_);
      try {
        if (b < e) (*job_)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lk(m_);
        if (!error_) error_ = std::current_exception();
      }
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lk(m_);
        done_cv_.notify_all();
      }
    }
    t_in_parallel = prev;
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  int nthreads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex job_mutex_;  // one job at a time
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t begin_ = 0, end_ = 0, chunk_ = 1;
  int nchunks_ = 0;
  std::atomic<int> next_{0};
  std::atomic<int> remaining_{0};
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool* p = [] {
    int n = initial_threads();
    openblas_set_num_threads(n);
    return new Pool(n);  // leaked on purpose: workers must outlive static destructors of user code
  }();
  return *p;
}

}  // namespace

void set_num_threads(int n) {
  GB_CHECK(n > 0, "set_num_threads: expected a positive number of threads, got ", n);
  openblas_set_num_threads(n);
  if (pool().size() != n) pool().resize(n);
}

int get_num_threads() { return pool().size(); }

namespace detail {
void parallel_run(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  pool().run(begin, end, grain, f);
}
bool in_parallel_region() { return t_in_parallel; }
SerialRegion::SerialRegion() : prev_(t_in_parallel) { t_in_parallel = true; }
SerialRegion::~SerialRegion() { t_in_parallel = prev_; }
}  // namespace detail

}  // namespace gb
