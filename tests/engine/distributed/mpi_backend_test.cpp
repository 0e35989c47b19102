// tests/engine/distributed/mpi_backend_test.cpp — the MPI backend among the ranks mpirun starts (CTest runs it with
// 2): every collective's values on every rank, for each dtype and reduction; collectives queued asynchronously
// finish in order, with the right values, while the caller computes. The cases named "failure: ..." run only
// when CTest asks for them (GB_TEST_FAILURE): a rank killed, a rank that throws, a rank that never reaches the
// collective; the other ranks must end with a clear error, not hang (CTest checks the output and a time limit).
#include <csignal>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "distributed/backends.h"
#include "engine/distributed/mpi_group.h"
#include "instrument/session.h"
#include "support/check.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

namespace dist = gb::distributed;

namespace {

// One group for the whole executable: started by the first case, ended at exit (MPI starts once per process).

std::string failure_mode() {
  const char* v = std::getenv("GB_TEST_FAILURE");
  return v ? v : "";
}

}  // namespace

TEST_CASE("all_reduce: sum, avg, product, min, max over every rank, float, double, int64 and bool") {
  if (!failure_mode().empty()) return;
  if (!gbtest::ensure_mpi_group()) return;
  const int r = dist::get_rank(), n = dist::get_world_size();
  CAPTURE(r);
  INFO("world size " << n);
  auto x = gb::arange(5, gb::kFloat) + float(r);  // rank r holds r, r+1, ..., r+4
  dist::all_reduce(x);
  const double rank_sum = n * (n - 1) / 2.0;
  gbtest::check_values(x, {rank_sum, rank_sum + n, rank_sum + 2 * n, rank_sum + 3 * n, rank_sum + 4 * n});

  auto a = gb::full({3}, double(r + 1), gb::kDouble);
  dist::all_reduce(a, dist::ReduceOp::AVG);
  gbtest::check_values(a, {(n + 1) / 2.0, (n + 1) / 2.0, (n + 1) / 2.0});
  auto p = gb::full({2}, int64_t(r + 2), gb::kInt64);
  dist::all_reduce(p, dist::ReduceOp::PRODUCT);
  int64_t prod = 1;
  for (int k = 0; k < n; ++k) prod *= k + 2;
  CHECK(p[1].item<int64_t>() == prod);
  auto m = gb::tensor({float(r), -float(r)});
  auto M = m.clone();
  dist::all_reduce(m, dist::ReduceOp::MIN);
  dist::all_reduce(M, dist::ReduceOp::MAX);
  gbtest::check_values(m, {0.0, -double(n - 1)});
  gbtest::check_values(M, {double(n - 1), 0.0});
  auto b = gb::tensor({r == 0, true, false});  // or over ranks
  dist::all_reduce(b);
  CHECK(b[0].item<bool>());
  CHECK(b[1].item<bool>());
  CHECK_FALSE(b[2].item<bool>());
}

TEST_CASE("broadcast, all_gather, reduce_scatter and barrier") {
  if (!failure_mode().empty()) return;
  if (!gbtest::ensure_mpi_group()) return;
  const int r = dist::get_rank(), n = dist::get_world_size();
  CAPTURE(r);
  const int src = n - 1;
  auto t = gb::full({2, 3}, float(10 * r + 1));
  dist::broadcast(t, src);
  CHECK(t.sum().item<float>() == doctest::Approx(6.0 * (10 * src + 1)));

  std::vector<gb::Tensor> parts;
  dist::all_gather(parts, gb::full({4}, int32_t(100 + r), gb::kInt32));
  REQUIRE(int(parts.size()) == n);
  for (int k = 0; k < n; ++k) {
    CHECK(parts[size_t(k)].scalar_type() == gb::kInt32);
    CHECK(parts[size_t(k)][3].item<int32_t>() == 100 + k);
  }

  // input k of rank r holds 1000 k + r: rank r receives the sum over ranks of their input r
  std::vector<gb::Tensor> inputs;
  for (int k = 0; k < n; ++k) inputs.push_back(gb::full({5}, double(1000 * k + r), gb::kDouble));
  auto out = gb::zeros({5}, gb::kDouble);
  dist::reduce_scatter(out, inputs);
  const double want = 1000.0 * r * n + n * (n - 1) / 2.0;
  gbtest::check_values(out, {want, want, want, want, want});
  dist::reduce_scatter(out, inputs, dist::ReduceOp::AVG);
  gbtest::check_values(out, std::vector<double>(5, want / n));
  dist::barrier();
  auto w = dist::barrier(true);
  REQUIRE(w);
  CHECK(w->wait());
}

TEST_CASE("async collectives finish in the order they were queued, while the caller computes") {
  if (!failure_mode().empty()) return;
  if (!gbtest::ensure_mpi_group()) return;
  const int r = dist::get_rank(), n = dist::get_world_size();
  // a 25 MB bucket and 20 small ones, all queued before any wait
  auto big = gb::full({int64_t(25) << 18}, float(r + 1));
  std::vector<gb::Tensor> small;
  std::vector<std::shared_ptr<dist::Work>> works{dist::all_reduce(big, dist::ReduceOp::SUM, true)};
  for (int i = 0; i < 20; ++i) {
    small.push_back(gb::full({7}, float(i * n + r)));
    works.push_back(dist::all_reduce(small.back(), dist::ReduceOp::MAX, true));
  }
  // the caller computes meanwhile
  auto y = gb::randn({256, 256}).matmul(gb::randn({256, 256}));
  CHECK(y.size(0) == 256);
  for (auto it = works.rbegin(); it != works.rend(); ++it) CHECK((*it)->wait());
  for (const auto& w : works) CHECK(w->is_success());
  CHECK(big[int64_t(25) << 17].item<float>() == doctest::Approx(n * (n + 1) / 2.0));
  for (int i = 0; i < 20; ++i) CHECK(small[size_t(i)][6].item<float>() == float(i * n + n - 1));
}

// ---- failures: run by CTest one at a time, with GB_TEST_FAILURE set ----

TEST_CASE("traced: each collective is a span on the communication track with its row; init and destroy shake hands") {
  if (!gbtest::ensure_mpi_group() || !failure_mode().empty()) return;
  dist::destroy_process_group();  // restarted inside the trace, to record the clock handshake
  TempDir dir;                    // one per rank (mkdtemp)
  const std::string path = dir.file("t.db");
  {
    gb::trace::Session session(path);
    dist::init_process_group("mpi", std::chrono::seconds(60));
    auto t = gb::ones({1000});
    dist::all_reduce(t);
    dist::broadcast(gb::zeros({10}, gb::TensorOptions().dtype(gb::kInt64)), 0);
    dist::barrier();
    dist::destroy_process_group();
  }
  dist::init_process_group("mpi", std::chrono::seconds(60));  // the group the other cases use

  gb::trace::Reader r(path);
  std::set<gb::trace::Id> comm;  // the group's thread (an earlier group's, already ended, may be listed too)
  for (const auto& t : r.all<gb::trace::ThreadRecord>())
    if (t.role == gb::trace::ThreadRole::communication) {
      comm.insert(t.id);
      CHECK(t.name == "communication");
    }
  REQUIRE_FALSE(comm.empty());
  std::vector<std::string> names;
  std::vector<int64_t> seqs;
  std::map<gb::trace::Id, gb::trace::SpanRecord> spans;
  std::set<gb::trace::Id> on;
  for (const auto& s : r.all<gb::trace::SpanRecord>()) {
    if (s.kind != gb::trace::SpanKind::collective || !comm.count(s.thread_id)) continue;
    spans[s.id] = s;
    on.insert(s.thread_id);
  }
  CHECK(on.size() == 1);               // one communication thread ran them all, in order
  for (const auto& [id, s] : spans) {  // id order is start order on the thread
    names.push_back(*r.string(s.name_id));
    seqs.push_back(s.seq.value_or(-1));
  }
  // the vote, the start handshake (5 barriers), the program's three, the end handshake
  std::vector<std::string> expected{"clock_sync_vote"};
  for (int i = 0; i < 5; ++i) expected.push_back("clock_sync");
  expected.insert(expected.end(), {"all_reduce", "broadcast", "barrier"});
  for (int i = 0; i < 5; ++i) expected.push_back("clock_sync");
  CHECK(names == expected);
  for (size_t i = 0; i < seqs.size(); ++i) CHECK(seqs[i] == int64_t(i));  // the group's collective number
  const auto rows = r.all<gb::trace::CollectiveRecord>();
  REQUIRE(rows.size() == expected.size());
  for (const auto& c : rows) {
    REQUIRE(spans.count(c.span_id));
    const auto& s = spans[c.span_id];
    CHECK(c.peers == dist::get_world_size());
    CHECK(c.queued_ns <= s.start_ns);
    CHECK_FALSE(c.bucket);
    const std::string name = *r.string(s.name_id);
    if (name == "all_reduce") {
      CHECK(c.bytes == 4000);
      CHECK(c.dtype == gb::trace::DType::float32);
      REQUIRE(c.reduce_op);
      CHECK(*r.string(*c.reduce_op) == "sum");
    } else if (name == "broadcast") {
      CHECK(c.bytes == 80);
      CHECK(c.dtype == gb::trace::DType::int64);
      CHECK_FALSE(c.reduce_op);
    } else if (name == "clock_sync_vote") {
      CHECK(*r.string(*c.reduce_op) == "min");
    }
  }
}

TEST_CASE("failure: a rank that is killed ends the job") {
  if (failure_mode() != "kill") return;
  if (!gbtest::ensure_mpi_group()) return;
  if (dist::get_rank() == 1) std::raise(SIGKILL);
  auto t = gb::ones({8});
  dist::all_reduce(t);  // never completes on rank 0: mpirun ends it
  FAIL("the all_reduce finished without rank 1");
}

TEST_CASE("failure: a rank that throws ends the job") {
  if (failure_mode() != "throw") return;
  if (!gbtest::ensure_mpi_group(std::chrono::seconds(3))) return;
  if (dist::get_rank() == 1) throw std::runtime_error("rank 1 failed on purpose");  // doctest reports it, exits 1
  auto t = gb::ones({8});
  dist::all_reduce(t);
  FAIL("the all_reduce finished without rank 1");
}

TEST_CASE("failure: a rank that never reaches the collective times the others out") {
  if (failure_mode() != "timeout") return;
  if (!gbtest::ensure_mpi_group(std::chrono::seconds(2))) return;
  if (dist::get_rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return;
  }
  auto t = gb::ones({8});
  CHECK_THROWS_WITH_AS(dist::all_reduce(t), doctest::Contains("did not finish within 2000 ms"), gb::Error);
  std::fprintf(stderr, "rank 0: the all_reduce timed out as expected\n");
  // leaving: the group's destructor finds the collective still stuck and aborts the job, naming why
}

TEST_CASE("mpi_broadcast_bytes: rank 0's bytes reach every rank (the NCCL backend's id exchange under mpirun)") {
  if (!failure_mode().empty()) return;
  std::vector<unsigned char> bytes(128);
  if (!gbtest::mpi_built()) {
    CHECK_THROWS_WITH_AS(gb::distributed::detail::mpi_broadcast_bytes(bytes, 0),
                         doctest::Contains("set MASTER_ADDR (rank 0's host) and MASTER_PORT"), gb::Error);
    return;
  }
  gbtest::ensure_mpi_group();
  const int r = dist::get_rank();
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(r == 0 ? i * 7 + 3 : 0xEE);
  gb::distributed::detail::mpi_broadcast_bytes(bytes, 0);
  for (size_t i = 0; i < bytes.size(); ++i) CHECK(bytes[i] == static_cast<unsigned char>(i * 7 + 3));
}
