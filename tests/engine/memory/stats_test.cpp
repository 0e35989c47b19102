// tests/engine/memory/stats_test.cpp — Stat arithmetic, peak resets, the flat torch.cuda.memory_stats() names,
// and PyTorch's size formatting.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

TEST_CASE("a Stat keeps current, peak and the running totals") {
  mem::Stat s;
  s.increase(100);
  s.increase(50);
  s.decrease(120);
  CHECK(s.current == 30);
  CHECK(s.peak == 150);
  CHECK(s.allocated == 150);
  CHECK(s.freed == 120);
  s.reset_peak();
  CHECK(s.peak == 30);
}

TEST_CASE("the flat map uses PyTorch's key names, plus categories, capacity and context") {
  mem::CachingAllocator a(mem::make_meta_raw_allocator());
  gb::DataPtr p;
  {
    mem::CategoryGuard g(mem::Category::gradient);
    p = a.allocate(3 << 20);  // large pool: 3 MiB block in a 20 MiB segment
  }
  a.set_context_bytes(1000);
  auto m = a.stats().to_map();
  CHECK(m.at("allocated_bytes.all.current") == (3 << 20));
  CHECK(m.at("allocated_bytes.large_pool.current") == (3 << 20));
  CHECK(m.at("allocated_bytes.small_pool.current") == 0);
  CHECK(m.at("reserved_bytes.all.peak") == (20 << 20));
  CHECK(m.at("segment.large_pool.allocated") == 1);
  CHECK(m.at("allocation.all.current") == 1);
  CHECK(m.at("inactive_split_bytes.all.current") == (17 << 20));
  CHECK(m.at("requested_bytes.all.current") == (3 << 20));
  CHECK(m.at("allocated_bytes.by_category.gradient.current") == (3 << 20));
  CHECK(m.at("num_alloc_retries") == 0);
  CHECK(m.at("num_ooms") == 0);
  CHECK(m.at("context_bytes") == 1000);
  CHECK(m.count("oversize_allocations.peak") == 1);
  CHECK(m.size() == 9 * 3 * 4 + 2 * 4 + 8 * 4 + 5);  // 9 pool stats x 3 pools x 4, 2 oversize, 8 categories, 5 scalars
  p.deleter(p.ptr);
  a.reset_peak_stats();
  CHECK(a.stats().allocated_bytes[mem::kAll].peak == 0);
  CHECK(a.stats().reserved_bytes[mem::kAll].peak == (20 << 20));  // still reserved
}

TEST_CASE("sizes are written as PyTorch's format_size writes them") {
  CHECK(mem::format_size(512) == "512 bytes");
  CHECK(mem::format_size(1024) == "1024 bytes");
  CHECK(mem::format_size(1536) == "1.50 KiB");
  CHECK(mem::format_size(20 << 20) == "20.00 MiB");
  CHECK(mem::format_size(int64_t(8) << 30) == "8.00 GiB");
}
