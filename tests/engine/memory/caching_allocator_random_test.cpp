// tests/engine/memory/caching_allocator_random_test.cpp — 100k random allocs and frees (1 B to 50 MiB, three
// streams, a capacity that forces retries and OOMs, occasional empty_cache and re-tags) on the meta allocator, with
// every invariant checked after every step; the same sequence runs in lockstep on a cpu allocator, whose stats
// must be equal at every step and whose snapshot must be equal (but for addresses) every 100 steps.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <random>
#include <vector>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;

namespace {

struct Live {
  gb::DataPtr ptr;
  int64_t requested = 0;
  int64_t stream = 0;
};

bool same_stat(const mem::Stat& a, const mem::Stat& b) {
  return a.current == b.current && a.peak == b.peak && a.allocated == b.allocated && a.freed == b.freed;
}
bool same_array(const mem::StatArray& a, const mem::StatArray& b) {
  for (size_t i = 0; i < 3; ++i)
    if (!same_stat(a[i], b[i])) return false;
  return true;
}
bool same_stats(const mem::MemoryStats& a, const mem::MemoryStats& b) {
  for (auto m : {&mem::MemoryStats::allocation, &mem::MemoryStats::segment, &mem::MemoryStats::active,
                 &mem::MemoryStats::inactive_split, &mem::MemoryStats::allocated_bytes, &mem::MemoryStats::reserved_bytes,
                 &mem::MemoryStats::active_bytes, &mem::MemoryStats::inactive_split_bytes, &mem::MemoryStats::requested_bytes})
    if (!same_array(a.*m, b.*m)) return false;
  for (size_t c = 0; c < size_t(mem::kNumCategories); ++c)
    if (!same_stat(a.allocated_bytes_by_category[c], b.allocated_bytes_by_category[c])) return false;
  return same_stat(a.oversize_allocations, b.oversize_allocations) && same_stat(a.oversize_segments, b.oversize_segments) &&
         a.num_alloc_retries == b.num_alloc_retries && a.num_ooms == b.num_ooms;
}

// Equal layouts: the same segments (ids, sizes, streams, pools) tiled by the same blocks (offsets, sizes, states,
// requested sizes, categories); addresses are free to differ.
bool same_layout(const mem::Snapshot& a, const mem::Snapshot& b) {
  if (a.segments.size() != b.segments.size()) return false;
  for (size_t i = 0; i < a.segments.size(); ++i) {
    const auto &s = a.segments[i], &t = b.segments[i];
    if (s.id != t.id || s.total_size != t.total_size || s.stream != t.stream || s.is_small != t.is_small ||
        s.allocated_size != t.allocated_size || s.requested_size != t.requested_size || s.blocks.size() != t.blocks.size())
      return false;
    for (size_t j = 0; j < s.blocks.size(); ++j) {
      const auto &x = s.blocks[j], &y = t.blocks[j];
      if (x.offset != y.offset || x.size != y.size || x.state != y.state || x.requested_size != y.requested_size ||
          x.category != y.category)
        return false;
    }
  }
  return true;
}

// Every invariant of the allocator, from its snapshot, its stats and the blocks the test holds.
// Returns false (after reporting the first broken one) when an invariant does not hold.
bool check_invariants(const mem::CachingAllocator& a, const std::vector<Live>& live, int64_t step) {
  const mem::Snapshot snap = a.snapshot();
  const mem::MemoryStats st = a.stats();
  const int64_t ms = st.max_split_size ? st.max_split_size : INT64_MAX;
  mem::StatArray allocated{}, reserved{}, requested{}, count{}, segments{}, split_bytes{}, split_count{};
  int64_t by_cat_sum = 0, oversize_allocs = 0, oversize_segs = 0;
  std::vector<std::pair<uint64_t, int64_t>> extents;
  std::vector<std::pair<uint64_t, int64_t>> active;  // (address, requested)
  bool ok = true;
  auto fail = [&](const char* what) {
    if (ok) FAIL_CHECK("step " << step << ": " << std::string(what));
    ok = false;
  };
  for (const auto& s : snap.segments) {
    const size_t pool = s.is_small ? mem::kSmallPool : mem::kLargePool;
    if (s.is_small ? s.total_size != mem::kSmallBuffer : s.total_size < mem::kMinLargeAlloc) fail("segment size vs pool");
    extents.emplace_back(s.address, s.total_size);
    int64_t expect_offset = 0;
    bool prev_free = false;
    for (const auto& b : s.blocks) {
      if (b.offset != expect_offset) fail("blocks do not tile their segment");
      if (b.address != s.address + uint64_t(b.offset)) fail("block address != segment address + offset");
      if (b.size <= 0 || b.size % mem::kMinBlockSize != 0) fail("block size not a positive multiple of 512");
      // Large-pool blocks hold requests > 1 MiB, and remainders are split off only when > 1 MiB: merges only grow.
      if (!s.is_small && b.size <= mem::kSmallSize) fail("a large-pool block of 1 MiB or less");
      expect_offset += b.size;
      const bool is_free = b.state == mem::BlockState::inactive;
      if (is_free && prev_free) fail("two free neighbours were not merged");
      prev_free = is_free;
      if (is_free) {
        if (s.blocks.size() > 1) {
          split_bytes[0].current += b.size, split_bytes[pool].current += b.size;
          split_count[0].current += 1, split_count[pool].current += 1;
        }
        if (b.requested_size != 0 || b.category != mem::Category::unknown) fail("a free block keeps a request or category");
        continue;
      }
      const int64_t rounded = mem::round_size(b.requested_size);
      if ((rounded <= mem::kSmallSize) != s.is_small) fail("block in the wrong pool");
      if (b.size < rounded) fail("block smaller than its request");
      const int64_t waste = b.size - rounded;
      if (s.is_small && waste != 0) fail("small-pool block not split exactly");
      if (!s.is_small && waste > mem::kSmallSize && !(rounded >= ms && waste < mem::kLargeBuffer))
        fail("large-pool block kept a remainder worth splitting");
      for (size_t t : {size_t(0), pool}) {
        allocated[t].current += b.size;
        requested[t].current += b.requested_size;
        count[t].current += 1;
      }
      if (b.size >= ms) ++oversize_allocs;
      active.emplace_back(b.address, b.requested_size);
    }
    if (expect_offset != s.total_size) fail("blocks do not add up to the segment");
    for (size_t t : {size_t(0), pool}) {
      reserved[t].current += s.total_size;
      segments[t].current += 1;
    }
    if (s.total_size >= ms) ++oversize_segs;
  }
  std::sort(extents.begin(), extents.end());
  for (size_t i = 1; i < extents.size(); ++i)
    if (extents[i - 1].first + uint64_t(extents[i - 1].second) > extents[i].first) fail("segments overlap");
  for (size_t t = 0; t < 3; ++t) {
    if (st.allocated_bytes[t].current != allocated[t].current) fail("allocated_bytes != sum of active blocks");
    if (st.active_bytes[t].current != allocated[t].current) fail("active_bytes != sum of active blocks");
    if (st.requested_bytes[t].current != requested[t].current) fail("requested_bytes != sum of requests");
    if (st.allocation[t].current != count[t].current || st.active[t].current != count[t].current) fail("allocation count");
    if (st.reserved_bytes[t].current != reserved[t].current) fail("reserved_bytes != sum of segments");
    if (st.segment[t].current != segments[t].current) fail("segment count");
    if (st.inactive_split_bytes[t].current != split_bytes[t].current) fail("inactive_split_bytes");
    if (st.inactive_split[t].current != split_count[t].current) fail("inactive_split count");
    for (auto m : {&mem::MemoryStats::allocation, &mem::MemoryStats::segment, &mem::MemoryStats::active,
                   &mem::MemoryStats::inactive_split, &mem::MemoryStats::allocated_bytes, &mem::MemoryStats::reserved_bytes,
                   &mem::MemoryStats::active_bytes, &mem::MemoryStats::inactive_split_bytes, &mem::MemoryStats::requested_bytes}) {
      const mem::Stat& s = (st.*m)[t];
      if (s.peak < s.current || s.current < 0 || s.allocated - s.freed != s.current) fail("peak < current or totals off");
    }
  }
  for (const auto& c : st.allocated_bytes_by_category) {
    by_cat_sum += c.current;
    if (c.peak < c.current) fail("category peak < current");
  }
  if (by_cat_sum != allocated[0].current) fail("bytes by category do not add up to allocated");
  if (st.oversize_allocations.current != oversize_allocs) fail("oversize allocations");
  if (st.oversize_segments.current != oversize_segs) fail("oversize segments");
  if (st.capacity_bytes && st.context_bytes + reserved[0].current > st.capacity_bytes) fail("over capacity");
  // The blocks the allocator calls active are exactly the ones the test holds.
  std::vector<std::pair<uint64_t, int64_t>> held;
  for (const Live& l : live) held.emplace_back(reinterpret_cast<uint64_t>(l.ptr.ptr), l.requested);
  std::sort(held.begin(), held.end());
  std::sort(active.begin(), active.end());
  if (held != active) fail("active blocks differ from the blocks held");
  return ok;
}

int64_t random_size(std::mt19937_64& rng) {
  // Log-uniform from 1 B to 50 MiB, with extra weight on the pool edges (1 MiB, 10 MiB) and tiny sizes.
  std::uniform_int_distribution<int> pick(0, 9);
  int k = pick(rng);
  if (k == 0) return std::uniform_int_distribution<int64_t>(1, 2048)(rng);
  if (k == 1) return mem::kSmallSize + std::uniform_int_distribution<int64_t>(-1024, 1024)(rng);
  if (k == 2) return mem::kMinLargeAlloc + std::uniform_int_distribution<int64_t>(-1024, 1024)(rng);
  double lg = std::uniform_real_distribution<double>(0.0, std::log2(50.0 * (1 << 20)))(rng);
  return std::max<int64_t>(1, int64_t(std::exp2(lg)));
}

void run_sequence(uint64_t seed, int steps, const mem::AllocatorConfig& conf) {
  mem::CachingAllocator meta(mem::make_meta_raw_allocator(), conf);
  mem::CachingAllocator cpu(mem::make_host_raw_allocator(), conf);
  std::vector<Live> live_meta, live_cpu;
  std::mt19937_64 rng(seed);
  int64_t ooms = 0, allocs = 0, frees = 0;
  for (int step = 0; step < steps; ++step) {
    const int action = std::uniform_int_distribution<int>(0, 999)(rng);
    const bool grow = live_meta.size() < 8 || (live_meta.size() < 200 && action < 520);
    if (action == 999) {
      meta.empty_cache();
      cpu.empty_cache();
    } else if (action == 998) {
      meta.reset_peak_stats();
      cpu.reset_peak_stats();
    } else if (action >= 990 && !live_meta.empty()) {
      size_t i = std::uniform_int_distribution<size_t>(0, live_meta.size() - 1)(rng);
      auto c = mem::Category(std::uniform_int_distribution<int>(0, mem::kNumCategories - 1)(rng));
      CHECK(meta.set_category(live_meta[i].ptr.ptr, c));
      CHECK(cpu.set_category(live_cpu[i].ptr.ptr, c));
    } else if (grow) {
      const int64_t n = random_size(rng);
      const int64_t stream = std::uniform_int_distribution<int64_t>(0, 2)(rng);
      const auto c = mem::Category(std::uniform_int_distribution<int>(0, mem::kNumCategories - 1)(rng));
      mem::CategoryGuard guard(c);
      bool meta_oom = false, cpu_oom = false;
      try {
        live_meta.push_back({meta.allocate(n, stream), n, stream});
      } catch (const gb::OutOfMemoryError&) {
        meta_oom = true;
      }
      try {
        live_cpu.push_back({cpu.allocate(n, stream), n, stream});
      } catch (const gb::OutOfMemoryError&) {
        cpu_oom = true;
      }
      REQUIRE_MESSAGE(meta_oom == cpu_oom, "step " << step << ": meta and cpu disagree on an OOM");
      ooms += meta_oom;
      allocs += !meta_oom;
    } else {
      size_t i = std::uniform_int_distribution<size_t>(0, live_meta.size() - 1)(rng);
      live_meta[i].ptr.deleter(live_meta[i].ptr.ptr);
      live_cpu[i].ptr.deleter(live_cpu[i].ptr.ptr);
      live_meta[i] = std::move(live_meta.back());
      live_meta.pop_back();
      live_cpu[i] = std::move(live_cpu.back());
      live_cpu.pop_back();
      ++frees;
    }
    REQUIRE(check_invariants(meta, live_meta, step));
    REQUIRE_MESSAGE(same_stats(meta.stats(), cpu.stats()), "step " << step << ": meta and cpu stats differ");
    if (step % 100 == 0 || step == steps - 1) {
      REQUIRE(check_invariants(cpu, live_cpu, step));
      REQUIRE_MESSAGE(same_layout(meta.snapshot(), cpu.snapshot()), "step " << step << ": meta and cpu layouts differ");
    }
  }
  // The sequence exercised what it is meant to: many allocations, retries, OOMs, and both pools.
  const mem::MemoryStats st = meta.stats();
  CHECK(allocs > steps / 3);
  CHECK(frees > steps / 3);
  CHECK(ooms > 0);
  CHECK(st.num_ooms == ooms);
  CHECK(st.num_alloc_retries >= ooms);
  CHECK(st.allocation[mem::kSmallPool].allocated > 1000);
  CHECK(st.allocation[mem::kLargePool].allocated > 1000);
  MESSAGE("allocs " << allocs << ", frees " << frees << ", ooms " << ooms << ", retries " << st.num_alloc_retries
                    << ", peak reserved " << st.reserved_bytes[0].peak);
  for (size_t i = 0; i < live_meta.size(); ++i) {
    live_meta[i].ptr.deleter(live_meta[i].ptr.ptr);
    live_cpu[i].ptr.deleter(live_cpu[i].ptr.ptr);
  }
  CHECK(meta.stats().allocated_bytes[0].current == 0);
  meta.empty_cache();
  cpu.empty_cache();
  CHECK(meta.stats().reserved_bytes[0].current == 0);
  CHECK(cpu.stats().reserved_bytes[0].current == 0);
}

}  // namespace

TEST_CASE("100k random allocs and frees keep every invariant, and meta and cpu agree step by step") {
  mem::AllocatorConfig conf;
  conf.capacity = int64_t(1) << 30;  // 1 GiB: with up to 200 live blocks of up to 50 MiB, retries and OOMs happen
  run_sequence(20240601, 100000, conf);
}

TEST_CASE("the same with max_split_size_mb:32 (oversize blocks are neither split nor taken by small requests)") {
  mem::AllocatorConfig conf;
  conf.capacity = int64_t(1) << 30;
  conf.max_split_size = int64_t(32) << 20;
  conf.context = int64_t(300) << 20;
  run_sequence(7, 30000, conf);
}
