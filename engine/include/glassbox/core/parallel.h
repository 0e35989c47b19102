// glassbox/core/parallel.h — the engine's threads: one pool shared by every CPU kernel, and OpenBLAS's count.
//
// glassbox owns the threads: set_num_threads(n) sizes our pool and tells OpenBLAS to use the same n, so a GEMM
// and an elementwise kernel never run 2n threads on n cores. The default is the number of hardware threads
// (GLASSBOX_NUM_THREADS or OMP_NUM_THREADS override it at start-up).
#pragma once

#include <cstdint>
#include <functional>

namespace gb {

void set_num_threads(int n);
int get_num_threads();

namespace detail {
// While it lives, parallel_for on this thread runs inline (the DataLoader's worker threads hold one: they already
// run in parallel with training and must not take the pool from the training thread's kernels).
class SerialRegion {
 public:
  SerialRegion();
  ~SerialRegion();
  SerialRegion(const SerialRegion&) = delete;
  SerialRegion& operator=(const SerialRegion&) = delete;

 private:
  bool prev_;
};
void parallel_run(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);
bool in_parallel_region();
// Sends the pool's idle workers to sleep now instead of after their spin: call before handing the cores to another
// library's threads (a multi-threaded OpenBLAS GEMM, a oneDNN primitive). The next parallel_for wakes them.
void park_workers();
}  // namespace detail

// Calls f(chunk_begin, chunk_end) over [begin, end) split across the pool; inline when the range is under
// `grain` items, when one thread is configured, or when already inside a parallel region.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  if (end <= begin) return;
  if (end - begin <= grain || get_num_threads() == 1 || detail::in_parallel_region()) {
    f(begin, end);
    return;
  }
  detail::parallel_run(begin, end, grain, std::function<void(int64_t, int64_t)>(f));
}

}  // namespace gb
