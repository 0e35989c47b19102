// engine/memory/stats.cpp — MemoryStats' flat, torch.cuda.memory_stats()-named form, peak resets, and sizes
// written the way PyTorch's messages write them.
#include "glassbox/memory/stats.h"

#include <cstdio>

namespace gb::memory {
namespace {

constexpr const char* kStatTypeNames[3] = {"all", "small_pool", "large_pool"};

void put(std::map<std::string, int64_t>& m, const std::string& prefix, const Stat& s) {
  m[prefix + ".current"] = s.current;
  m[prefix + ".peak"] = s.peak;
  m[prefix + ".allocated"] = s.allocated;
  m[prefix + ".freed"] = s.freed;
}

void put(std::map<std::string, int64_t>& m, const std::string& name, const StatArray& a) {
  for (int t = 0; t < 3; ++t) put(m, name + "." + kStatTypeNames[t], a[size_t(t)]);
}

}  // namespace

void MemoryStats::reset_peak() {
  for (StatArray* a : {&allocation, &segment, &active, &inactive_split, &allocated_bytes, &reserved_bytes,
                       &active_bytes, &inactive_split_bytes, &requested_bytes})
    for (Stat& s : *a) s.reset_peak();
  oversize_allocations.reset_peak();
  oversize_segments.reset_peak();
  for (Stat& s : allocated_bytes_by_category) s.reset_peak();
}

std::map<std::string, int64_t> MemoryStats::to_map() const {
  std::map<std::string, int64_t> m;
  put(m, "allocation", allocation);
  put(m, "segment", segment);
  put(m, "active", active);
  put(m, "inactive_split", inactive_split);
  put(m, "allocated_bytes", allocated_bytes);
  put(m, "reserved_bytes", reserved_bytes);
  put(m, "active_bytes", active_bytes);
  put(m, "inactive_split_bytes", inactive_split_bytes);
  put(m, "requested_bytes", requested_bytes);
  put(m, "oversize_allocations", oversize_allocations);
  put(m, "oversize_segments", oversize_segments);
  for (int c = 0; c < kNumCategories; ++c)
    put(m, std::string("allocated_bytes.by_category.") + to_string(Category(c)), allocated_bytes_by_category[size_t(c)]);
  m["num_alloc_retries"] = num_alloc_retries;
  m["num_ooms"] = num_ooms;
  m["max_split_size"] = max_split_size;
  m["capacity_bytes"] = capacity_bytes;
  m["context_bytes"] = context_bytes;
  return m;
}

std::string format_size(int64_t bytes) {
  char buf[64];
  const double b = double(bytes);
  if (bytes <= 1024) std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else if (bytes <= (1LL << 20)) std::snprintf(buf, sizeof buf, "%.2f KiB", b / 1024.0);
  else if (bytes <= (1LL << 30)) std::snprintf(buf, sizeof buf, "%.2f MiB", b / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  return buf;
}

}  // namespace gb::memory
