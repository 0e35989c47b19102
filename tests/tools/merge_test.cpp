// tests/tools/merge_test.cpp — tools/merge.cpp: two ranks' traces with skewed, drifting clocks become one trace on the
// true clock (the program's barrier lines up though the merge never looked at it); ids, strings, modules and
// anomalies land where they belong; each bad input is refused with what to do, leaving the output as it was.
#include "tools/merge.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "rank_traces.h"
#include "synthetic_trace.h"
#include "tools/check.h"
#include "traces/error.h"
#include "traces/query/trace_db.h"
#include "traces/temp_dir.h"

using namespace gb::tools;
using gb::query::Row;
using gb::query::TraceDb;
using rank_traces::ms;

namespace {

struct Job {
  TempDir dir;
  std::string r0 = dir.file("run.rank0.db"), r1 = dir.file("run.rank1.db"), out = dir.file("run.db");
  explicit Job(const rank_traces::Job& job = {}) {
    rank_traces::write_rank(r0, 0, job);
    rank_traces::write_rank(r1, 1, job);
  }
};

// The end of the span of `name` with collective number `seq` on `rank`'s communication thread.
std::int64_t collective_end(const TraceDb& db, int rank, const char* name, int seq) {
  std::int64_t v = -1;
  db.each(
      "SELECT s.end_ns FROM spans s JOIN threads t ON t.id = s.thread_id JOIN strings n ON n.id = s.name_id "
      "WHERE t.rank = ?1 AND s.seq = ?2 AND n.text = '" +
          std::string(name) + "'",
      {rank, seq}, [&](const Row& r) { v = r.i64(0); });
  return v;
}

std::string error_of(const std::vector<std::string>& in, const std::string& out) {
  try {
    merge_traces(in, out);
  } catch (const gb::trace::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("merge puts both ranks on the true clock: drift undone, the program's barrier lines up") {
  Job j;
  MergeResult r = merge_traces({j.r1, j.r0}, j.out);  // any order: the lowest rank is the reference
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].rank == 0);
  CHECK(r.ranks[0].aligned_by == "reference");
  CHECK(r.ranks[1].aligned_by ==
        "clock_sync start and end, within \xc2\xb1"
        "0.000us");  // the bounds met exactly
  CHECK(r.ranks[1].scale == doctest::Approx(1.0 / 1.0001).epsilon(1e-9));
  CHECK(r.notes.empty());
  CHECK(r.collectives == 2 * rank_traces::kCollectivesPerRank);

  TraceDb db(j.out);
  CHECK(db.reader().schema_version() == 6);
  // rank 1 started first (tau 0): every time moved so that none is negative, and the merged clock is tau
  CHECK(r.ranks[0].offset_ns == ms(2));
  for (int rank : {0, 1}) {
    CHECK(std::abs(collective_end(db, rank, "clock_sync", 1) - ms(12)) <= 2);
    CHECK(std::abs(collective_end(db, rank, "clock_sync", 10) - (ms(125) + 1000)) <= 2);
    CHECK(std::abs(collective_end(db, rank, "barrier", rank_traces::kBarrierSeq) - ms(110)) <= 2);  // not used to align
    CHECK(std::abs(collective_end(db, rank, "all_reduce", rank_traces::kAllReduceSeq + 1) -
                   (rank_traces::step_start(1) + ms(7))) <= 2);
  }
  // rank 1's straggling forward starts 3 ms after its step on the true clock
  std::int64_t linear = 0;
  db.each(
      "SELECT s.start_ns FROM spans s JOIN threads t ON t.id = s.thread_id JOIN strings n ON n.id = s.name_id "
      "WHERE t.rank = 1 AND n.text = 'linear' AND s.step = 2",
      [&](const Row& row) { linear = row.i64(0); });
  CHECK(std::abs(linear - (rank_traces::step_start(2) + ms(3))) <= 2);

  CHECK(gb::tools::check_trace(db).ok());
}

TEST_CASE("merge keeps every rank's rows with their ids moved, each string once, modules by path") {
  Job j;
  merge_traces({j.r0, j.r1}, j.out);
  TraceDb db(j.out);
  CHECK(db.scalar("SELECT count(*) FROM threads") == 4);
  CHECK(db.scalar("SELECT count(*) FROM threads WHERE rank = 1 AND role = 6 AND name = 'communication'") == 1);
  CHECK(db.scalar("SELECT count(*) FROM threads WHERE rank = 0 AND id IN (1, 2)") == 2);  // the reference keeps its ids
  // every span sits on a thread of its rank, with its parent on the same thread
  CHECK(db.scalar("SELECT count(*) FROM spans WHERE thread_id NOT IN (SELECT id FROM threads)") == 0);
  CHECK(db.scalar("SELECT count(*) FROM spans s WHERE parent_id IS NOT NULL AND "
                  "(SELECT thread_id FROM spans p WHERE p.id = s.parent_id) != s.thread_id") == 0);
  CHECK(db.scalar("SELECT count(*) FROM spans") ==
        sql_int(j.r0, "SELECT count(*) FROM spans") + sql_int(j.r1, "SELECT count(*) FROM spans"));
  CHECK(db.scalar("SELECT count(*) FROM strings") == db.scalar("SELECT count(DISTINCT text) FROM strings"));
  CHECK(db.scalar("SELECT count(*) FROM collectives c JOIN spans s ON s.id = c.span_id") ==
        2 * rank_traces::kCollectivesPerRank);
  CHECK(db.scalar("SELECT count(*) FROM collectives c JOIN strings n ON n.id = c.reduce_op WHERE n.text = 'avg' "
                  "AND c.bucket = 0") == 8);
  // rank 1's fc1 (module 7 in its file) is the reference's fc1 (module 2)
  CHECK(db.scalar("SELECT count(DISTINCT module_id) FROM spans s JOIN threads t ON t.id = s.thread_id "
                  "WHERE t.rank = 1 AND module_id IS NOT NULL") == 1);
  CHECK(db.scalar("SELECT module_id FROM spans s JOIN threads t ON t.id = s.thread_id "
                  "WHERE t.rank = 1 AND module_id IS NOT NULL LIMIT 1") == 2);
  CHECK(db.scalar("SELECT count(*) FROM modules") == 2);
  CHECK(db.scalar("SELECT count(*) FROM rank_steps") == 8);
  CHECK(db.reader().all<gb::trace::RankStepRecord>().size() == 8);
  CHECK(db.reader().all<gb::trace::RankRecord>().size() == 2);
  CHECK(db.scalar("SELECT count(*) FROM steps") == 4);
  CHECK(db.reader().meta("merged_ranks") == "0,1");
  CHECK(db.reader().meta("rank1.host") == "node1");
  CHECK(db.reader().meta("rank0.host") == "node0");
  CHECK_FALSE(db.reader().meta("rank"));  // the merged trace is no one rank
  // the anomalies carry their rank; on the true clock rank 1's came first
  std::vector<std::int64_t> ranks;
  db.each("SELECT rank, module_id FROM anomalies ORDER BY t_ns, id", [&](const Row& row) {
    ranks.push_back(row.i64(0));
    CHECK(row.i64(1) == 2);
  });
  CHECK(ranks == std::vector<std::int64_t>{1, 0});
  CHECK(db.scalar("SELECT param_id FROM anomalies WHERE rank = 0") == 1);
}

TEST_CASE("merge moves an anomaly's cause_id with its ids: each rank's chain stays within the rank") {
  Job j;
  for (const std::string& path : {j.r0, j.r1})  // each rank: anomaly 2 explained by its anomaly 1 (schema version 6)
    sql_int(path,
            "INSERT INTO anomalies (id, t_ns, step, kind, severity, message, cause_id, cause) VALUES (2, 50000000, 2, "
            "2, 1, 'gradients explode', 1, 'after the NaN')");
  merge_traces({j.r0, j.r1}, j.out);
  TraceDb db(j.out);
  CHECK(db.scalar("SELECT count(*) FROM anomalies") == 4);
  CHECK(db.scalar("SELECT count(*) FROM anomalies WHERE cause_id IS NOT NULL") == 2);
  // every cause is the same rank's nonfinite_backward, found before it
  CHECK(db.scalar("SELECT count(*) FROM anomalies a JOIN anomalies c ON c.id = a.cause_id WHERE c.rank = a.rank AND "
                  "c.kind = 1 AND c.id < a.id AND a.cause = 'after the NaN'") == 2);
  CHECK(gb::tools::check_trace(db).ok());
}

TEST_CASE("merge falls back to the start handshake, then to the wall clock, and says so") {
  SUBCASE("start handshake only") {
    rank_traces::Job job;
    job.with_end_sync = false;
    Job j(job);
    MergeResult r = merge_traces({j.r0, j.r1}, j.out);
    CHECK(r.ranks[1].aligned_by ==
          "clock_sync start, within \xc2\xb1"
          "0.000us");
    CHECK(r.ranks[1].scale == 1.0);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("destroy_process_group") != std::string::npos);
    TraceDb db(j.out);
    CHECK(std::abs(collective_end(db, 1, "clock_sync", 2) - collective_end(db, 0, "clock_sync", 2)) <= 1);
  }
  SUBCASE("no handshake") {
    rank_traces::Job job;
    job.with_start_sync = job.with_end_sync = false;
    job.rate[1] = 1.0;
    Job j(job);
    MergeResult r = merge_traces({j.r0, j.r1}, j.out);
    CHECK(r.ranks[1].aligned_by == "started_at_unix_ns");
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("wall clock") != std::string::npos);
    TraceDb db(j.out);  // the wall clocks here agree: the barrier still lines up
    CHECK(std::abs(collective_end(db, 1, "barrier", rank_traces::kBarrierSeq) -
                   collective_end(db, 0, "barrier", rank_traces::kBarrierSeq)) <= 1);
  }
}

TEST_CASE("merge refuses what is not one job's ranks, naming the file and the fix, and keeps the old output") {
  Job j;
  { std::ofstream(j.out) << "an earlier merge"; }
  auto unchanged = [&] {
    std::ifstream in(j.out);
    std::string s((std::istreambuf_iterator<char>(in)), {});
    return s == "an earlier merge";
  };
  CHECK(error_of({j.r0}, j.out).find("two or more ranks") != std::string::npos);
  CHECK(error_of({j.r0, j.r0}, j.out).find("are both rank 0") != std::string::npos);
  CHECK(error_of({j.r0, j.r1}, j.r1).find("is one of the inputs") != std::string::npos);

  const std::string single = j.dir.file("single.db");
  synthetic::write(single);  // one process's trace: no rank
  std::string e = error_of({j.r0, single}, j.out);
  CHECK(e.find("single.db") != std::string::npos);
  CHECK(e.find("no meta 'rank'") != std::string::npos);

  const std::string other = j.dir.file("other.rank1.db");
  rank_traces::Job three;
  three.world_size = 3;
  rank_traces::write_rank(other, 1, three);
  CHECK(error_of({j.r0, other}, j.out).find("merge the ranks of one job") != std::string::npos);

  const std::string old = j.dir.file("old.rank1.db");
  std::filesystem::copy_file(j.r1, old);
  sql_int(old, "PRAGMA user_version = 3");
  e = error_of({j.r0, old}, j.out);
  CHECK(e.find("schema version 3") != std::string::npos);
  CHECK(e.find("run the job again") != std::string::npos);

  CHECK(error_of({j.r0, j.dir.file("missing.db")}, j.out).find("missing.db") != std::string::npos);
  CHECK(unchanged());
  CHECK_FALSE(std::filesystem::exists(j.out + ".merging"));
}

TEST_CASE("merge: handshakes that disagree beyond any clock's rate fall back to the start one, and say so") {
  rank_traces::Job job;
  job.rate[1] = 1.10;  // 10%: no tick-rate measurement is that far off; broken stamps look like this
  Job j(job);
  MergeResult r = merge_traces({j.r0, j.r1}, j.out);
  CHECK(r.ranks[1].aligned_by.starts_with("clock_sync start, within"));
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("disagree") != std::string::npos);
  TraceDb db(j.out);
  // the start handshake's 1 us at a 10% rate: within 200 ns
  CHECK(std::abs(collective_end(db, 1, "clock_sync", 2) - collective_end(db, 0, "clock_sync", 2)) <= 200);
}

TEST_CASE("merge names the ranks of the job that were not given") {
  TempDir dir;
  rank_traces::Job job;
  job.world_size = 3;
  rank_traces::write_rank(dir.file("a.db"), 0, job);
  rank_traces::write_rank(dir.file("b.db"), 1, job);
  MergeResult r = merge_traces({dir.file("a.db"), dir.file("b.db")}, dir.file("m.db"));
  REQUIRE_FALSE(r.notes.empty());
  CHECK(r.notes[0] == "the job had 3 ranks; not given: 2");
}
