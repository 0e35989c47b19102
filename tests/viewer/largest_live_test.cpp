// tests/viewer/largest_live_test.cpp — TraceModel::largest_live answers from the replay loaded at open, and must
// equal the SQL replay (largest_live_sql) block for block at moments across the run, on CPU and CUDA traces.
#include <doctest/doctest.h>

#include "tools/synth.h"
#include "traces/temp_dir.h"
#include "viewer/trace_model.h"

using namespace gb::viewer;

TEST_CASE("largest live from memory equals the SQL replay") {
  for (bool cuda : {false, true}) {
    CAPTURE(cuda);
    TempDir tmp;
    const std::string path = tmp.file("run.db");
    gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2, .cuda = cuda, .oom = cuda});
    TraceModel m(path, {.background = false});
    REQUIRE(m.has_memory());
    std::int64_t nonempty = 0;
    for (int i = -1; i <= 40; ++i) {
      const std::int64_t t = m.begin_ns() + (m.end_ns() - m.begin_ns()) * i / 40;
      CAPTURE(t);
      const auto fast = m.largest_live(t, 25), slow = m.largest_live_sql(t, 25);
      REQUIRE(fast.size() == slow.size());
      nonempty += !fast.empty();
      for (std::size_t k = 0; k < fast.size(); ++k) {
        CHECK(fast[k].addr == slow[k].addr);
        CHECK(fast[k].size == slow[k].size);
        CHECK(fast[k].t_alloc_ns == slow[k].t_alloc_ns);
        CHECK(fast[k].category == slow[k].category);
        CHECK(fast[k].op == slow[k].op);
        CHECK(fast[k].module == slow[k].module);
      }
    }
    CHECK(nonempty > 30);  // most moments have live blocks: the comparison is not of empty lists
    CHECK(m.largest_live(m.begin_ns() - 1, 5).empty());
  }
}
