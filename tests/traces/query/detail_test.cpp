// tests/traces/query/detail_test.cpp — which steps have detail: detail_windows rows under meta `detail`, every step
// without it.
#include "traces/query/detail.h"

#include <doctest/doctest.h>

#include "traces/temp_dir.h"
#include "traces/writer.h"

using namespace gb::trace;
using gb::query::DetailWindows;
using gb::query::TraceDb;

namespace {
DetailWindows windows_of(const std::string& path, bool with_policy, std::vector<DetailWindowRecord> rows) {
  {
    Writer w(path);
    if (with_policy) w.set_meta("detail", "first=3,every=10,window=2,recorder=4,recorder_mb=8");
    for (auto& r : rows) w.add(r);
    w.close();
  }
  TraceDb db(path);
  return gb::query::detail_windows(db);
}
}  // namespace

TEST_CASE("a trace without meta detail has the detail of every step") {
  TempDir tmp;
  DetailWindows d = windows_of(tmp.file("old.db"), false, {{1, 0, 2, 0, 10, DetailReason::first}});
  CHECK(d.all());
  CHECK(d.has_detail(0));
  CHECK(d.has_detail(123456));
  CHECK(d.windows.empty());  // rows without the policy are not consulted
  CHECK(d.nearest(5).before == 4);
  CHECK(d.nearest(5).after == 6);
}

TEST_CASE("windows: membership, nearest steps with detail on both sides, steps counted once") {
  TempDir tmp;
  // written out of order (the recorder's window after the periodic one), sorted on reading
  DetailWindows d = windows_of(tmp.file("long.db"), true,
                               {{1, 0, 2, 0, 30, DetailReason::first},
                                {3, 25, 28, 250, 290, DetailReason::anomaly},
                                {2, 10, 11, 100, 120, DetailReason::periodic},
                                {4, 29, 30, 290, 310, DetailReason::end}});
  REQUIRE_FALSE(d.all());
  CHECK(d.policy == "first=3,every=10,window=2,recorder=4,recorder_mb=8");
  REQUIRE(d.windows.size() == 4);
  CHECK(d.windows[1].first_step == 10);
  for (std::int64_t s : {0, 1, 2, 10, 11, 25, 28, 29, 30}) CHECK(d.has_detail(s));
  for (std::int64_t s : {-1, 3, 9, 12, 24, 31, 1000}) CHECK_FALSE(d.has_detail(s));
  CHECK(d.window_of(26)->reason == DetailReason::anomaly);
  CHECK(d.window_of(5) == nullptr);
  auto n = d.nearest(5);
  CHECK(n.before == 2);
  CHECK(n.after == 10);
  n = d.nearest(0);
  CHECK_FALSE(n.before);
  CHECK(n.after == 1);
  n = d.nearest(26);  // inside a window: its neighbours
  CHECK(n.before == 25);
  CHECK(n.after == 27);
  n = d.nearest(500);
  CHECK(n.before == 30);
  CHECK_FALSE(n.after);
  CHECK(d.steps_with_detail() == 3 + 2 + 4 + 2);
}
