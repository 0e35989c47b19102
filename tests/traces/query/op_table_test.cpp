// tests/traces/query/op_table_test.cpp — traces/query/op_table.cpp: the key_averages table of the synthetic trace, number by
// number, its sort orders, the CUDA columns and PyTorch's layout.
#include "traces/query/op_table.h"

#include <doctest/doctest.h>

#include "tools/synthetic_trace.h"
#include "traces/temp_dir.h"

using namespace gb::query;
using gb::trace::Id;
using gb::trace::OptId;
using gb::trace::SpanKind;
using gb::trace::SpanRecord;

namespace {

const OpStats& row(const OpTable& t, const std::string& name) {
  for (const OpStats& o : t.rows)
    if (o.name == name) return o;
  FAIL("no row " << name);
  throw;
}

std::vector<std::string> names(const std::vector<OpStats>& rows) {
  std::vector<std::string> n;
  for (const OpStats& o : rows) n.push_back(o.name);
  return n;
}

}  // namespace

TEST_CASE("the op table of a known trace: calls, self = total - direct children, averages") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  TraceDb db(path);
  OpTable t = op_table(db, SpanKind::op);
  REQUIRE(t.rows.size() == 4);
  CHECK_FALSE(t.has_cuda);
  CHECK(t.self_total_ns == 16'500);
  const OpStats& linear = row(t, "linear");
  CHECK(linear.calls == 3);
  CHECK(linear.total_ns == 15'000);
  CHECK(linear.self_ns == 3'000);  // 5000 - (3000 + 1000) per call
  CHECK(linear.avg_ns() == 5'000);
  CHECK(row(t, "matmul").self_ns == 9'000);
  CHECK(row(t, "matmul").total_ns == 9'000);
  CHECK(row(t, "add").total_ns == 3'000);
  CHECK(row(t, "relu").total_ns == 1'500);
  CHECK(row(t, "relu").avg_ns() == 500);

  OpTable dl = op_table(db, SpanKind::dataloader);
  CHECK(names(dl.rows) == std::vector<std::string>{"wait", "fetch", "collate"});
  CHECK(row(dl, "wait").total_ns == 3'000'000);
}

TEST_CASE("sort orders: descending by the key, ties by name; name ascending") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  OpTable t = op_table(TraceDb(path), SpanKind::op);
  sort_ops(t.rows, OpSort::self_cpu);
  CHECK(names(t.rows) == std::vector<std::string>{"matmul", "add", "linear", "relu"});  // add, linear tie at 3000
  sort_ops(t.rows, OpSort::cpu_total);
  CHECK(names(t.rows) == std::vector<std::string>{"linear", "matmul", "add", "relu"});
  sort_ops(t.rows, OpSort::avg);
  CHECK(names(t.rows) == std::vector<std::string>{"linear", "matmul", "add", "relu"});
  sort_ops(t.rows, OpSort::calls);
  CHECK(names(t.rows) == std::vector<std::string>{"add", "linear", "matmul", "relu"});  // all 3 calls
  sort_ops(t.rows, OpSort::name);
  CHECK(names(t.rows) == std::vector<std::string>{"add", "linear", "matmul", "relu"});
  std::swap(t.rows[0], t.rows[3]);
  sort_ops(t.rows, OpSort::name);
  CHECK(names(t.rows) == std::vector<std::string>{"add", "linear", "matmul", "relu"});
}

TEST_CASE("with kernels: Self CUDA from launch_span_id, CUDA total through nesting, shares of all kernel time") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path, {.with_cuda = true});
  OpTable t = op_table(TraceDb(path), SpanKind::op);
  CHECK(t.has_cuda);
  CHECK(t.cuda_total_ns == 7'500);
  CHECK(row(t, "matmul").self_cuda_ns == 6'000);
  CHECK(row(t, "matmul").cuda_total_ns == 6'000);
  CHECK(row(t, "add").self_cuda_ns == 1'500);
  CHECK(row(t, "linear").self_cuda_ns == 0);
  CHECK(row(t, "linear").cuda_total_ns == 7'500);  // its children launched both kernels
  CHECK(row(t, "linear").cuda_avg_ns() == 2'500);
  CHECK(row(t, "relu").cuda_total_ns == 0);
  sort_ops(t.rows, OpSort::self_cuda);
  CHECK(names(t.rows) == std::vector<std::string>{"matmul", "add", "linear", "relu"});

  std::string text = render_op_table(t, 0);
  CHECK(text.find("Self CUDA %") != std::string::npos);
  // CPU shares are of the traced CPU time (the three steps and the worker's spans: 36.0075 ms), CUDA shares of all
  // kernel time.
  CHECK(t.cpu_time_ns == 36'007'500);
  CHECK(text.find("    matmul         0.02%       9.000us         0.02%       9.000us       3.000us       6.000us"
                  "        80.00%       6.000us       3.000us             3") == std::string::npos);  // avg is 2us
  CHECK(text.find("    matmul         0.02%       9.000us         0.02%       9.000us       3.000us       6.000us"
                  "        80.00%       6.000us       2.000us             3  \n") != std::string::npos);
  CHECK(text.find("Self CUDA time total: 7.500us\n") != std::string::npos);
}

TEST_CASE("PyTorch's layout: right-aligned name column (longest + 4), 12-wide columns, totals at the end") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  OpTable t = op_table(TraceDb(path), SpanKind::op);
  sort_ops(t.rows, OpSort::cpu_total);
  std::string text = render_op_table(t, 0);
  std::string rule = std::string(10, '-') + "  ";  // "matmul" + 4
  for (int i = 0; i < 6; ++i) rule += std::string(12, '-') + "  ";
  CHECK(text ==
        rule + "\n" +
            "      Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n" +
            rule + "\n" +
            "    linear         0.01%       3.000us         0.04%      15.000us       5.000us             3  \n"
            "    matmul         0.02%       9.000us         0.02%       9.000us       3.000us             3  \n"
            "       add         0.01%       3.000us         0.01%       3.000us       1.000us             3  \n"
            "      relu         0.00%       1.500us         0.00%       1.500us       0.500us             3  \n" +
            rule + "\nSelf CPU time total: 16.500us\n" +
            "CPU shares are of the traced CPU time: 36.008ms (root spans of every thread)\n");
  CHECK(text.find("CUDA") == std::string::npos);
}

TEST_CASE("a trace of ops alone: shares are of the Self CPU time total, as in PyTorch, and add up to 100%") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  {
    gb::trace::Writer w(path);
    w.add(gb::trace::ThreadRecord{1, 1, "main", gb::trace::ThreadRole::main, std::nullopt});
    Id mm = w.intern("matmul"), add = w.intern("add");
    std::int64_t n = 0;
    auto op = [&](Id name, std::int64_t start, std::int64_t dur, OptId parent) {
      Id id = gb::trace::span_id(1, ++n);
      w.add(SpanRecord{.id = id, .kind = SpanKind::op, .name_id = name, .thread_id = 1, .start_ns = start,
                       .end_ns = start + dur, .parent_id = parent});
      return id;
    };
    Id outer = op(mm, 0, 6000, std::nullopt);  // matmul 6 us, with an add of 2 us inside: self 4 us
    op(add, 1000, 2000, outer);
    op(add, 7000, 5000, std::nullopt);         // a root add of 5 us
  }
  OpTable t = op_table(TraceDb(path), SpanKind::op);
  CHECK(t.self_total_ns == 11'000);
  CHECK(t.cpu_time_ns == 11'000);
  sort_ops(t.rows, OpSort::self_cpu);
  std::string text = render_op_table(t, 0);
  CHECK(text.find("       add        63.64%       7.000us        63.64%       7.000us       3.500us             2  \n") !=
        std::string::npos);
  CHECK(text.find("    matmul        36.36%       4.000us        54.55%       6.000us       6.000us             1  \n") !=
        std::string::npos);
  CHECK(text.find("CPU shares are of") == std::string::npos);
}

TEST_CASE("--limit cuts rows and says how many are left; long names are cut at 55 columns with ...") {
  OpTable t;
  t.rows = {OpStats{.name = std::string(60, 'x'), .calls = 1, .self_ns = 10, .total_ns = 10},
            OpStats{.name = "b", .calls = 1, .self_ns = 5, .total_ns = 5}};
  t.self_total_ns = 15;
  std::string text = render_op_table(t, 1);
  CHECK(text.find(std::string(52, 'x') + "...  ") != std::string::npos);
  CHECK(text.find(std::string(53, 'x')) == std::string::npos);
  CHECK(text.find("(1 more rows; --limit 0 shows all)") != std::string::npos);
  CHECK(text.find("  b  ") == std::string::npos);
}

TEST_CASE("sort and kind names parse from the command line's spelling") {
  CHECK(parse_op_sort("self_cuda") == OpSort::self_cuda);
  CHECK_FALSE(parse_op_sort("fastest").has_value());
  CHECK(parse_span_kind("backward_node") == SpanKind::backward_node);
  CHECK(parse_span_kind("cuda_api") == SpanKind::cuda_api);
  CHECK_FALSE(parse_span_kind("kernel").has_value());
  CHECK(parse_span_kind("collective") == SpanKind::collective);
  CHECK(span_kind_names().size() == 13);
}
