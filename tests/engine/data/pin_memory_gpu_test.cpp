// tests/engine/data/pin_memory_gpu_test.cpp — GPU tier: pin_memory's page-locked buffers are cached, and a buffer an
// asynchronous copy still reads is not handed out again before that copy completes (engine/data/pinned_cache.h).
#include <cstring>

#include "glassbox/data/pin_memory.h"
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("pinned buffers are reused, and never under a running copy") {
  REQUIRE(gb::data::pinned_memory_is_page_locked());
  gb::data::empty_pinned_cache();
  const auto before = gb::data::pinned_memory_stats();  // counts since the process started: other tests pinned too
  const int64_t n = 1 << 24;  // 64 MiB of float: the copy takes milliseconds
  gb::Tensor x = gb::full({n}, 3.0f);
  gb::Tensor five = gb::full({n}, 5.0f);  // made before: the host is quick between the free and the next pin_memory
  gb::Tensor busy = gb::ones({4096, 4096}, kGpu);
  gb::Tensor dst;
  void* first = nullptr;
  {
    gb::Tensor pinned = gb::data::pin_memory(x);
    first = pinned.data_ptr();
    for (int i = 0; i < 20; ++i) (void)gb::matmul(busy, busy);  // tens of ms: the copy below queues behind them
    dst = pinned.to(kGpu, gb::kFloat, /*non_blocking=*/true);
  }  // freed while the copy may still be reading it
  // the next buffer of that size must not be the one the queued copy reads
  gb::Tensor other = gb::data::pin_memory(five);
  CHECK(other.data_ptr() != first);
  gb::cuda::synchronize();
  CHECK(dst.cpu().eq(3.0f).all().item<bool>());  // the copy read the 3s, not the 5s written into a reused buffer
  other = gb::Tensor();
  // once the copy completed, the buffer is the cache's again
  gb::Tensor again = gb::data::pin_memory(x);
  const auto s = gb::data::pinned_memory_stats();
  CHECK(s.backend_allocations - before.backend_allocations == 2);  // two buffers made, the third pin_memory reused one
  CHECK(s.cache_hits - before.cache_hits == 1);
  CHECK(s.allocated_bytes - before.allocated_bytes == 64 << 20);  // `again` alone is alive
}

TEST_CASE("a device-to-host copy into a pinned tensor keeps its buffer until it completes") {
  gb::Tensor src = gb::full({1 << 20}, 7.0f, gb::TensorOptions().device(kGpu));
  gb::Tensor host = gb::data::pin_memory(gb::zeros({1 << 20}));
  host.copy_(src, /*non_blocking=*/true);
  gb::cuda::synchronize();
  CHECK(host.eq(7.0f).all().item<bool>());
}
