// tests/instrument/live_memory_test.cpp — instrument/live_memory.{h,cpp}: what is live after the events applied,
// and the resume, live and live_segment rows that restart a replay there.
#include "instrument/live_memory.h"

#include <doctest/doctest.h>

#include "traces/query/memory_replay.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"
#include "traces/writer.h"

using namespace gb::trace;
using gb::trace::detail::LiveMemory;

namespace {
MemoryEventRecord ev(MemAction a, int device, std::int64_t addr, std::int64_t size, MemCategory c,
                     std::int64_t allocated, std::int64_t reserved) {
  MemoryEventRecord r;
  r.action = a;
  r.device = device;
  r.addr = addr;
  r.size = size;
  r.category = c;
  r.allocated = allocated;
  r.reserved = reserved;
  r.module_id = 7;
  return r;
}
}  // namespace

TEST_CASE("blocks and segments live after alloc, retag and free, per device; the rows of a resume") {
  LiveMemory live;
  live.apply(ev(MemAction::segment_alloc, kCpu, 0x1000, 1 << 20, MemCategory::unknown, 0, 1 << 20));
  live.apply(ev(MemAction::alloc, kCpu, 0x1000, 512, MemCategory::temporary, 512, 1 << 20));
  live.apply(ev(MemAction::retag, kCpu, 0x1000, 512, MemCategory::parameter, 512, 1 << 20));
  live.apply(ev(MemAction::alloc, kCpu, 0x1200, 1024, MemCategory::activation, 1536, 1 << 20));
  live.apply(ev(MemAction::free, kCpu, 0x1200, 1024, MemCategory::unknown, 512, 1 << 20));
  live.apply(ev(MemAction::alloc, 0, 0x9000, 2048, MemCategory::gradient, 2048, 2 << 20));
  CHECK(live.blocks() == 2);

  TempDir tmp;
  std::string path = tmp.file("live.db");
  {
    Writer w(path);
    Id next = 100;
    CHECK(live.write_resume(w, 5000, next) == 3 + 2);  // per device: resume, its segments, its blocks
    CHECK(next == 105);
    w.close();
  }
  Reader r(path);
  auto rows = r.all<MemoryEventRecord>();
  REQUIRE(rows.size() == 5);
  for (const auto& row : rows) {
    CHECK(row.t_ns == 5000);
    CHECK(row.allocated == (row.device == kCpu ? 512 : 2048));
  }
  CHECK(rows[0].action == MemAction::resume);  // devices in order: the cpu (-1), then cuda:0
  CHECK(rows[0].device == kCpu);
  CHECK(rows[1].action == MemAction::live_segment);
  CHECK(rows[2].action == MemAction::live);
  CHECK(rows[2].module_id == 7);  // the block keeps where it was allocated
  CHECK(rows[3].action == MemAction::resume);
  CHECK(rows[3].device == 0);
  gb::query::MemoryReplay<> replay;
  replay.apply(MemAction::alloc, 0x5555, 64, MemCategory::input);  // stale: forgotten at the resume
  for (const auto& row : rows)
    if (row.device == kCpu) replay.apply(row.action, row.addr, row.size, row.category);
  CHECK(replay.live().size() == 1);
  CHECK(replay.live().at(0x1000).category == MemCategory::parameter);  // the retag's category
  CHECK(replay.by_category()[static_cast<std::size_t>(MemCategory::parameter)] == 512);
}
