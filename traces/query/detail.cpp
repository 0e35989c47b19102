// traces/query/detail.cpp — the detail windows of a trace, and which steps they hold.
#include "traces/query/detail.h"

#include <algorithm>
#include <limits>

namespace gb::query {

using gb::trace::DetailWindowRecord;

DetailWindows detail_windows(const TraceDb& db) {
  DetailWindows d;
  if (auto p = db.reader().meta("detail")) {
    d.every_step = false;
    d.policy = *p;
  }
  if (d.every_step) return d;
  db.each("SELECT id, first_step, last_step, start_ns, end_ns, reason FROM detail_windows ORDER BY first_step, id",
          [&](const Row& r) {
            DetailWindowRecord w;
            w.id = r.i64(0);
            w.first_step = r.i64(1);
            w.last_step = r.i64(2);
            w.start_ns = r.i64(3);
            w.end_ns = r.i64(4);
            w.reason = static_cast<gb::trace::DetailReason>(r.i64(5));
            if (w.last_step >= w.first_step) d.windows.push_back(w);  // a damaged row holds no step
          });
  return d;
}

const DetailWindowRecord* DetailWindows::window_of(std::int64_t step) const {
  // the last window starting at or before step; windows do not overlap (glassbox check), so it is the only candidate
  auto it = std::upper_bound(windows.begin(), windows.end(), step,
                             [](std::int64_t s, const DetailWindowRecord& w) { return s < w.first_step; });
  if (it == windows.begin()) return nullptr;
  --it;
  return step <= it->last_step ? &*it : nullptr;
}

bool DetailWindows::has_detail(std::int64_t step) const { return every_step || window_of(step) != nullptr; }

DetailWindows::Nearest DetailWindows::nearest(std::int64_t step) const {
  Nearest n;
  if (every_step) {
    if (step > 0) n.before = step - 1;
    n.after = step + 1;
    return n;
  }
  for (const DetailWindowRecord& w : windows) {
    if (w.first_step < step) n.before = std::max(n.before.value_or(w.first_step), std::min(w.last_step, step - 1));
    if (w.last_step > step) {  // the first window reaching past step holds the first step with detail after it
      n.after = std::max(w.first_step, step + 1);
      break;
    }
  }
  return n;
}

std::int64_t DetailWindows::steps_with_detail() const {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t n = 0, covered_to = -1;  // windows may touch; count each step once
  for (const DetailWindowRecord& w : windows) {
    if (covered_to == kMax) break;  // every later step is counted already
    const std::int64_t from = std::max(w.first_step, covered_to + 1);
    // from >= 0, so last_step - from cannot overflow; the sum saturates (a damaged file's extreme steps)
    if (w.last_step >= from && (__builtin_add_overflow(n, w.last_step - from, &n) || __builtin_add_overflow(n, 1, &n)))
      return kMax;
    covered_to = std::max(covered_to, w.last_step);
  }
  return n;
}

}  // namespace gb::query
