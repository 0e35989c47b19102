// tests/tools/report_test.cpp — tools/report.cpp: every section of `glassbox report`, with data and without; a long
// run's run summary (long_run.h), and what it says when the trace does not know.
#include "tools/report.h"

#include <doctest/doctest.h>

#include <sstream>

#include "long_run.h"
#include "rank_traces.h"
#include "synthetic_trace.h"
#include "tools/check.h"
#include "tools/merge.h"
#include "traces/error.h"
#include "traces/query/run_summary.h"
#include "traces/temp_dir.h"
#include "tools_test_util.h"

using namespace gb::tools;
using namespace gb::query;
using toolstest::has;
using toolstest::report;

TEST_CASE("the report of the synthetic trace: story, metadata, step stats, op table, memory, data-loader, anomalies") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  std::string r = report(path);
  CHECK(has(r, "  command           ./train_mlp --steps 3\n"));
  CHECK(has(r, "  device_name       Synthetic GPU\n"));
  CHECK(r.starts_with("story: 1 alarm of 1 kind\n  ended: closed cleanly\n"));  // tools/story.h; story_test.cpp
  CHECK(has(r, "    loss_spike: 1 warning, step 2, largest loss 9.5\n"));
  CHECK(has(r, "  closed_cleanly    yes\n  stopped_by        (not recorded)\n"));
  CHECK(has(r, "  dropped_events    0\n"));
  CHECK(has(r, "  glassbox_version  "));
  CHECK(has(r, "steps: 3 (from the steps table)\n"));
  CHECK(has(r, "  count      mean    median       p90       min       max      std\n"));
  CHECK(has(r, "      3  12.000ms  12.000ms  13.600ms  10.000ms  14.000ms  1.633ms\n"));
  CHECK(has(r, "ops: spans of kind op, sorted by self_cpu\n"));
  CHECK(has(r, "    matmul         0.02%       9.000us         0.02%       9.000us       3.000us             3  \n"));
  CHECK(has(r, "Self CPU time total: 16.500us\n"));
  CHECK(r.find("Self CUDA") == std::string::npos);  // no kernels, no CUDA columns
  CHECK(has(r, "  cuda:0  300.00 MiB       2.00 MiB        7.81 KiB                  1.99 MiB\n"));
  CHECK(has(r, "    cuda:0  activation        6.84 KiB\n"));
  CHECK(has(r, "    cuda:0  parameter           1000 B\n"));
  CHECK(has(r, "waiting for data took 8.33% of step time (3.000ms of 36.000ms)\n"));
  CHECK(has(r, "  not data-bound: the training loop waited 8% of its step time for batches\n"));
  CHECK(has(r, "  fetch     6.000us\n"));
  CHECK(has(r, "anomalies: 1\n"));
  CHECK(has(r, "  22.000ms     2  loss_spike  warning   loss 9.5 is 4.1x its running mean\n"));
  // sections come in the documented order
  CHECK(r.find("story: ") < r.find("run: "));
  CHECK(r.find("run: ") < r.find("steps: "));
  CHECK(r.find("steps: ") < r.find("ops: "));
  CHECK(r.find("ops: ") < r.find("memory: "));
  CHECK(r.find("memory: ") < r.find("data-loader: "));
  CHECK(r.find("data-loader: ") < r.find("anomalies: "));
}

TEST_CASE("--kind, --sort and --limit shape the op table; CUDA columns only with kernels") {
  TempDir tmp;
  std::string cuda = tmp.file("c.db");
  synthetic::write(cuda, {.with_cuda = true});
  std::string r = report(cuda, {.sort = OpSort::self_cuda, .limit = 2});
  CHECK(has(r, "sorted by self_cuda"));
  CHECK(has(r, "Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls"));
  CHECK(has(r, "Self CUDA time total: 7.500us\n"));
  CHECK(has(r, "(2 more rows; --limit 0 shows all)"));
  CHECK(r.find("    matmul  ") < r.find("       add  "));
  CHECK(r.find("      relu  ") == std::string::npos);

  std::string dl = report(cuda, {.kind = gb::trace::SpanKind::dataloader});
  CHECK(has(dl, "ops: spans of kind dataloader"));
  CHECK(has(dl, "      wait  "));
  std::string none = report(cuda, {.kind = gb::trace::SpanKind::optimizer});
  CHECK(has(none, "ops: no spans of kind optimizer in this trace\n"));
}

TEST_CASE("an empty trace: every section says in one line that it has no data") {
  TempDir tmp;
  std::string path = tmp.file("empty.db");
  { gb::trace::Writer w(path); }
  std::string r = report(path);
  CHECK(r.starts_with("healthy: closed cleanly, no anomalies, no out-of-memory\n\nrun: "));
  CHECK(has(r, "  device_name       (not recorded)\n"));
  CHECK(has(r, "steps: no steps in this trace (no steps rows, no step spans)\n"));
  CHECK(has(r, "ops: no spans of kind op in this trace\n"));
  CHECK(has(r, "memory: no allocator events in this trace\n"));
  CHECK(has(r, "data-loader: no dataloader spans in this trace\n"));
  CHECK(has(r, "anomalies: none\n"));
}

TEST_CASE("a trace that was not closed cleanly and dropped events says so") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db,
               "DELETE FROM meta WHERE key = 'closed_cleanly'; UPDATE meta SET value = '42' WHERE key = "
               "'dropped_events'",
               nullptr, nullptr, nullptr);
  sqlite3_close(db);
  std::string r = report(path);
  CHECK(r.starts_with("story: killed or crashed (the trace was not closed); 1 alarm of 1 kind; 42 events dropped\n"));
  CHECK(has(r, "  closed_cleanly    no: the writer did not finish"));
  CHECK(has(r, "  dropped_events    42 (rings were full"));
}

TEST_CASE("the report of a data-parallel job: one rank's trace says how to merge; the merged one compares ranks") {
  TempDir tmp;
  const std::string r0 = tmp.file("run.rank0.db"), r1 = tmp.file("run.rank1.db"), merged = tmp.file("run.db");
  rank_traces::write_rank(r0, 0);
  rank_traces::write_rank(r1, 1);
  CHECK(has(report(r0), "ranks: this is rank 0 of 2; to compare the ranks, merge their traces: glassbox merge"));

  merge_traces({r0, r1}, merged);
  const std::string r = report(merged);
  CHECK(has(r,
            "ranks: 2, merged on one clock; rank 1 aligned by clock_sync start and end, within \xc2\xb1"
            "0.000us; the "
            "program's 1 barrier overlap on every rank (ends within "));
  CHECK(has(r,
            "  straggler: rank 1: it arrived last at 4 of 4 collectives; the others waited a median 3.000ms for it "
            "each time (25.00% of a step), 12.000ms in all\n"));
  CHECK(has(r, "all-reduce during backward"));
  // on the merged clock the first non-finite gradient was rank 1's (in rank 0's own clock it would look first)
  CHECK(has(r,
            "started in the backward pass at node (not recorded: the graph of this step was not stored) "
            "(module fc1), step 1, on rank 1\n"));

  rank_traces::Job healthy;
  healthy.straggler = -1;
  rank_traces::write_rank(r0, 0, healthy);
  rank_traces::write_rank(r1, 1, healthy);
  merge_traces({r0, r1}, merged);
  const std::string h = report(merged);
  CHECK(has(h,
            "  no straggler: over 4 collectives the ranks arrived last in turn, or kept the others waiting "
            "briefly\n"));
  CHECK(h.find("straggler: rank") == std::string::npos);
}

TEST_CASE("a long run's report: the run summary over every step after the story, and the detail sections' scope") {
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  long_run::write(path);
  const std::string r = report(path);
  CHECK(has(r, "\nrun summary: 60 steps (0-59), every one summarised; detail policy "
               "first=5,every=20,window=2,recorder=3,recorder_mb=8\n"));
  CHECK(has(r, "  step time   mean 10.000ms, median 10.000ms, p90 10.000ms, min 10.000ms, max 10.000ms, std 0.000us\n"));
  CHECK(has(r, "  phases      data 10.00%, forward 30.00%, backward 40.00%, optimizer 20.00% of 600.000ms (every "
               "step)\n"));
  CHECK(has(r, "  throughput  3200 samples/s\n"));
  CHECK(has(r, "  loss        first 4 (step 0), last 0.06667 (step 59), min 0.06667 (step 59), median of the last 6 "
               "steps 0.06957\n"));
  CHECK(has(r, "  grad norm   median 3, max 50 (step 13)\n"));
  CHECK(has(r, "    device  allocated peak  at step  reserved peak  at step\n"));
  CHECK(has(r, "    cuda:0        1.55 KiB       59       8.00 KiB        0\n"));
  CHECK(has(r, "    cuda:0  activation   590 B\n"));
  CHECK(has(r, "  detail      12 of 60 steps have detail, in 4 windows\n"
               "    first: steps 0-4\n"
               "    periodic: 2 windows of 2 steps every 20\n"
               "    end: steps 57-59\n"
               "    123456 events of steps without detail were read and not written; the flight recorder was written "
               "1 time\n"));
  CHECK(has(r, "  shed        nothing shed: every step's summary and every window's detail arrived\n"));
  CHECK(has(r, "detail: the sections below (ops, memory, data-loader) cover only the 12 of 60 steps with detail; the "
               "run summary above covers every step\n"));
  CHECK(has(r, "    matmul ") );  // the op table of the 12 steps with detail
  CHECK(r.find("story: ") < r.find("run summary: "));
  CHECK(r.find("run summary: ") < r.find("run: "));
  CHECK(r.find("steps: ") < r.find("detail: the sections"));
  CHECK(r.find("detail: the sections") < r.find("ops: "));
}

TEST_CASE("a long run's summary says what it does not know, and what was shed by kind") {
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  {
    long_run::Run run(path, {.steps = 4, .windows = {{0, 3, gb::trace::DetailReason::full}}, .anomalies = {},
                             .with_tokens = true});
    for (std::int64_t s = 0; s < 4; ++s) run.step(s);
    run.writer().set_meta("detail", "full");
    run.writer().set_meta("dropped_events", "7");
    run.writer().set_meta("shed_events.span", "7");
    run.finish();
  }
  toolstest::run_sql(path,
                     "UPDATE steps SET data_ns = NULL, samples = NULL, grad_norm = NULL WHERE step > 0; "
                     "UPDATE steps SET grad_norm = NULL, loss = NULL; DELETE FROM step_memory;");
  const std::string r = report(path);
  CHECK(has(r, "  phases      data 10.00%, forward 30.00%, backward 40.00%, optimizer 20.00% of 10.000ms (1 of 4 "
               "steps timed)\n"));
  CHECK(has(r, "  throughput  51200 tokens/s; 3200 samples/s (over the 1 of 4 steps that say them)\n"));
  CHECK(has(r, "  loss        unknown: no step has a loss\n"));
  CHECK(has(r, "  grad norm   unknown: no step has a grad_norm\n"));
  CHECK(has(r, "  memory      unknown: no step_memory rows\n"));
  CHECK(has(r, "  detail      4 of 4 steps have detail, in 1 window\n    full: steps 0-3\n"));
  CHECK(has(r, "  shed        7 detail events (by kind: span 7); every step's summary arrived\n"));
  CHECK(has(r, "detail: every step has its detail (1 window): the sections below cover the whole run\n"));
}

TEST_CASE("a trace without meta detail (version 4 and older) has no run summary and no detail line") {
  TempDir tmp;
  const std::string path = tmp.file("old.db");
  synthetic::write(path);
  const std::string r = report(path);
  CHECK(r.find("run summary") == std::string::npos);
  CHECK(r.find("detail:") == std::string::npos);
  CHECK(has(r, "steps: 3 (from the steps table)\n"));
}

TEST_CASE("a long run's trace with damaged values: report, check and the run summary finish, never crash") {
  // what fuzz/trace_fuzz.cpp does at random, here on purpose: NULLs, text, negative and extreme numbers in the
  // summary columns, step_memory, detail_windows, the detail meta keys and the memory events of the windows
  const std::vector<std::string> damages = {
      "UPDATE steps SET data_ns = NULL, forward_ns = -1, backward_ns = 9223372036854775807, optimizer_ns = 'x'",
      "UPDATE steps SET samples = 9223372036854775807, tokens = -9223372036854775808, grad_norm = 1e308",
      "UPDATE steps SET start_ns = -9223372036854775808, end_ns = 9223372036854775807 WHERE step % 2 = 0",
      "UPDATE steps SET step = -step - 1 WHERE step > 30; UPDATE steps SET loss = 'nan?', grad_norm = -1e308",
      "UPDATE step_memory SET device = 9223372036854775807, allocated_peak = -9223372036854775808, "
      "reserved_peak = 'big', activation_peak = 9223372036854775807",
      "UPDATE detail_windows SET first_step = -9223372036854775808, last_step = 9223372036854775807 WHERE id = 1",
      "UPDATE detail_windows SET first_step = 9223372036854775807, last_step = 9223372036854775807, reason = -1",
      "UPDATE detail_windows SET start_ns = 9223372036854775807, end_ns = -9223372036854775808, reason = 99",
      "INSERT INTO detail_windows VALUES (-5, -9223372036854775808, -9223372036854775808, 0, 0, 7), "
      "(77, 9223372036854775806, 9223372036854775807, -1, 9223372036854775807, 3)",
      "UPDATE meta SET value = '' WHERE key = 'detail'",
      "UPDATE meta SET value = 'first=-1,every=,window=x' WHERE key = 'detail'",
      "UPDATE meta SET value = '99999999999999999999999' WHERE key = 'dropped_events'; INSERT OR REPLACE INTO meta "
      "VALUES ('shed_events.', '-5'), ('shed_events.span', '9223372036854775807'), ('stopped_by', 'disk full'), "
      "('disk_full', 'step '), ('recorder_dumps', '-1'), ('events_outside_detail', 'lots')",
      "INSERT OR REPLACE INTO meta VALUES ('disk_full', 'step : '), ('stopped_by', 'disk full'), "
      "('dropped_events', '3')",
      "UPDATE memory_events SET t_ns = -9223372036854775808, action = 7 WHERE id % 3 = 0; "
      "UPDATE memory_events SET action = 8, addr = 9223372036854775807, device = -9223372036854775808 WHERE id % 3 = 1",
      "UPDATE spans SET step = 9223372036854775807 WHERE id % 2 = 0; UPDATE spans SET step = -9223372036854775808 "
      "WHERE id % 2 = 1",
      "DELETE FROM steps; DELETE FROM step_memory",
  };
  for (const std::string& damage : damages) {
    CAPTURE(damage);
    TempDir tmp;
    const std::string path = tmp.file("damaged.db");
    long_run::write(path);
    toolstest::run_sql(path, damage);
    try {
      const TraceDb db(path);
      const RunSummary s = run_summary(db);
      CHECK(s.steps >= 0);
      (void)describe_windows(s.detail);
      std::ostringstream out;
      write_report(db, ReportOptions{}, out);
      CHECK(has(out.str(), "run: "));
      const CheckResult c = check_trace(db);
      std::ostringstream check_out;
      write_check(c, path, check_out);
      CHECK_FALSE(check_out.str().empty());
    } catch (const gb::trace::Error& e) {  // a refusal is fine; it must say what is wrong
      MESSAGE(e.what());
      CHECK(std::string(e.what()).rfind("glassbox", 0) == 0);
    }
  }
}
