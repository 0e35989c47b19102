// engine/memory/caching_allocator.cpp — malloc and free of the caching allocator: best fit in a pool, split,
// merge, new segments, the release-and-retry before an OOM (the rules are in glassbox/memory/caching_allocator.h).
// Stats are updated where blocks change state, so stats() is a copy; snapshot.cpp and oom_report.cpp read the
// same state.
#include "glassbox/memory/caching_allocator.h"

#include <algorithm>
#include <climits>

#include "glassbox/core/error.h"
#include "instrument/probe.h"
#include "memory/allocator_state.h"
#include "memory/context.h"

namespace gb::memory {

using detail::Block;
using detail::Pool;
using detail::Segment;

namespace {

// Updates the stat for all blocks and for the block's pool.
template <typename F>
void for_all_and(StatArray& s, bool small, F f) {
  f(s[kAll]);
  f(s[small ? kSmallPool : kLargePool]);
}

}  // namespace

// ---- pools ----

void CachingAllocator::Impl::pool_insert_locked(Pool& pool, Block* b, Pool::node_type node) {
  if (node) {
    node.value() = b;
    pool.insert(std::move(node));
  } else {
    pool.insert(b);
  }
  if (b->is_split()) {
    const bool small = b->segment->small;
    for_all_and(stats.inactive_split, small, [](Stat& s) { s.increase(1); });
    for_all_and(stats.inactive_split_bytes, small, [&](Stat& s) { s.increase(b->size); });
  }
}

// b must be unchanged since it was inserted (the pool's order and the split stats depend on it).
Pool::node_type CachingAllocator::Impl::pool_erase_locked(Pool& pool, Block* b) {
  Pool::node_type node = pool.extract(b);
  if (b->is_split()) {
    const bool small = b->segment->small;
    for_all_and(stats.inactive_split, small, [](Stat& s) { s.decrease(1); });
    for_all_and(stats.inactive_split_bytes, small, [&](Stat& s) { s.decrease(b->size); });
  }
  return node;
}

Block* CachingAllocator::Impl::find_free_locked(Pool& pool, int64_t size, int64_t stream) {
  Segment key_segment;
  key_segment.id = INT64_MIN;
  key_segment.stream = stream;
  Block key;
  key.segment = &key_segment;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->segment->stream != stream) return nullptr;
  Block* b = *it;
  const int64_t ms = max_split_or_inf();
  if (size < ms && b->size >= ms) return nullptr;                // small requests leave oversize blocks alone
  if (size >= ms && b->size >= size + kLargeBuffer) return nullptr;  // a large request takes no block far too big
  return b;
}

Block* CachingAllocator::Impl::new_block_locked() {
  if (spare_blocks.empty()) return new Block;
  Block* b = spare_blocks.back();
  spare_blocks.pop_back();
  *b = Block{};
  return b;
}

void CachingAllocator::Impl::recycle_block_locked(Block* b) {
  if (spare_blocks.size() < 1024) spare_blocks.push_back(b);
  else delete b;
}

CachingAllocator::Impl::~Impl() {
  for (Block* b : spare_blocks) delete b;
}

// ---- segments ----

Block* CachingAllocator::Impl::new_segment_locked(int64_t alloc_size, int64_t stream, bool small) {
  const int64_t context = raw->context_bytes();
  if (capacity && context + stats.reserved_bytes[kAll].current + alloc_size > capacity) return nullptr;
  void* p = raw->allocate(size_t(alloc_size));
  if (!p) return nullptr;
  auto seg = std::make_unique<Segment>();
  seg->id = next_segment_id++;
  seg->base = reinterpret_cast<uintptr_t>(p);
  seg->size = alloc_size;
  seg->stream = stream;
  seg->small = small;
  seg->oversize = alloc_size >= max_split_or_inf();
  Block* b = new_block_locked();
  b->segment = seg.get();
  b->size = alloc_size;
  seg->head = b;
  by_addr[seg->base] = seg.get();
  Segment* s = seg.get();
  segments.emplace(s->id, std::move(seg));
  for_all_and(stats.reserved_bytes, small, [&](Stat& st) { st.increase(alloc_size); });
  for_all_and(stats.segment, small, [](Stat& st) { st.increase(1); });
  if (s->oversize) stats.oversize_segments.increase(1);
  note_window_locked(Category::unknown);
  emit_locked(MemoryAction::segment_alloc, s->base, alloc_size, 0, s->id, stream, Category::unknown, 0, 0);
  return b;
}

// `whole` is a free block spanning its segment, already out of its pool.
void CachingAllocator::Impl::release_segment_locked(Block* whole) {
  Segment* s = whole->segment;
  const int64_t id = s->id, size = s->size, stream = s->stream;
  const uintptr_t base = s->base;
  const bool small = s->small;
  raw->deallocate(reinterpret_cast<void*>(base), size_t(size));
  for_all_and(stats.reserved_bytes, small, [&](Stat& st) { st.decrease(size); });
  for_all_and(stats.segment, small, [](Stat& st) { st.decrease(1); });
  if (s->oversize) stats.oversize_segments.decrease(1);
  by_addr.erase(base);
  segments.erase(id);
  recycle_block_locked(whole);
  emit_locked(MemoryAction::segment_free, base, size, 0, id, stream, Category::unknown, 0, 0);
}

int64_t CachingAllocator::Impl::release_cached_locked() {
  int64_t released = 0;
  for (Pool* pool : {&small_pool, &large_pool}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->is_split()) {
        ++it;
        continue;
      }
      it = pool->erase(it);
      released += b->size;
      release_segment_locked(b);
    }
  }
  return released;
}

// ---- malloc / free ----

Block* CachingAllocator::Impl::malloc(int64_t nbytes, int64_t stream) {
  const detail::ThreadContext ctx = detail::thread_context();
  const int64_t step = trace::current_step();  // one relaxed load: the block's age (memory/age.cpp)
  std::lock_guard<std::mutex> lock(mu);
  if (!pending_events.empty()) process_events_locked(false);
  const int64_t size = round_size(nbytes);
  const bool small = size <= kSmallSize;
  Pool& pool = small ? small_pool : large_pool;
  Block* b = find_free_locked(pool, size, stream);
  Pool::node_type node;
  if (b) {
    node = pool_erase_locked(pool, b);
  } else {
    const int64_t alloc_size = allocation_size(size);
    b = new_segment_locked(alloc_size, stream, small);
    if (!b) {
      process_events_locked(true);  // blocks waiting on other streams' work may free whole segments
      const int64_t released = release_cached_locked();
      emit_locked(MemoryAction::empty_cache, 0, released, 0, -1, stream, Category::unknown, 0, 0);
      ++stats.num_alloc_retries;
      b = new_segment_locked(alloc_size, stream, small);
    }
    if (!b) {
      ++stats.num_ooms;
      emit_locked(MemoryAction::oom, 0, alloc_size, nbytes, -1, stream, ctx.category, ctx.op, ctx.module);
      OomReport report = oom_report_locked(nbytes, alloc_size, step);
      if (const OomObserver* o = detail::g_oom_observer.load(std::memory_order_acquire)) (*o)(report);
      throw OutOfMemoryError(std::move(report));
    }
  }
  const int64_t rest = b->size - size;
  const bool split = small ? rest >= kMinBlockSize : (size < max_split_or_inf() && rest > kSmallSize);
  if (split) {
    Block* r = new_block_locked();
    r->segment = b->segment;
    r->offset = b->offset + size;
    r->size = rest;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    pool_insert_locked(pool, r, std::move(node));
  }
  b->allocated = true;
  b->requested = nbytes;
  b->category = ctx.category;
  b->op = ctx.op;
  b->module = ctx.module;
  b->step = step;
  b->oversize = b->size >= max_split_or_inf();
  for_all_and(stats.allocation, small, [](Stat& s) { s.increase(1); });
  for_all_and(stats.active, small, [](Stat& s) { s.increase(1); });
  for_all_and(stats.allocated_bytes, small, [&](Stat& s) { s.increase(b->size); });
  for_all_and(stats.active_bytes, small, [&](Stat& s) { s.increase(b->size); });
  for_all_and(stats.requested_bytes, small, [&](Stat& s) { s.increase(nbytes); });
  stats.allocated_bytes_by_category[int(b->category)].increase(b->size);
  if (b->oversize) stats.oversize_allocations.increase(1);
  note_window_locked(b->category);
  emit_locked(MemoryAction::alloc, b->addr(), b->size, nbytes, b->segment->id, stream, b->category, b->op, b->module);
  return b;
}

void CachingAllocator::Impl::free(Block* b) {
  std::lock_guard<std::mutex> lock(mu);
  const bool small = b->segment->small;
  for_all_and(stats.allocation, small, [](Stat& s) { s.decrease(1); });
  for_all_and(stats.active, small, [](Stat& s) { s.decrease(1); });
  for_all_and(stats.allocated_bytes, small, [&](Stat& s) { s.decrease(b->size); });
  for_all_and(stats.active_bytes, small, [&](Stat& s) { s.decrease(b->size); });
  for_all_and(stats.requested_bytes, small, [&](Stat& s) { s.decrease(b->requested); });
  stats.allocated_bytes_by_category[int(b->category)].decrease(b->size);
  if (b->oversize) stats.oversize_allocations.decrease(1);
  emit_locked(MemoryAction::free, b->addr(), b->size, b->requested, b->segment->id, b->segment->stream, b->category,
              b->op, b->module);
  b->allocated = false;
  b->requested = 0;
  b->category = Category::unknown;
  b->op = b->module = 0;  // (b->step stays: read only while allocated, so free pays no store for it)
  b->oversize = false;
  // Used on other streams: reusable once the work queued there so far has run (PyTorch's insert_events).
  for (int64_t s : b->stream_uses)
    if (void* ev = raw->record_event(s)) {
      pending_events.emplace_back(ev, b);
      ++b->event_count;
    }
  b->stream_uses.clear();
  if (b->event_count == 0) free_block_locked(b);
}

void CachingAllocator::Impl::process_events_locked(bool wait) {
  while (!pending_events.empty()) {
    auto [ev, b] = pending_events.front();
    if (wait)
      raw->wait_event(ev);
    else if (!raw->event_done(ev))
      break;
    raw->destroy_event(ev);
    pending_events.pop_front();
    if (--b->event_count == 0) free_block_locked(b);
  }
}

void CachingAllocator::Impl::free_block_locked(Block* b) {
  Pool& pool = pool_of(b->segment);
  Pool::node_type node;
  if (Block* p = b->prev; p && !p->allocated && p->event_count == 0) {
    node = pool_erase_locked(pool, p);
    b->offset = p->offset;
    b->size += p->size;
    b->prev = p->prev;
    if (b->prev) b->prev->next = b;
    else b->segment->head = b;
    recycle_block_locked(p);
  }
  if (Block* n = b->next; n && !n->allocated && n->event_count == 0) {
    Pool::node_type next_node = pool_erase_locked(pool, n);
    if (!node) node = std::move(next_node);
    b->size += n->size;
    b->next = n->next;
    if (b->next) b->next->prev = b;
    recycle_block_locked(n);
  }
  pool_insert_locked(pool, b, std::move(node));
}

Block* CachingAllocator::Impl::block_at_locked(uintptr_t addr) const {
  auto it = by_addr.upper_bound(addr);
  if (it == by_addr.begin()) return nullptr;
  const Segment* s = std::prev(it)->second;
  if (addr >= s->base + uintptr_t(s->size)) return nullptr;
  for (Block* b = s->head; b; b = b->next)
    if (addr < b->addr() + uintptr_t(b->size)) return b;
  return nullptr;
}

void CachingAllocator::Impl::emit_locked(MemoryAction a, uintptr_t addr, int64_t size, int64_t requested,
                                         int64_t segment_id, int64_t stream, Category c, uint32_t op,
                                         uint32_t module) const {
  const EventObserver* observer = detail::g_event_observer.load(std::memory_order_acquire);
  if (!observer) return;
  MemoryEvent e;
  e.action = a;
  e.device = device;
  e.addr = addr;
  e.size = size;
  e.requested = requested;
  e.segment_id = segment_id;
  e.stream = stream;
  e.category = c;
  e.op_id = op;
  e.module_id = module;
  e.allocated = stats.allocated_bytes[kAll].current;
  e.reserved = stats.reserved_bytes[kAll].current;
  (*observer)(e);
}

// ---- the public face ----

CachingAllocator::CachingAllocator(std::unique_ptr<RawAllocator> raw, const AllocatorConfig& config)
    : impl_(std::make_unique<Impl>()) {
  GB_CHECK(raw != nullptr, "CachingAllocator: needs a raw allocator (make_host_raw_allocator() and friends)");
  impl_->device = raw->device();
  impl_->raw = std::move(raw);
  set_max_split_size(config.max_split_size);
  set_capacity(config.capacity);
  if (config.context && !impl_->device.is_cuda()) set_context_bytes(*config.context);
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->process_events_locked(true);
  impl_->release_cached_locked();
  // Blocks still in use hold a pointer to the state in their deleters: keep it alive rather than crash later.
  if (impl_->stats.allocation[kAll].current > 0) (void)impl_.release();
}

DataPtr CachingAllocator::allocate(int64_t nbytes) { return allocate(nbytes, 0); }

DataPtr CachingAllocator::allocate(int64_t nbytes, int64_t stream) {
  GB_CHECK(nbytes >= 0, "CachingAllocator::allocate: cannot allocate a negative number of bytes (", nbytes, ")");
  if (nbytes == 0) return DataPtr{nullptr, {}};
  Impl* impl = impl_.get();
  Block* b = impl->malloc(nbytes, stream);
  return DataPtr{reinterpret_cast<void*>(b->addr()), [impl, b](void*) { impl->free(b); }};
}

Device CachingAllocator::device() const { return impl_->device; }
RawAllocator& CachingAllocator::raw() { return *impl_->raw; }

void CachingAllocator::record_stream(const void* ptr, int64_t stream) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Block* b = impl_->block_at_locked(reinterpret_cast<uintptr_t>(ptr));
  GB_CHECK(b && b->allocated, "record_stream: no live block on ", impl_->device.str(), " holds address ", ptr,
           " (record a tensor's stream while the tensor is alive)");
  if (stream == b->segment->stream) return;  // its own stream: ordered already
  if (std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
}

bool CachingAllocator::set_category(const void* ptr, Category c) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Block* b = impl_->block_at_locked(reinterpret_cast<uintptr_t>(ptr));
  if (!b || !b->allocated) return false;
  if (b->category == c) return true;
  impl_->stats.allocated_bytes_by_category[int(b->category)].decrease(b->size);
  impl_->stats.allocated_bytes_by_category[int(c)].increase(b->size);
  impl_->note_window_locked(c);
  b->category = c;
  impl_->emit_locked(MemoryAction::retag, b->addr(), b->size, b->requested, b->segment->id, b->segment->stream, c,
                     b->op, b->module);
  return true;
}

std::optional<Category> CachingAllocator::category_of(const void* ptr) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Block* b = impl_->block_at_locked(reinterpret_cast<uintptr_t>(ptr));
  if (!b || !b->allocated) return std::nullopt;
  return b->category;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->process_events_locked(true);
  int64_t released = impl_->release_cached_locked();
  impl_->emit_locked(MemoryAction::empty_cache, 0, released, 0, -1, 0, Category::unknown, 0, 0);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  MemoryStats s = impl_->stats;
  s.max_split_size = impl_->max_split;
  s.capacity_bytes = impl_->capacity;
  s.context_bytes = impl_->raw->context_bytes();
  return s;
}

WindowPeaks CachingAllocator::take_window_peaks() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  WindowPeaks w = impl_->window;
  const MemoryStats& s = impl_->stats;
  w.allocated = s.allocated_bytes[kAll].current;
  w.reserved = s.reserved_bytes[kAll].current;
  w.allocated_peak = std::max(w.allocated_peak, w.allocated);
  w.reserved_peak = std::max(w.reserved_peak, w.reserved);
  WindowPeaks next;
  next.allocated_peak = w.allocated;
  next.reserved_peak = w.reserved;
  for (size_t c = 0; c < size_t(kNumCategories); ++c) {
    w.category_peak[c] = std::max(w.category_peak[c], s.allocated_bytes_by_category[c].current);
    next.category_peak[c] = s.allocated_bytes_by_category[c].current;
  }
  impl_->window = next;
  return w;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stats.reset_peak();
}

Snapshot CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->snapshot_locked();
}

void CachingAllocator::set_capacity(int64_t bytes) {
  GB_CHECK(bytes >= 0, "set_capacity: the capacity of ", impl_->device.str(), " must be >= 0 bytes (0 = unlimited), got ",
           bytes);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->capacity = bytes;
}

int64_t CachingAllocator::capacity() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->capacity;
}

void CachingAllocator::set_context_bytes(int64_t bytes) {
  GB_CHECK(bytes >= 0, "set_context_bytes: the context of ", impl_->device.str(), " must be >= 0 bytes, got ", bytes);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->raw->set_context_bytes(bytes);
}

int64_t CachingAllocator::context_bytes() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->raw->context_bytes();
}

void CachingAllocator::set_max_split_size(int64_t bytes) {
  GB_CHECK(bytes == 0 || bytes > kLargeBuffer, "max_split_size must be 0 (no limit) or more than 20 MiB (",
           kLargeBuffer, " bytes: the large pool's segment size), got ", bytes,
           " bytes; in GLASSBOX_ALLOC_CONF write e.g. max_split_size_mb:128");
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->max_split = bytes;
}

int64_t CachingAllocator::max_split_size() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->max_split;
}

}  // namespace gb::memory
