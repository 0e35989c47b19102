// tests/tools/story_test.cpp — tools/story.cpp (over traces/query/alarms.cpp): the story `glassbox report` tells
// first, on runs that went wrong (bad_runs.h): out of memory (one step's peak, or a leak across steps foretold by
// a memory_growth alarm; a version 5 file without oom_reports' ages), killed, interrupted, NaN in the forward, NaN in
// the backward only, alarms grouped by kind, alarms the monitor linked into a chain (a root cause and its
// consequences, each with its evidence); and the one line of a healthy run. A long run's trace (long_run.h) that
// stopped on a full disk, or whose collector shed detail.
#include "tools/story.h"

#include <doctest/doctest.h>

#include <sstream>

#include "bad_runs.h"
#include "long_run.h"
#include "traces/query/alarms.h"
#include "tools/report.h"
#include "traces/temp_dir.h"
#include "tools_test_util.h"

using namespace gb::tools;
using namespace gb::query;
using bad_runs::kMs;
using toolstest::has;
using toolstest::report;
using toolstest::run_sql;

namespace {

std::string story(const std::string& path) {
  std::ostringstream out;
  write_story(TraceDb(path), out);
  return out.str();
}
}  // namespace

TEST_CASE("a run that died of an OOM: the story says so first, with the stored report, before the sections") {
  TempDir tmp;
  std::string path = tmp.file("oom.db");
  bad_runs::write_oom(path);
  std::string s = story(path);
  CHECK(s.starts_with("story: ran out of memory; failed with an uncaught exception\n"));
  CHECK(has(s,
            "  ended: stopped by uncaught exception: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 16.00 GiB ... (the program failed); the trace was closed cleanly\n"));
  CHECK(has(s,
            "  ran out of memory at 55.000ms (step 5) on cuda:0: tried to allocate 2.00 GiB; 1.00 GiB free of 16.00 "
            "GiB; 14.00 GiB allocated, 14.50 GiB reserved, largest free block 256.00 MiB\n"));
  // the stored report follows, every line indented by four spaces (empty lines stay empty)
  CHECK(has(s,
            "MiB\n    CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 16.00 GiB of which "
            "1.00 GiB is free.\n\n    Memory on cuda:0 when it failed:\n      allocated                      14.00 "
            "GiB\n"));
  CHECK(has(s, "    What to do:\n      - activations are 71% of allocated memory: activation checkpointing"));
  CHECK(has(s, "  the viewer shows it: glassbox view " + path + ", Memory panel, \"OOM report\" button\n"));
  CHECK(s.find("healthy") == std::string::npos);
  CHECK(s.ends_with("\n\n"));

  // In the report: the story comes before the run section, which no longer hides the failure.
  std::string r = report(path);
  CHECK(r.starts_with("story: ran out of memory"));
  CHECK(r.find("story: ") < r.find("run: "));
  CHECK(has(r,
            "  closed_cleanly    yes\n  stopped_by        uncaught exception: CUDA out of memory. Tried to allocate "
            "2.00 GiB. GPU 0 has a total capacity of 16.00 GiB What to do: ...\n"));
  CHECK(has(r, "anomalies: none\n"));

  RunEnd e = run_end(TraceDb(path));
  CHECK(e.closed_cleanly);
  REQUIRE(e.ooms.size() == 1);
  CHECK(e.ooms[0].step == 5);
  CHECK(e.ooms[0].device == 0);
  CHECK(e.ooms[0].requested == 2 * bad_runs::kGiB);
  REQUIRE(e.ooms[0].report.has_value());
  CHECK(e.ooms[0].report->report == bad_runs::kOomText);
}

TEST_CASE("an OOM after the last step, a second OOM, and an oom event without a stored report") {
  TempDir tmp;
  std::string path = tmp.file("oom2.db");
  {
    bad_runs::Run r(path, 3);  // steps end at 30 ms
    r.oom(1, 34 * kMs, 3 * bad_runs::kGiB);
    r.oom(2, 36 * kMs, 4 * bad_runs::kGiB);
    r.w.close();
  }
  std::string s = story(path);
  CHECK(s.starts_with("story: ran out of memory\n  ended: closed cleanly, stopped by exit\n"));
  CHECK(has(s, "  ran out of memory at 34.000ms (after step 2 ended) on cuda:0: tried to allocate 3.00 GiB; "));
  CHECK(has(s, "  and 1 more out-of-memory failure, the last at 36.000ms (after step 2 ended)\n"));

  std::string bare = tmp.file("bare.db");
  {
    bad_runs::Run r(bare, 3);
    r.w.add(gb::trace::MemoryEventRecord{1, 15 * kMs, gb::trace::MemAction::oom, -1, 0, 4096, 4096, std::nullopt, 0,
                                         gb::trace::MemCategory::input, std::nullopt, std::nullopt, 0, 0});
    r.w.close();
  }
  CHECK(has(story(bare),
            "  ran out of memory at 15.000ms (step 1) on cpu: tried to allocate 4.00 KiB (no report stored: the trace "
            "has the allocator's oom event only)\n"));
}

TEST_CASE("an OOM whose memory earlier steps kept is told as a leak, foretold by the memory_growth alarm") {
  TempDir tmp;
  std::string path = tmp.file("leak.db");
  bad_runs::write_leak_oom(path);
  std::string s = story(path);
  MESSAGE(s);
  CHECK(s.starts_with("story: ran out of memory at step 19: 14.00 GiB of 15.00 GiB live were allocated by earlier "
                      "steps and kept: a leak, not this step's peak; 2 alarms of 1 kind\n"));
  // the alarm on the OOM's device (cuda:0, step 7) is the one that foretold it, not the earlier one on the cpu
  CHECK(has(s,
            "  ran out of memory at 195.000ms (step 19) on cuda:0: tried to allocate 1.00 GiB; 512.00 MiB free of "
            "16.00 GiB; 15.00 GiB allocated, 15.50 GiB reserved, largest free block 256.00 MiB\n"
            "  the memory_growth alarm at step 7 foretold it: cuda:0 memory allocated at step end grew 6 steps in a "
            "row, by 768.00 MiB per step (4.50 GiB in all, now 5.50 GiB, step 7); live by the step that allocated "
            "it: this step 768.00 MiB, earlier steps 4.50 GiB\n"
            "    CUDA out of memory."));
  CHECK(has(s, "      - a leak across steps, not this step's peak: 14.00 GiB"));
  RunEnd e = run_end(TraceDb(path));
  REQUIRE(e.ooms.size() == 1);
  CHECK(e.ooms[0].leak);
  CHECK(e.ooms[0].growth_step == 7);

  // Without a memory_growth alarm of its device, the first one of any device; without any, no such line.
  run_sql(path, "DELETE FROM anomalies WHERE id = 2");
  CHECK(has(story(path), "  the memory_growth alarm at step 6 foretold it: cpu memory allocated"));
  run_sql(path, "DELETE FROM anomalies");
  s = story(path);
  CHECK(s.starts_with("story: ran out of memory at step 19: 14.00 GiB of 15.00 GiB live were allocated by earlier "
                      "steps and kept: a leak, not this step's peak\n"));
  CHECK(s.find("foretold") == std::string::npos);

  // Kept bytes of half the allocated or less: one step's peak, today's story.
  run_sql(path, "UPDATE oom_reports SET kept_bytes = 7.5 * 1024 * 1024 * 1024");
  CHECK(story(path).starts_with("story: ran out of memory\n"));
  CHECK_FALSE(run_end(TraceDb(path)).ooms[0].leak);
}

TEST_CASE("a version 5 trace (no oom_reports.step, kept_bytes) keeps today's OOM story, alarm or not") {
  TempDir tmp;
  std::string path = tmp.file("leak5.db");
  bad_runs::write_leak_oom(path);
  run_sql(path,
          "ALTER TABLE anomalies DROP COLUMN cause_id; ALTER TABLE anomalies DROP COLUMN cause; "
          "ALTER TABLE oom_reports DROP COLUMN step; ALTER TABLE oom_reports DROP COLUMN kept_bytes; "
          "PRAGMA user_version = 5");
  std::string s = story(path);
  CHECK(s.starts_with("story: ran out of memory; 2 alarms of 1 kind\n"));
  CHECK(s.find("foretold") == std::string::npos);
  CHECK(s.find("a leak, not") == std::string::npos);
}

TEST_CASE("a killed run (no closed_cleanly, read while its writer is still open) with dropped events") {
  TempDir tmp;
  std::string path = tmp.file("killed.db");
  bad_runs::Run r(path, 4);
  r.w.set_meta("dropped_events", "42");
  r.w.flush();  // what a SIGKILL leaves: the committed rows, a WAL file, no closed_cleanly, no indexes
  std::string s = story(path);
  CHECK(s ==
        "story: killed or crashed (the trace was not closed); 42 events dropped\n"
        "  ended: the trace was not closed: the program was killed or crashed; the last ~100 ms may be missing\n"
        "  dropped events: 42 (rings were full: raise the ring size, or use the blocking mode); the trace misses "
        "them\n\n");
  CHECK_FALSE(run_end(TraceDb(path)).closed_cleanly);
}

TEST_CASE("an interrupted run: stopped by a signal, closed cleanly") {
  TempDir tmp;
  std::string path = tmp.file("int.db");
  {
    bad_runs::Run r(path, 2);
    r.w.set_meta("stopped_by", "signal SIGINT");
  }
  CHECK(story(path) ==
        "story: interrupted by SIGINT\n"
        "  ended: stopped by signal SIGINT (interrupted); the trace was closed cleanly\n\n");
  CHECK(stop_kind(std::nullopt) == StopKind::normal);
  CHECK(stop_kind("session end") == StopKind::normal);
  CHECK(stop_kind("signal SIGTERM") == StopKind::signal);
  CHECK(stop_kind("std::terminate") == StopKind::failure);
  CHECK(stop_kind("uncaught exception") == StopKind::failure);
  CHECK(stop_kind("disk full") == StopKind::other);
}

TEST_CASE("a NaN run: the forward finding comes first, with its op, shapes, dtypes, module and step") {
  TempDir tmp;
  std::string path = tmp.file("nan.db");
  bad_runs::write_nan(path);
  std::string s = story(path);
  CHECK(s ==
        "story: non-finite values from step 12; 2 other alarms of 2 kinds\n"
        "  ended: closed cleanly, stopped by exit\n"
        "  first non-finite value: started in the forward pass at op log in module encoder.norm, step 12\n"
        "    op log: inputs [[64, 128]], dtypes float32, on cuda:0\n"
        "    error at 120.002ms: log produced 12 NaN from finite inputs (a negative input?)\n"
        "    then 2 more non-finite findings (below)\n"
        "  other alarms by kind (errors and warnings first):\n"
        "    nonfinite_loss: 1 error, step 12\n"
        "      first: the loss of step 12 is nan\n"
        "    nonfinite_backward: 1 error, step 12; on encoder.norm\n"
        "      first: SqrtBackward0 produced NaN gradients from finite ones\n\n");

  std::optional<FirstNonFinite> f = first_nonfinite(TraceDb(path));
  REQUIRE(f.has_value());
  CHECK(f->anomaly.id == 2);  // the earliest by time, not the smallest id
  CHECK(f->op->name == "log");
  CHECK(f->op->input_shapes == "[[64, 128]]");
  CHECK(f->later == 2);

  std::string r = report(path);
  CHECK(r.find("first non-finite value") < r.find("run: "));
  CHECK(has(r, "anomalies: 3\n"));  // the table of every anomaly is still there
}

TEST_CASE("a NaN only in the backward: the story names the node, its forward op and module, and the step") {
  TempDir tmp;
  std::string path = tmp.file("bwd.db");
  bad_runs::write_backward_nan(path);
  std::string s = story(path);
  CHECK(s ==
        "story: non-finite values from step 3\n"
        "  ended: closed cleanly, stopped by exit\n"
        "  first non-finite value: started in the backward pass at node SqrtBackward0 (forward op sqrt, module "
        "encoder.norm), step 3\n"
        "    forward op sqrt: inputs [[128]], dtypes float32, on cpu\n"
        "    error at 35.000ms: SqrtBackward0 produced inf gradients from finite ones\n\n");

  // The graph of that step was not stored: no node to name. A masked finding (info) says so.
  run_sql(path, "DELETE FROM graph_nodes; UPDATE anomalies SET node_id = NULL, severity = 0, step = 3");
  s = story(path);
  CHECK(has(s,
            "  first non-finite value: started in the backward pass at node (not recorded: the graph of this "
            "step was not stored), step 3\n"));
  CHECK(has(s,
            "    info at 35.000ms (a later node masked it: the gradients that reached the parameters stayed "
            "finite): SqrtBackward0 produced inf"));

  // A loss that went non-finite with no op or node before it.
  run_sql(path, "UPDATE anomalies SET kind = 7, severity = 2, message = 'loss is inf'");
  CHECK(has(story(path),
            "  first non-finite value: first seen in the loss, step 3 (no op or backward node reported "
            "one before it)\n    error at 35.000ms: loss is inf\n"));
}

TEST_CASE("alarms grouped by kind: counts, severities, first and last step, worst value, places; info last") {
  TempDir tmp;
  std::string path = tmp.file("alarms.db");
  bad_runs::write_alarms(path);
  std::string s = story(path);
  CHECK(s ==
        "story: 5 alarms of 3 kinds\n"
        "  ended: closed cleanly, stopped by exit\n"
        "  alarms by kind (errors and warnings first):\n"
        "    exploding_norm: 3 warnings, steps 4..9, largest norm 120; on fc1.weight, fc2.weight\n"
        "      first: gradient norm of fc1.weight is 50 (40x its running mean)\n"
        "    update_ratio: 1 warning, step 7, largest update/param ratio 0.52; on fc2.weight\n"
        "      first: learning rate too high for fc2: the update is 0.52 of fc2.weight\n"
        "    dead_relu: 1 info, step 3, most zeros 99.80%; on act1\n"
        "      first: act1: 99.8% of the ReLU's outputs were zero for 3 steps\n\n");

  std::vector<AlarmGroup> g = alarm_groups(TraceDb(path));
  REQUIRE(g.size() == 3);
  CHECK(g[0].kind == gb::trace::AnomalyKind::exploding_norm);
  CHECK(g[0].count == 3);
  CHECK(g[0].first_step == 4);
  CHECK(g[0].last_step == 9);
  CHECK(g[0].worst == 120.0);
  CHECK(g[2].severity == gb::trace::Severity::info);
  CHECK(alarm_groups(TraceDb(path), 2)[0].count == 2);  // skip one anomaly by id
}

TEST_CASE("more than five places, mixed severities, the smallest value of vanishing_norm, an unknown kind") {
  TempDir tmp;
  std::string path = tmp.file("many.db");
  {
    bad_runs::Run r(path);
    for (int p = 1; p <= 8; ++p)
      r.anomaly(p, p * kMs, p, gb::trace::AnomalyKind::vanishing_norm,
                p == 3 ? gb::trace::Severity::error : gb::trace::Severity::info, std::nullopt, std::nullopt,
                std::nullopt, p, 1e-6 * p, "tiny gradient " + std::to_string(p));
    r.anomaly(9, 90 * kMs, std::nullopt, static_cast<gb::trace::AnomalyKind>(14), gb::trace::Severity::warning,
              std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, "from the future");
  }
  std::string s = story(path);
  CHECK(has(s,
            "    vanishing_norm: 8 (1 error, 7 info), steps 1..8, smallest norm 1e-06; on fc1.weight, fc1.bias, "
            "fc2.weight, fc2.bias, encoder.norm.weight and 3 more\n      first: tiny gradient 1\n"));
  CHECK(has(s, "    unknown (kind 14, newer than this glassbox): 1 warning\n      first: from the future\n"));
  CHECK(s.find("vanishing_norm") < s.find("unknown"));  // error before warning
}

TEST_CASE("linked alarms: the root cause first, each consequence under its cause with its evidence; the rest by kind") {
  TempDir tmp;
  std::string path = tmp.file("chain.db");
  bad_runs::write_chain(path);
  std::string s = story(path);
  CHECK(s ==
        "story: update_ratio at step 0 led to 2 more alarms; 1 other alarm of 1 kind\n"
        "  ended: closed cleanly, stopped by exit\n"
        "  linked alarms (the root cause first, then what followed from it, each with the evidence):\n"
        "    root cause: update_ratio (warning) on fc2.weight, step 0: one update of fc2.weight was 13x its norm "
        "(group 1: lr 0.6, 6000x group 0's 1e-04)\n"
        "      -> dead_relu (warning) in act2, step 9: act2: 99.9% of the ReLU's outputs were zero for 5 steps\n"
        "         because: act2 follows fc2, whose update at step 0 was 13x its weight; dead 9 steps later\n"
        "        -> vanishing_norm (warning) on fc1.weight, step 92: gradient norm of fc1.weight fell to 2e-09, 1e-06 "
        "of its median\n"
        "           because: fc1 feeds act2, dead since step 9: no gradient flows back through its units\n"
        "  other alarms by kind (errors and warnings first):\n"
        "    loss_spike: 1 warning, step 40, largest loss 4.1\n"
        "      first: loss 4.1 at step 40 is 5x the median of the last 20 steps\n\n");
  std::string r = report(path);
  CHECK(r.starts_with(s));  // the story, then the sections; the table below still lists every anomaly
  CHECK(has(r, "anomalies: 4\n"));

  // The same rows in a file older than version 6 (no causes): every alarm by kind, as before.
  run_sql(path, "PRAGMA user_version = 5");
  s = story(path);
  CHECK(s.starts_with("story: 4 alarms of 4 kinds\n"));
  CHECK(s.find("linked alarms") == std::string::npos);
  CHECK(has(s, "    update_ratio: 1 warning, step 0, largest update/param ratio 13.2; on fc2.weight\n"));
  CHECK(has(s, "    vanishing_norm: 1 warning, step 92, smallest norm 2e-09; on fc1.weight\n"));
}

TEST_CASE("a NaN caused by an earlier alarm names its root cause; long chains and many chains are cut short") {
  TempDir tmp;
  std::string path = tmp.file("nan_chain.db");
  {
    bad_runs::Run r(path, 40);
    gb::trace::Id log = r.op("log", 120 * kMs, 12, 3, "[[64, 128]]", "float32", 0);
    r.anomaly(1, 5 * kMs, 0, gb::trace::AnomalyKind::update_ratio, gb::trace::Severity::warning, std::nullopt,
              std::nullopt, 5, 3, 40.0, "one update of fc2.weight was 40x its norm");
    r.anomaly(2, 120 * kMs + 2000, 12, gb::trace::AnomalyKind::nonfinite_forward, gb::trace::Severity::error, log,
              std::nullopt, 3, std::nullopt, std::nullopt, "log produced 12 NaN from finite inputs", 1,
              "fc2.weight turned non-finite after its update at step 0");
    // A chain of 14 consequences (ids 10..23, each caused by the one before, 9 by nothing), then 6 more chains.
    for (gb::trace::Id i = 9; i <= 23; ++i)
      r.anomaly(i, (200 + i) * kMs, 20, gb::trace::AnomalyKind::dead_relu, gb::trace::Severity::info, std::nullopt,
                std::nullopt, 6, std::nullopt, 0.99, "dead " + std::to_string(i),
                i > 9 ? gb::trace::OptId(i - 1) : std::nullopt, "after " + std::to_string(i - 1));
    for (gb::trace::Id i = 30; i < 42; i += 2) {
      r.anomaly(i, (300 + i) * kMs, 30, gb::trace::AnomalyKind::depth_gradient, gb::trace::Severity::warning,
                std::nullopt, std::nullopt, 4, 1, 1e-5, "fc1's gradient is 1e-05 of the last layer's");
      r.anomaly(i + 1, (301 + i) * kMs, 31, gb::trace::AnomalyKind::no_gradient, gb::trace::Severity::warning,
                std::nullopt, std::nullopt, 2, std::nullopt, std::nullopt, "encoder got no gradient", i, "");
    }
    r.w.close();
  }
  std::string s = story(path);
  CHECK(s.starts_with("story: non-finite values from step 12; update_ratio at step 0 led to 1 more alarm; 7 more "
                      "chains of linked alarms\n"));
  CHECK(has(s, "    error at 120.002ms: log produced 12 NaN from finite inputs\n"
               "    its root cause: update_ratio (warning) on fc2.weight, step 0 (linked alarms below)\n"));
  CHECK(has(s, "    root cause: update_ratio (warning) on fc2.weight, step 0: one update of fc2.weight was 40x its norm\n"
               "      -> nonfinite_forward (error) in encoder.norm, step 12: log produced 12 NaN from finite inputs\n"
               "         because: fc2.weight turned non-finite after its update at step 0\n"));
  // 12 links of the long chain told (the root and 11 consequences, each 2 spaces deeper), then how many more.
  CHECK(has(s, "    root cause: dead_relu (info) in act1, step 20: dead 9\n"
               "      -> dead_relu (info) in act1, step 20: dead 10\n"
               "         because: after 9\n"
               "        -> dead_relu (info) in act1, step 20: dead 11\n"));
  CHECK(has(s, "                    -> dead_relu (info) in act1, step 20: dead 17\n"));  // depth 8: 7 steps in
  CHECK(has(s, "                      -> dead_relu (info) in act1, step 20: dead 19\n"));  // depth 10: 8 at most
  CHECK(has(s, "                      -> dead_relu (info) in act1, step 20: dead 20\n"
               "                         because: after 19\n"
               "      and 3 more linked alarms (the anomalies table lists every one)\n"));
  CHECK(s.find("dead 21") == std::string::npos);
  // Kinds 12 and 13 by name; an empty evidence says so; 5 chains told, then how many more.
  CHECK(has(s, "    root cause: depth_gradient (warning) on fc1.weight, step 30: fc1's gradient is 1e-05 of the last "
               "layer's\n      -> no_gradient (warning) in encoder, step 31: encoder got no gradient\n"
               "         because: (no evidence stored)\n"));
  CHECK(has(s, "    and 3 more chains of linked alarms (the viewer's Anomalies panel shows them all)\n"));
  CHECK(s.find("other alarms by kind") == std::string::npos);  // every alarm is in a chain
  // The anomalies table names kinds 12 and 13 too.
  const std::string r = report(path, {.limit = 0});
  auto line_of = [&](const std::string& part) {  // the last line holding it: the table's
    const std::size_t at = r.rfind(part), from = r.rfind('\n', at) + 1;
    return at == std::string::npos ? std::string() : r.substr(from, r.find('\n', at) - from);
  };
  CHECK(has(line_of("fc1's gradient is 1e-05 of the last layer's"), " depth_gradient "));
  CHECK(has(line_of("encoder got no gradient"), " no_gradient "));
}

TEST_CASE("a healthy run prints one line and no alarm sections") {
  TempDir tmp;
  std::string path = tmp.file("ok.db");
  bad_runs::write_healthy(path);
  CHECK(story(path) == "healthy: closed cleanly, no anomalies, no out-of-memory\n\n");
  std::string r = report(path);
  CHECK(r.starts_with("healthy: closed cleanly, no anomalies, no out-of-memory\n\nrun: "));
  CHECK(r.find("story:") == std::string::npos);
  CHECK(r.find("alarms by kind") == std::string::npos);
  CHECK(has(r, "  stopped_by        exit\n"));
}

TEST_CASE("a version 1 trace (anomaly kinds 0..6) tells its story like a version 2 one") {
  TempDir tmp;
  std::string path = tmp.file("v1.db");
  bad_runs::write_alarms(path);
  run_sql(path, "DELETE FROM anomalies WHERE kind > 6; PRAGMA user_version = 1");
  std::string r = report(path);
  CHECK(r.starts_with("story: 3 alarms of 1 kind\n"));
  CHECK(has(r, "run: " + path + " (schema version 1)\n"));
}

TEST_CASE("a long run whose trace stopped on a full disk, with detail shed: the story says both, by kind") {
  TempDir tmp;
  const std::string path = tmp.file("full.db");
  long_run::write_stopped_on_full_disk(path);
  CHECK(story(path) ==
        "story: the trace stopped at step 41: the disk was full (No space left on device); 15 detail events shed\n"
        "  ended: the trace stopped at step 41: the disk was full (No space left on device); the run went on "
        "untraced\n"
        "  the collector fell behind: 15 detail events were shed (memory events 5, spans 10); every step's summary "
        "arrived\n\n");
  const RunEnd e = run_end(TraceDb(path));
  CHECK(e.long_run);
  CHECK(e.disk_full == "step 41: No space left on device");
  CHECK(is_disk_full(e.stopped_by));
  CHECK(stop_kind(e.stopped_by) == StopKind::other);
}

TEST_CASE("a full disk without its step, shed detail without kinds; a long run that went well is healthy") {
  TempDir tmp;
  const std::string path = tmp.file("full.db");
  {
    long_run::Run r(path, {.steps = 3, .windows = {}, .anomalies = {}});
    for (std::int64_t s = 0; s < 3; ++s) r.step(s);
    r.writer().set_meta("dropped_events", "1");
    r.finish("disk full");
  }
  CHECK(story(path) ==
        "story: the trace stopped early: the disk was full; 1 detail event shed\n"
        "  ended: the trace stopped early: the disk was full; the run went on untraced\n"
        "  the collector fell behind: 1 detail event was shed; every step's summary arrived\n\n");
  const std::string ok = tmp.file("ok.db");
  long_run::write(ok, {.anomalies = {}});
  CHECK(story(ok) == "healthy: closed cleanly, no anomalies, no out-of-memory\n\n");
}
