// engine/memory/host_allocator.cpp — the cpu's raw allocator: 64-byte aligned host memory, no caching.
#include <unistd.h>

#include <cstdlib>

#include "glassbox/core/error.h"
#include "glassbox/memory/raw_allocator.h"

namespace gb::memory {
namespace {

class HostRawAllocator final : public RawAllocator {
 public:
  void* allocate(size_t nbytes) override { return std::aligned_alloc(64, (nbytes + 63) & ~size_t(63)); }
  void deallocate(void* ptr, size_t) override { std::free(ptr); }
  Device device() const override { return Device(kCPU); }
  int64_t total_bytes() const override {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? int64_t(pages) * page : 0;
  }
  int64_t context_bytes() const override { return context_; }
  void set_context_bytes(int64_t bytes) override { context_ = bytes; }

 private:
  int64_t context_ = 0;
};

}  // namespace

std::unique_ptr<RawAllocator> make_host_raw_allocator() { return std::make_unique<HostRawAllocator>(); }

}  // namespace gb::memory
