// tests/traces/query/diff_test.cpp — traces/query/diff.cpp: two synthetic runs with known differences, delta by delta.
#include "traces/query/diff.h"

#include <doctest/doctest.h>

#include <sstream>

#include "tools/synthetic_trace.h"
#include "traces/temp_dir.h"

using namespace gb::query;

namespace {
const OpDelta& op(const TraceDiff& d, const std::string& name) {
  for (const OpDelta& o : d.ops)
    if (o.name == name) return o;
  FAIL("no op " << name);
  throw;
}
}  // namespace

TEST_CASE("step time, op deltas (ops in one run only marked) and memory peaks of two known runs") {
  TempDir tmp;
  std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  synthetic::write(a);  // steps 10, 12, 14 ms; matmul 3000 ns; relu; memory x1
  synthetic::write(b, {.step_ns = {11'000'000, 13'000'000, 16'000'000},
                       .matmul_ns = 4000,
                       .with_relu = false,
                       .with_softmax = true,
                       .mem_scale = 2});
  TraceDiff d = diff_traces(TraceDb(a), TraceDb(b));

  CHECK(d.steps_a.mean == doctest::Approx(12e6));
  CHECK(d.steps_b.mean == doctest::Approx(40e6 / 3));
  CHECK(d.steps_a.median == doctest::Approx(12e6));
  CHECK(d.steps_b.median == doctest::Approx(13e6));

  REQUIRE(d.ops.size() == 5);
  const OpDelta& mm = op(d, "matmul");
  CHECK(mm.a->total_ns == 9'000);
  CHECK(mm.b->total_ns == 12'000);
  CHECK(mm.total_delta_ns() == 3'000);
  CHECK(mm.self_delta_ns() == 3'000);
  const OpDelta& linear = op(d, "linear");  // same total (5000 per call); its self shrinks as matmul grows
  CHECK(linear.total_delta_ns() == 0);
  CHECK(linear.self_delta_ns() == -3'000);
  CHECK_FALSE(op(d, "softmax").a.has_value());
  CHECK(op(d, "softmax").b->total_ns == 2'100);
  CHECK_FALSE(op(d, "relu").b.has_value());
  CHECK(op(d, "relu").total_delta_ns() == -1'500);
  // by |total delta|, ties by name
  std::vector<std::string> order;
  for (const OpDelta& o : d.ops) order.push_back(o.name);
  CHECK(order == std::vector<std::string>{"matmul", "softmax", "relu", "add", "linear"});

  REQUIRE(d.memory.size() == 2);
  CHECK(d.memory[1].device == 0);
  CHECK(d.memory[1].allocated_a == 8000);
  CHECK(d.memory[1].allocated_b == 16000);
  CHECK(d.memory[1].reserved_a == 2 << 20);
  CHECK(d.memory[1].reserved_b == 2 << 20);
}

TEST_CASE("the diff text: step rows with delta and ratio, op rows with markers, memory deltas") {
  TempDir tmp;
  std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  synthetic::write(a);
  synthetic::write(b, {.step_ns = {11'000'000, 13'000'000, 16'000'000},
                       .matmul_ns = 4000,
                       .with_relu = false,
                       .with_softmax = true,
                       .mem_scale = 2});
  std::ostringstream out;
  write_diff(diff_traces(TraceDb(a), TraceDb(b)), 0, out);
  std::string t = out.str();
  INFO(t);
  CHECK(t.find("  mean    12.000ms  13.333ms  +1.333ms  1.11x\n") != std::string::npos);
  CHECK(t.find("  median  12.000ms  13.000ms  +1.000ms  1.08x\n") != std::string::npos);
  CHECK(t.find("  matmul         3        3   9.000us  12.000us  9.000us  12.000us     +3.000us    +33.33%\n") !=
        std::string::npos);
  CHECK(t.find("  softmax        -        3         -   2.100us        -   2.100us     +2.100us  only in B\n") !=
        std::string::npos);
  CHECK(t.find("  relu           3        -   1.500us         -  1.500us         -     -1.500us  only in A\n") !=
        std::string::npos);
  CHECK(t.find("  cuda:0     7.81 KiB    15.62 KiB  +7.81 KiB    2.00 MiB    2.00 MiB   +0 B\n") != std::string::npos);
}

TEST_CASE("two empty traces: every section says there is nothing to compare") {
  TempDir tmp;
  std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  { gb::trace::Writer w(a); }
  { gb::trace::Writer w(b); }
  std::ostringstream out;
  write_diff(diff_traces(TraceDb(a), TraceDb(b)), 20, out);
  CHECK(out.str().find("step time: no steps in either trace\n") != std::string::npos);
  CHECK(out.str().find("ops: no spans of kind op in either trace\n") != std::string::npos);
  CHECK(out.str().find("memory: no allocator events in either trace\n") != std::string::npos);
}
