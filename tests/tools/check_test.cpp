// tests/tools/check_test.cpp — tools/check.cpp: a clean trace passes; each problem, injected with raw SQL, is
// found with its count and example ids; notes do not fail the check; damaged files fail to open with one line. A
// long run's trace (long_run.h): its detail windows and the detail rows inside them, resume/live in the replay.
#include "tools/check.h"

#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "long_run.h"
#include "rank_traces.h"
#include "synthetic_trace.h"
#include "tools/merge.h"
#include "traces/error.h"
#include "traces/temp_dir.h"
#include "tools_test_util.h"

using namespace gb::tools;
using namespace gb::query;
using gb::trace::span_id;
using toolstest::run_sql;

namespace {

const Finding* find(const std::vector<Finding>& v, const std::string& part) {
  for (const Finding& f : v)
    if (f.what.find(part) != std::string::npos) return &f;
  return nullptr;
}

std::string text(const CheckResult& c) {
  std::ostringstream out;
  write_check(c, "t.db", out);
  return out.str();
}

struct Injection {
  const char* sql;
  const char* problem;         // a part of Finding::what
  std::int64_t count;          // rows affected
  std::int64_t first_example;  // the first example id
};

}  // namespace

TEST_CASE("a clean trace: no problems, no notes, one ok line with the counts") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path, {.with_cuda = true});
  CheckResult c = check_trace(TraceDb(path));
  CHECK(c.ok());
  CHECK(c.notes.empty());
  CHECK(c.spans == 30);
  CHECK(c.memory_events == 9);
  CHECK(text(c) ==
        "ok: 30 spans, 9 memory events, 3 threads, 6 kernels, 1 instants, 2 graph nodes, 3 steps; "
        "no problems\n");
}

TEST_CASE("each kind of problem, injected with raw SQL, is reported with its count and example ids") {
  const std::int64_t t1 = span_id(1, 0), relu0 = span_id(1, 6), matmul0 = span_id(1, 4);
  const std::vector<Injection> cases = {
      {"UPDATE spans SET dur_ns = -5 WHERE kind = 0 AND name_id = (SELECT id FROM strings WHERE text = 'relu')",
       "end before they start", 3, relu0},
      {"INSERT INTO spans (id, kind, name_id, start_ns, dur_ns) VALUES (4294967296, 0, 1, 0, 1)", "with n = 0", 1, t1},
      {"INSERT INTO spans (id, kind, name_id, start_ns, dur_ns) VALUES (38654705665, 0, 1, 0, 1)",
       "thread that is not in threads", 1, span_id(9, 1)},
      {"UPDATE spans SET parent_delta = id - 8589934593 WHERE id = 4294967300", "parent is on another thread", 1,
       matmul0},
      {"UPDATE spans SET name_id = 999 WHERE id IN (4294967300, 4294967301)", "spans whose name_id is not in strings",
       2, matmul0},
      {"UPDATE spans SET start_ns = 5 WHERE id = 4294967302", "start order", 1, relu0},
      {"INSERT INTO memory_events VALUES (10, 1000, 1, 0, 30583, 8, 8, NULL, 0, 0, NULL, NULL, 0, 0);"
       "INSERT INTO memory_events VALUES (11, 1001, 1, 0, 8192, 3000, 3000, NULL, 0, 3, NULL, NULL, 0, 0)",
       "frees with no live alloc", 2, 10},  // 0x7777 never allocated; 0x3000 freed twice
      {"INSERT INTO op_details (span_id, device) VALUES (12345, 0)", "op_details rows whose span is missing", 1, 12345},
      {"INSERT INTO kernels VALUES (777, 0, 7, 1, NULL, '1,1,1', '1,1,1', 1, 0)", "kernels rows whose span", 1, 777},
      {"UPDATE kernels SET launch_span_id = 55 WHERE span_id = 12884901889", "launching span", 1, span_id(3, 1)},
      {"UPDATE instants SET thread_id = 9, span_id = NULL", "instants on a thread that is not in threads", 1, 1},
      {"UPDATE instants SET span_id = 8589934593", "instants whose span is on another thread", 1, 1},
      {"UPDATE graph_nodes SET forward_span_id = 5 WHERE id = 2", "graph_nodes whose forward span", 1, 2},
      {"INSERT INTO graph_edges VALUES (0, 1, 99, 0)", "graph_edges naming a missing graph_node", 1, 2},
      {"INSERT INTO grad_stats (step, param_id, norm, max_abs, nan_count, inf_count, zero_frac, param_norm) "
       "VALUES (0, 42, 1, 1, 0, 0, 0, 1)",
       "grad_stats naming a missing param", 1, 4},
      {"UPDATE params SET module_id = 77", "params naming a missing module", 1, 1},
      {"UPDATE counters SET name_id = 999", "counters whose name_id", 2, 1},
      {"UPDATE anomalies SET kind = 14", "anomalies of an unknown kind (kinds are 0..13)", 1, 1},
      {"UPDATE anomalies SET cause_id = id", "anomalies whose cause_id names no earlier anomaly", 1, 1},
      {"UPDATE anomalies SET cause_id = 99", "anomalies whose cause_id names no earlier anomaly", 1, 1},
      {"UPDATE anomalies SET severity = 3", "anomalies of an unknown severity", 1, 1},
  };
  for (const Injection& inj : cases) {
    std::string problem = inj.problem;
    CAPTURE(problem);
    TempDir tmp;
    std::string path = tmp.file("t.db");
    synthetic::write(path, {.with_cuda = true});
    run_sql(path, inj.sql);
    CheckResult c = check_trace(TraceDb(path));
    CHECK_FALSE(c.ok());
    const Finding* f = find(c.problems, inj.problem);
    REQUIRE(f != nullptr);
    CHECK(f->count == inj.count);
    REQUIRE_FALSE(f->examples.empty());
    CHECK(f->examples.front() == inj.first_example);
    CHECK(c.problems.size() == 1);  // the injection breaks one rule only
    if (c.problems.size() != 1) MESSAGE(text(c));
    std::string t = text(c);
    CHECK(t.find("problem: " + std::to_string(inj.count) + " ") == 0);
    CHECK(t.find("1 problem found in t.db\n") != std::string::npos);
  }
}

TEST_CASE("frees are checked in time order: rows a second thread's drain wrote late are not problems") {
  // A DataLoader worker allocates at t 1500 and the training thread frees that batch at t 2000, but the collector
  // drained the training thread first: the free has the smaller id.
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  run_sql(path,
          "INSERT INTO memory_events VALUES (10, 2000, 1, 0, 36864, 64, 64, NULL, 0, 6, NULL, NULL, 0, 0);"
          "INSERT INTO memory_events VALUES (11, 1500, 0, 0, 36864, 64, 64, NULL, 0, 6, NULL, NULL, 64, 0)");
  CheckResult c = check_trace(TraceDb(path));
  CHECK(c.ok());
  if (!c.ok()) MESSAGE(text(c));
}

TEST_CASE("anomaly kinds 0..13 check ok (schema version 6), and so does a version 1 file with kinds 0..6") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  for (int kind = 0; kind < gb::trace::kAnomalyKinds; ++kind)
    run_sql(path, "INSERT INTO anomalies (t_ns, step, kind, severity, message) VALUES (1, 0, " + std::to_string(kind) +
                      ", 1, 'k')");
  CheckResult c = check_trace(TraceDb(path));
  CHECK(c.ok());
  CHECK(gb::trace::kAnomalyKinds == 14);
  // a consequence naming an earlier row as its cause is fine
  run_sql(path, "UPDATE anomalies SET cause_id = id - 1, cause = 'after it' WHERE id > (SELECT min(id) FROM anomalies)");
  CHECK(check_trace(TraceDb(path)).ok());

  std::string v1 = tmp.file("v1.db");
  synthetic::write(v1);
  run_sql(v1,
          "INSERT INTO anomalies (t_ns, kind, severity, message) VALUES (5, 6, 0, 'growth'); "
          "PRAGMA user_version = 1");
  TraceDb db(v1);
  CHECK(db.reader().schema_version() == 1);
  CHECK(check_trace(db).ok());
}

TEST_CASE("examples stop at five, the count does not") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  run_sql(path, "UPDATE spans SET dur_ns = -1 WHERE thread_id = 1");
  CheckResult c = check_trace(TraceDb(path));
  const Finding* f = find(c.problems, "end before they start");
  REQUIRE(f != nullptr);
  CHECK(f->count == 18);
  CHECK(f->examples ==
        std::vector<std::int64_t>{span_id(1, 1), span_id(1, 2), span_id(1, 3), span_id(1, 4), span_id(1, 5)});
  CHECK(text(c).find("(e.g. 4294967297, 4294967298, 4294967299, 4294967300, 4294967301)") != std::string::npos);
}

TEST_CASE("notes keep the exit code at 0: spans that never ended, an unclean close, dropped events") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  // the program was killed inside step 0: its span never ended, so its children and instant name a missing span
  run_sql(path,
          "DELETE FROM spans WHERE id = 4294967297; DELETE FROM meta WHERE key = 'closed_cleanly';"
          "UPDATE meta SET value = '12' WHERE key = 'dropped_events'");
  CheckResult c = check_trace(TraceDb(path));
  CHECK(c.ok());
  REQUIRE(c.notes.size() == 4);
  const Finding* never = find(c.notes, "spans never ended");
  REQUIRE(never != nullptr);
  CHECK(never->count == 1);
  CHECK(never->examples == std::vector<std::int64_t>{span_id(1, 1)});
  CHECK(find(c.notes, "instants inside spans that never ended") != nullptr);
  CHECK(find(c.notes, "not closed cleanly") != nullptr);
  const Finding* dropped = find(c.notes, "dropped");
  REQUIRE(dropped != nullptr);
  CHECK(dropped->count == 12);
  std::string t = text(c);
  CHECK(t.find("note: 1 spans never ended") == 0);
  CHECK(t.find("ok: 23 spans") != std::string::npos);
  CHECK(t.find("(4 notes)\n") != std::string::npos);
}

TEST_CASE("damaged files do not open: random bytes, truncated, a dropped table, a future version; one line each") {
  TempDir tmp;
  std::string good = tmp.file("good.db");
  synthetic::write(good);
  std::string random = tmp.file("random.db"), truncated = tmp.file("truncated.db"), dropped = tmp.file("dropped.db"),
              future = tmp.file("future.db");
  {
    std::mt19937 rng(7);
    std::ofstream f(random, std::ios::binary);
    for (int i = 0; i < 8192; ++i) f.put(static_cast<char>(rng()));
  }
  {
    std::ifstream in(good, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(truncated, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size() / 2));
  }
  std::filesystem::copy_file(good, dropped);
  run_sql(dropped, "DROP TABLE kernels");
  std::filesystem::copy_file(good, future);
  run_sql(future, "PRAGMA user_version = 7");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {random, "not a glassbox trace"},
      {truncated, "truncated"},
      {dropped, "has no table 'kernels'"},
      {future, "trace schema version 7 is newer than this glassbox reads (6); upgrade glassbox"}};
  for (const auto& c : cases) {  // no structured binding: CAPTURE's lambda captures it (Clang 14)
    const std::string& path = c.first;
    const std::string& why = c.second;
    CAPTURE(path);
    try {
      TraceDb db(path);
      check_trace(db);
      FAIL("opened a damaged file");
    } catch (const gb::trace::Error& e) {
      std::string msg = e.what();
      CHECK(msg.find(why) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
      CHECK(msg.rfind("glassbox", 0) == 0);
    }
  }
}

TEST_CASE("a trace still being written (or whose writer was killed): WAL file, no indexes; it checks with notes") {
  TempDir tmp;
  std::string path = tmp.file("live.db");
  using namespace gb::trace;
  Writer w(path);
  w.add(ThreadRecord{1, 1, "main", ThreadRole::main, std::nullopt});
  Id mm = w.intern("matmul");
  // span (1, 1), the step, is still open: only its finished child is in the file
  w.add(SpanRecord{.id = span_id(1, 2),
                   .kind = SpanKind::op,
                   .name_id = mm,
                   .thread_id = 1,
                   .start_ns = 10,
                   .end_ns = 20,
                   .parent_id = span_id(1, 1)});
  w.flush();
  CHECK(std::filesystem::exists(path + "-wal"));
  CheckResult c = check_trace(TraceDb(path));
  CHECK(c.ok());
  CHECK(c.spans == 1);
  REQUIRE(find(c.notes, "spans never ended") != nullptr);
  CHECK(find(c.notes, "spans never ended")->examples == std::vector<std::int64_t>{span_id(1, 1)});
  CHECK(find(c.notes, "not closed cleanly") != nullptr);
}

TEST_CASE("check: a merged trace is clean; a collectives row without its span, or of another kind, is a problem") {
  TempDir tmp;
  const std::string r0 = tmp.file("r.rank0.db"), r1 = tmp.file("r.rank1.db"), merged = tmp.file("r.db");
  rank_traces::write_rank(r0, 0);
  rank_traces::write_rank(r1, 1);
  CHECK(check_trace(TraceDb(r0)).ok());
  merge_traces({r0, r1}, merged);
  CHECK(check_trace(TraceDb(merged)).ok());
  run_sql(merged, "UPDATE collectives SET span_id = 12345 WHERE span_id = (SELECT min(span_id) FROM collectives)");
  run_sql(merged, "UPDATE spans SET kind = 7 WHERE id = (SELECT max(span_id) FROM collectives)");
  run_sql(merged, "INSERT INTO rank_steps VALUES (5, 0, 0, 1, NULL, 0)");
  const CheckResult c = check_trace(TraceDb(merged));
  REQUIRE(find(c.problems, "collectives rows whose span is missing"));
  CHECK(find(c.problems, "collectives rows whose span is missing")->examples == std::vector<std::int64_t>{12345});
  CHECK(find(c.problems, "not of kind collective"));
  CHECK(find(c.problems, "rank_steps of a rank that is not in ranks"));
}

TEST_CASE("a long run's trace checks ok: windows, detail inside them, frees of blocks a live row brought back") {
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  long_run::write(path);
  // a block known only from the live rows that open the window at step 40 (t 400 ms), freed inside it
  run_sql(path,
          "INSERT INTO memory_events VALUES (100, 400000000, 8, 0, 16384, 64, 64, NULL, 0, 3, NULL, NULL, 1064, 8192);"
          "INSERT INTO memory_events VALUES (101, 409000000, 1, 0, 16384, 64, 64, NULL, 0, 3, NULL, NULL, 1000, 8192)");
  const CheckResult c = check_trace(TraceDb(path));
  CHECK(c.ok());
  CHECK(c.notes.empty());
  CHECK(text(c) == "ok: 24 spans, 33 memory events, 1 threads, 0 kernels, 0 instants, 0 graph nodes, 60 steps; "
                   "no problems\n");
}

TEST_CASE("resume forgets the blocks before it: a free of a block allocated before the gap is a problem") {
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  long_run::write(path);
  run_sql(path,
          "INSERT INTO memory_events VALUES (100, 1000000, 0, 0, 20480, 64, 64, NULL, 0, 3, NULL, NULL, 1064, 8192);"
          "INSERT INTO memory_events VALUES (101, 409000000, 1, 0, 20480, 64, 64, NULL, 0, 3, NULL, NULL, 1000, 8192)");
  const CheckResult c = check_trace(TraceDb(path));
  REQUIRE(c.problems.size() == 1);
  CHECK(c.problems[0].what == "memory_events frees with no live alloc at that (device, addr)");
  CHECK(c.problems[0].examples == std::vector<std::int64_t>{101});
}

TEST_CASE("a long run's broken rules, injected with raw SQL, are each caught with their count and example ids") {
  const std::vector<Injection> cases = {
      {"INSERT INTO detail_windows VALUES (9, 50, 45, 500000000, 510000000, 1)",
       "detail_windows rows whose first_step is after their last_step", 1, 9},
      {"INSERT INTO detail_windows VALUES (9, 41, 43, 410000000, 440000000, 3)",
       "detail_windows rows that overlap an earlier window", 1, 9},
      {"INSERT INTO detail_windows VALUES (9, 50, 50, 500000000, 510000000, 8)",
       "detail_windows rows of an unknown reason (reasons are 0..7)", 1, 9},
      {"INSERT INTO spans (id, kind, name_id, start_ns, dur_ns, step) VALUES (4294968295, 0, 1, 9000000000, 1000, 10)",
       "spans of a step outside every detail window (detail outside the detail windows)", 1, span_id(1, 999)},
      {"INSERT INTO instants VALUES (1, 105000000, (SELECT id FROM strings WHERE text = 'step'), 1, NULL, 10)",
       "instants of a step outside every detail window (detail outside the detail windows)", 1, 1},
      {"INSERT INTO memory_events VALUES (100, 150000000, 2, 0, 36864, 4096, 4096, NULL, 0, 0, NULL, NULL, 1000, "
       "12288)",
       "memory_events outside the time of every detail window (detail outside the detail windows)", 1, 100},
      {"INSERT INTO step_memory VALUES (99, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0)",
       "step_memory rows of a step that has no steps row", 1, 121},
  };
  for (const Injection& inj : cases) {
    std::string problem = inj.problem;
    CAPTURE(problem);
    TempDir tmp;
    const std::string path = tmp.file("t.db");
    long_run::write(path);
    run_sql(path, inj.sql);
    const CheckResult c = check_trace(TraceDb(path));
    const Finding* f = find(c.problems, inj.problem);
    REQUIRE(f != nullptr);
    CHECK(f->count == inj.count);
    REQUIRE_FALSE(f->examples.empty());
    CHECK(f->examples.front() == inj.first_example);
    CHECK(c.problems.size() == 1);
    if (c.problems.size() != 1) MESSAGE(text(c));
  }
}

TEST_CASE("an op's detail outside the windows: its span and its op_details row; a detail policy that does not parse") {
  TempDir tmp;
  const std::string path = tmp.file("t.db");
  long_run::write(path);
  run_sql(path, "UPDATE spans SET step = 12 WHERE id = 4294967308");  // step 20's matmul, with op_details
  CheckResult c = check_trace(TraceDb(path));
  CHECK(c.problems.size() == 2);
  const Finding* f = find(c.problems, "op_details rows whose span's step is outside every detail window");
  REQUIRE(f != nullptr);
  CHECK(f->examples == std::vector<std::int64_t>{span_id(1, 12)});
  CHECK(find(c.problems, "spans of a step outside") != nullptr);

  const std::string bad = tmp.file("bad.db");
  long_run::write(bad);
  run_sql(bad, "UPDATE meta SET value = 'first=5,every=20' WHERE key = 'detail'");
  c = check_trace(TraceDb(bad));
  REQUIRE(c.problems.size() == 1);
  CHECK(text(c) ==
        "problem: meta detail 'first=5,every=20' is neither 'full' nor "
        "'first=F,every=N,window=W,recorder=M,recorder_mb=B[,after=A]'\n1 problem found in t.db\n");
  run_sql(bad, "UPDATE meta SET value = 'full' WHERE key = 'detail'");
  CHECK(find(check_trace(TraceDb(bad)).problems, "meta detail") == nullptr);
}

TEST_CASE("notes, not problems: a trace that stopped on a full disk, and detail the collector shed") {
  TempDir tmp;
  const std::string path = tmp.file("t.db");
  long_run::write_stopped_on_full_disk(path);
  const CheckResult c = check_trace(TraceDb(path));
  CHECK(c.ok());
  CHECK(text(c) ==
        "note: the trace stopped on a full disk (meta stopped_by = disk full; disk_full: step 41: No space left on "
        "device): the run went on untraced, its later steps are not in the file\n"
        "note: 15 detail events were shed because the collector fell behind (meta dropped_events; by kind: "
        "memory_event 5, span 10); every step's summary arrived\n"
        "ok: 18 spans, 23 memory events, 1 threads, 0 kernels, 0 instants, 0 graph nodes, 42 steps; no problems "
        "(2 notes)\n");
}
