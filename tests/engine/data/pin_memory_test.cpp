// tests/engine/data/pin_memory_test.cpp — glassbox/data/pin_memory.h: pinned copies hold the values, are recognised,
// and their buffers come back from the cache (on this machine the host backend: aligned memory, no events).
#include <doctest/doctest.h>

#include "data_test_util.h"
#include "glassbox/data/pin_memory.h"

namespace pin_memory_test {

TEST_CASE("pin_memory copies the values into a pinned buffer that the next pin_memory reuses") {
  gb::data::empty_pinned_cache();
  const auto before = gb::data::pinned_memory_stats();
  gb::Tensor x = gb::arange(12, gb::kFloat).reshape({3, 4}).t();  // not contiguous
  gb::Tensor p = gb::data::pin_memory(x);
  CHECK(gb::data::is_pinned(p));
  CHECK_FALSE(gb::data::is_pinned(x));
  CHECK(p.is_contiguous());
  CHECK(gb::equal(p, x));
  CHECK(gb::data::pin_memory(p).data_ptr() == p.data_ptr());  // already pinned and contiguous: itself
  void* first = p.data_ptr();
  p = gb::Tensor();  // freed: back in the cache
  gb::Tensor q = gb::data::pin_memory(gb::ones({40}, gb::kFloat));  // 160 bytes: the same 512-byte class
  CHECK(q.data_ptr() == first);
  CHECK(gb::equal(q, gb::ones({40}, gb::kFloat)));
  const auto s = gb::data::pinned_memory_stats();
  CHECK(s.allocations - before.allocations == 2);
  CHECK(s.cache_hits - before.cache_hits == 1);
  CHECK(s.backend_allocations - before.backend_allocations == 1);
  CHECK(s.allocated_bytes == 512);
  q = gb::Tensor();
  gb::data::empty_pinned_cache();
  CHECK(gb::data::pinned_memory_stats().reserved_bytes == 0);
  CHECK_THROWS_WITH_AS(gb::data::pin_memory(gb::ones({2}, gb::TensorOptions().device(gb::kMeta))),
                       doctest::Contains("only CPU tensors can be pinned"), gb::Error);
}

}  // namespace pin_memory_test
