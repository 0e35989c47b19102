// engine/core/parallel.cpp — one persistent pool of worker threads shared by the CPU kernels.
//
// A job is split into at most num_threads chunks; the caller runs chunks too, so n threads means n-1 workers, which
// spin a moment after each job before they sleep (spin_time()).
// Only one job runs at a time: a second thread calling in while the pool is busy runs its job inline rather than
// queueing (no deadlocks, no oversubscription). OpenBLAS is told the same thread count.
#include "glassbox/core/parallel.h"

#include <atomic>
#include <chrono>
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

// A worker that finishes a chunk spins on the job counter for spin_time() before it sleeps on the condition variable: a
// training step's kernels come microseconds apart, and a futex wake-up costs tens of microseconds here (an add of
// 256K floats took 62 us on two threads, 41 on one, before workers spun). park_workers() cuts the spin short where
// another library's threads are about to need the cores (OpenBLAS, oneDNN's OpenMP team).
// GLASSBOX_SPIN_US sets it (0: sleep right away, as before workers spun).
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds t = [] {
    const char* v = std::getenv("GLASSBOX_SPIN_US");
    return std::chrono::microseconds(v && *v ? std::max(0, std::atoi(v)) : 50);
  }();
  return t;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { stop_workers(); }

  int size() const { return nthreads_; }

  void resize(int n) {
    GB_CHECK(n <= kMaxChunks, "set_num_threads: at most ", kMaxChunks, " threads, got ", n);
    std::lock_guard<std::mutex> job_lock(job_mutex_);
    stop_workers();
    nthreads_ = n;
    stop_.store(false);
    for (int i = 1; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  void park() { park_.store(true, std::memory_order_relaxed); }

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
    // No worker holds a chunk now (the last job ended when all of its chunks were done), so the job's fields are
    // ours to write; a worker reads them only after claiming a chunk of this generation (claim_'s release below).
    job_ = &f;
    begin_ = begin;
    end_ = end;
    chunk_ = (range + nchunks - 1) / nchunks;
    error_ = nullptr;
    const uint64_t g = (gen_.load(std::memory_order_relaxed) + 1) & kGenMask;
    remaining_.store(int(nchunks), std::memory_order_relaxed);
    claim_.store(pack(g, int(nchunks), 0), std::memory_order_release);
    park_.store(false, std::memory_order_relaxed);
    gen_.store(g, std::memory_order_seq_cst);
    // A worker that went to sleep before seeing g counted itself first (seq_cst on both sides: either it sees g, or
    // we see it asleep and wake it).
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lk(m_);
      cv_.notify_all();
    }
    work(g);
    // wait for the workers' chunks: spin briefly (they are usually done), then sleep
    for (int spin = 0; spin < 20000 && remaining_.load(std::memory_order_acquire) > 0; ++spin) cpu_relax();
    if (remaining_.load(std::memory_order_acquire) > 0) {
      std::unique_lock<std::mutex> lk(m_);
      done_cv_.wait(lk, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
    }
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // claim_: [generation: 40 bits][chunks: 12][next chunk: 12], claimed by compare-and-swap, so a worker late for
  // one job can never take a chunk of the next one.
  static constexpr int kMaxChunks = 4095;
  static constexpr uint64_t kGenMask = (uint64_t(1) << 40) - 1;
  static uint64_t pack(uint64_t gen, int chunks, int next) {
    return (gen << 24) | (uint64_t(chunks) << 12) | uint64_t(next);
  }

  void work(uint64_t g) {
    bool prev = t_in_parallel;
    t_in_parallel = true;
    for (;;) {
      uint64_t c = claim_.load(std::memory_order_acquire);
      int k;
      for (;;) {
        const int chunks = int((c >> 12) & 0xfff);
        k = int(c & 0xfff);
        if ((c >> 24) != g || k >= chunks) {
          t_in_parallel = prev;
          return;
        }
        if (claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) break;
      }
      int64_t b = begin_ + k * chunk_, e = std::min(end_, b + chunk_);
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
  }

  // The next generation after `seen` (or whatever it is when stopping): spinning for spin_time(), then asleep.
  uint64_t wait_for_job(uint64_t seen) {
    const auto start = std::chrono::steady_clock::now();
    const auto spin = spin_time();
    for (int i = 1;; ++i) {
      const uint64_t g = gen_.load(std::memory_order_acquire);
      if (g != seen || stop_.load(std::memory_order_relaxed)) return g;
      if (park_.load(std::memory_order_relaxed)) break;
      cpu_relax();
      if (i % 256 == 0 && std::chrono::steady_clock::now() - start > spin) break;
    }
    std::unique_lock<std::mutex> lk(m_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    cv_.wait(lk, [&] { return stop_.load() || gen_.load(std::memory_order_seq_cst) != seen; });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return gen_.load(std::memory_order_acquire);
  }

  void worker_loop() {
    uint64_t seen = gen_.load(std::memory_order_acquire);
    for (;;) {
      const uint64_t g = wait_for_job(seen);
      if (stop_.load()) return;
      seen = g;
      work(g);
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  int nthreads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex job_mutex_;  // one job at a time
  std::mutex m_;          // the sleepers' condition variables, error_
  std::condition_variable cv_, done_cv_;
  std::atomic<bool> stop_{false}, park_{false};
  std::atomic<uint64_t> gen_{0};
  std::atomic<uint64_t> claim_{0};
  std::atomic<int> remaining_{0};
  std::atomic<int> sleepers_{0};
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t begin_ = 0, end_ = 0, chunk_ = 1;
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
void park_workers() { pool().park(); }
bool in_parallel_region() { return t_in_parallel; }
SerialRegion::SerialRegion() : prev_(t_in_parallel) { t_in_parallel = true; }
SerialRegion::~SerialRegion() { t_in_parallel = prev_; }
}  // namespace detail

}  // namespace gb
