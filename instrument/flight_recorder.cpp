// instrument/flight_recorder.cpp — the rings of the last steps' detail.
#include "instrument/flight_recorder.h"

#include <algorithm>
#include <new>

namespace gb::trace::detail {

void SlotRing::allocate(std::size_t slots) {
  // operator new, not new[]: the slots are written before they are read, and pages never written stay untouched
  slots_.reset(static_cast<RecordedRow*>(::operator new[](std::max<std::size_t>(slots, 1) * sizeof(RecordedRow))));
  capacity_ = std::max<std::size_t>(slots, 1);
  tail_ = count_ = 0;
  evicted_through_ = -1;
}

void SlotRing::evict_one(const std::function<void(const RecordedRow&)>& evicted) {
  const RecordedRow& r = at(tail_);
  evicted_through_ = std::max(evicted_through_, r.step);
  if (evicted) evicted(r);
  tail_ = (tail_ + 1) % capacity_;
  --count_;
}

void SlotRing::push(const RecordedRow& row, std::int64_t min_step,
                    const std::function<void(const RecordedRow&)>& evicted) {
  if (!capacity_) return;
  while (count_ > 0 && at(tail_).step < min_step) evict_one(evicted);
  if (count_ == capacity_) evict_one(evicted);
  std::memcpy(static_cast<void*>(&at((tail_ + count_) % capacity_)), &row, sizeof(RecordedRow));
  ++count_;
}

void SlotRing::evict_all(const std::function<void(const RecordedRow&)>& evicted) {
  while (count_ > 0) evict_one(evicted);
}

void FlightRecorder::configure(std::int64_t steps, std::int64_t bytes) {
  steps_ = std::max<std::int64_t>(steps, 0);
  newest_ = -1;
  if (!steps_) {
    rows_ = SlotRing();
    memory_ = SlotRing();
    return;
  }
  const std::size_t slots = static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)) / sizeof(RecordedRow);
  rows_.allocate(std::max<std::size_t>(slots / 2, 64));
  memory_.allocate(std::max<std::size_t>(slots / 2, 64));
}

void FlightRecorder::push_row(const RecordedRow& row, const std::function<void(const RecordedRow&)>& evicted) {
  if (!steps_) {
    if (evicted) evicted(row);
    return;
  }
  newest_ = std::max(newest_, row.step);
  rows_.push(row, newest_ - steps_ + 1, evicted);
}

void FlightRecorder::push_memory(const RecordedRow& row, const std::function<void(const RecordedRow&)>& evicted) {
  if (!steps_) {
    if (evicted) evicted(row);
    return;
  }
  newest_ = std::max(newest_, row.step);
  memory_.push(row, newest_ - steps_ + 1, evicted);
}

std::int64_t FlightRecorder::first_complete_step() const {
  return std::max({rows_.evicted_through(), memory_.evicted_through(), newest_ - steps_}) + 1;
}

}  // namespace gb::trace::detail
