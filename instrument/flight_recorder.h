// instrument/flight_recorder.h — internal: the last steps' detail, kept in memory while a long run's trace holds
// only its summary, and written when something goes wrong (docs/design/instrument.md, instrument/detail.h).
//
// Two rings of fixed-size slots, allocated once when the session starts (untouched pages cost nothing): one for
// rows (spans, instants, counters, op_details, collectives) in the order the collector reads them, one for memory
// events in time order. Each keeps the rows of the last `steps` steps, and at most `bytes` between them; the
// oldest rows are evicted first (a memory event evicted goes to on_evict_memory, so the collector can keep the
// live memory at the ring's start). A step is complete when none of its rows was evicted.
#pragma once

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <memory>
#include <new>
#include <type_traits>

#include "traces/records.h"

namespace gb::trace::detail {

// One row of detail, decoded (the records are trivially copyable).
struct RecordedRow {
  enum class Type : std::uint8_t { span, instant, counter, op_details, collective, memory };
  std::int64_t step = 0;
  Type type = Type::span;
  bool stepped = true;  // the event carried its step (false: outside any step, routed by the highest step seen)
  union {
    SpanRecord span;
    InstantRecord instant;
    CounterRecord counter;
    OpDetailsRecord op_details;
    CollectiveRecord collective;
    MemoryEventRecord memory;
  };
  RecordedRow() : span() {}
};
static_assert(std::is_trivially_copyable_v<SpanRecord> && std::is_trivially_copyable_v<MemoryEventRecord> &&
              std::is_trivially_copyable_v<CollectiveRecord>);

class SlotRing {
 public:
  SlotRing() = default;
  void allocate(std::size_t slots);
  std::size_t size() const { return count_; }
  std::size_t capacity() const { return capacity_; }
  // Keeps only rows of steps >= min_step, then appends (evicting the oldest when full). Each evicted row goes to
  // evicted(row) (a template, not std::function: this runs for every row between windows).
  template <class Evicted>
  void push(const RecordedRow& row, std::int64_t min_step, Evicted&& evicted) {
    if (!capacity_) return;
    while (count_ > 0 && at(tail_).step < min_step) evict_one(evicted);
    if (count_ == capacity_) evict_one(evicted);
    std::memcpy(static_cast<void*>(&at((tail_ + count_) % capacity_)), &row, sizeof(RecordedRow));
    ++count_;
  }
  template <class Evicted>
  void evict_all(Evicted&& evicted) {
    while (count_ > 0) evict_one(evicted);
  }
  void clear() {  // the rows were written: gone without counting
    evict_all([](const RecordedRow&) {});
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < count_; ++i) f(at((tail_ + i) % capacity_));
  }
  std::int64_t evicted_through() const { return evicted_through_; }  // the largest step a row was evicted of
  void forget_evictions() { evicted_through_ = -1; }

 private:
  RecordedRow& at(std::size_t i) const { return slots_.get()[i]; }
  template <class Evicted>
  void evict_one(Evicted& evicted) {
    const RecordedRow& r = at(tail_);
    evicted_through_ = std::max(evicted_through_, r.step);
    evicted(r);
    tail_ = (tail_ + 1) % capacity_;
    --count_;
  }

  struct RawDelete {
    void operator()(RecordedRow* p) const { ::operator delete[](p); }
  };
  std::unique_ptr<RecordedRow, RawDelete> slots_;
  std::size_t capacity_ = 0, tail_ = 0, count_ = 0;
  std::int64_t evicted_through_ = -1;
};

class FlightRecorder {
 public:
  // steps: the last this many steps; bytes: for both rings together (0 steps: off, nothing is kept).
  void configure(std::int64_t steps, std::int64_t bytes);
  bool on() const { return steps_ > 0; }
  std::int64_t steps() const { return steps_; }
  template <class Evicted>
  void push_row(const RecordedRow& row, Evicted&& evicted) {
    push_to(rows_, row, evicted);
  }
  template <class Evicted>
  void push_memory(const RecordedRow& row, Evicted&& evicted) {
    push_to(memory_, row, evicted);
  }
  SlotRing& rows() { return rows_; }
  SlotRing& memory() { return memory_; }
  // The first step whose rows the recorder holds whole (none evicted), given the newest step.
  std::int64_t first_complete_step() const;
  std::int64_t newest_step() const { return newest_; }

 private:
  template <class Evicted>
  void push_to(SlotRing& ring, const RecordedRow& row, Evicted& evicted) {
    if (!steps_) {  // off: nothing is kept
      evicted(row);
      return;
    }
    newest_ = std::max(newest_, row.step);
    ring.push(row, newest_ - steps_ + 1, evicted);
  }
  std::int64_t steps_ = 0, newest_ = -1;
  SlotRing rows_, memory_;
};

}  // namespace gb::trace::detail
