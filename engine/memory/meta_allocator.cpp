// engine/memory/meta_allocator.cpp — the meta device's raw allocator: an address space without memory.
//
// Addresses start at 0x100000000000 (16 TiB, far from where Linux puts the heap and mmaps) and only grow, so
// no two segments ever share an address and a stray dereference faults instead of reading someone's data.
#include "glassbox/memory/raw_allocator.h"

namespace gb::memory {
namespace {

class MetaRawAllocator final : public RawAllocator {
 public:
  void* allocate(size_t nbytes) override {
    uintptr_t p = next_;
    next_ += (nbytes + 511) & ~size_t(511);
    return reinterpret_cast<void*>(p);
  }
  void deallocate(void*, size_t) override {}
  Device device() const override { return Device(kMeta); }
  int64_t total_bytes() const override { return 0; }
  int64_t context_bytes() const override { return context_; }
  void set_context_bytes(int64_t bytes) override { context_ = bytes; }

 private:
  uintptr_t next_ = uintptr_t(1) << 44;
  int64_t context_ = 0;
};

}  // namespace

std::unique_ptr<RawAllocator> make_meta_raw_allocator() { return std::make_unique<MetaRawAllocator>(); }

}  // namespace gb::memory
