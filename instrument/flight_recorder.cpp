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

std::int64_t FlightRecorder::first_complete_step() const {
  return std::max({rows_.evicted_through(), memory_.evicted_through(), newest_ - steps_}) + 1;
}

}  // namespace gb::trace::detail
