// tests/engine/distributed/distributed_test.cpp — the default process group's functions in one process (no mpirun):
// what they say before init, for an unknown or unbuilt backend, for tensors a backend cannot carry; with MPI, a
// group of one (MPI's singleton start) whose collectives leave the tensors as they are, and init after destroy.
// The trace says which backend, rank and world size a run had. The collectives among 2 ranks are
// tests/engine/distributed/mpi_backend_test.cpp, under mpirun.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "glassbox/core/cuda.h"

#include "engine/distributed/mpi_group.h"
#include "instrument/session.h"
#include "support/check.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

namespace dist = gb::distributed;

TEST_CASE("before init_process_group every function says to call it") {
  REQUIRE_FALSE(dist::is_initialized());
  CHECK_THROWS_WITH_AS(dist::get_rank(), doctest::Contains("call gb::distributed::init_process_group(\"mpi\") first"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(dist::get_world_size(), doctest::Contains("not initialized"), gb::Error);
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::ones({2})), doctest::Contains("all_reduce: the default process group"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(dist::barrier(), doctest::Contains("mpirun -np 2"), gb::Error);
}

TEST_CASE("an unknown or unbuilt backend is named, with the ones this build has") {
  CHECK_THROWS_WITH_AS(dist::init_process_group("gloo"), doctest::Contains("unknown backend \"gloo\""), gb::Error);
  // NCCL: in the build exactly when the configure found it; without a GPU its error says so first
  const std::vector<std::string> built = dist::available_backends();
  const bool nccl = std::find(built.begin(), built.end(), "nccl") != built.end();
  const char* expect_nccl = std::getenv("GLASSBOX_EXPECT_NCCL");
  REQUIRE(expect_nccl);
  CHECK(nccl == (std::string(expect_nccl) == "1"));
  if (!gb::cuda::compiled_with_cuda())
    CHECK_THROWS_WITH_AS(dist::init_process_group("nccl"), doctest::Contains("has no CUDA, so no NCCL backend"),
                         gb::Error);
  else if (!nccl)
    CHECK_THROWS_WITH_AS(dist::init_process_group("nccl"), doctest::Contains("has no NCCL backend"), gb::Error);
  else if (!gb::cuda::is_available())
    CHECK_THROWS_WITH_AS(
        dist::init_process_group("nccl"),
        doctest::Contains(
            ("init_process_group(\"nccl\"): no usable CUDA device: " + gb::cuda::unavailable_reason()).c_str()),
        gb::Error);
  else  // a GPU, but no launcher's variables in this test's environment
    CHECK_THROWS_WITH_AS(dist::init_process_group("nccl"), doctest::Contains("RANK and WORLD_SIZE not set"), gb::Error);
  CHECK_THROWS_WITH_AS(dist::init_process_group("mpi", std::chrono::milliseconds(0)),
                       doctest::Contains("timeout must be positive"), gb::Error);
  CHECK_FALSE(dist::is_initialized());
  CHECK((std::find(built.begin(), built.end(), "mpi") != built.end()) == gbtest::mpi_built());
  if (!gbtest::mpi_built())
    CHECK_THROWS_WITH_AS(dist::init_process_group("mpi"), doctest::Contains("apt-get install libopenmpi-dev"),
                         gb::Error);
  if (built.empty())
    CHECK_THROWS_WITH_AS(dist::init_process_group(), doctest::Contains("no distributed backend"), gb::Error);
}

TEST_CASE("MPI without mpirun: a group of one, whose collectives keep the values; tensors it cannot carry") {
  if (!gbtest::mpi_built()) {
    MESSAGE("this build has no MPI: the group of one is not run here");
    return;
  }
  dist::init_process_group();  // "" picks mpi
  REQUIRE(dist::is_initialized());
  CHECK(dist::get_backend() == "mpi");
  CHECK(dist::get_rank() == 0);
  CHECK(dist::get_world_size() == 1);
  CHECK_THROWS_WITH_AS(dist::init_process_group("mpi"), doctest::Contains("already initialized (mpi, rank 0 of 1)"),
                       gb::Error);

  auto t = gb::arange(6, gb::kFloat);
  dist::all_reduce(t);
  gbtest::check_values(t, {0, 1, 2, 3, 4, 5});
  dist::all_reduce(t, dist::ReduceOp::AVG);
  gbtest::check_values(t, {0, 1, 2, 3, 4, 5});
  auto w = dist::all_reduce(t, dist::ReduceOp::MAX, true);
  REQUIRE(w);
  CHECK(w->wait());
  CHECK(w->is_success());
  CHECK(w->op() == "all_reduce");
  std::vector<gb::Tensor> gathered;
  dist::all_gather(gathered, t);
  REQUIRE(gathered.size() == 1);
  gbtest::check_values(gathered[0], {0, 1, 2, 3, 4, 5});
  auto out = gb::zeros({6});
  dist::reduce_scatter(out, {t});
  gbtest::check_values(out, {0, 1, 2, 3, 4, 5});
  dist::broadcast(t, 0);
  dist::barrier();

  // what the backend refuses, on the caller's thread
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::ones({4, 4}).t()), doctest::Contains("is not contiguous"), gb::Error);
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::ones({4}, gb::kHalf)), doctest::Contains("not Half"), gb::TypeError);
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::ones({4}, gb::kInt64), dist::ReduceOp::AVG),
                       doctest::Contains("AVG needs a floating dtype"), gb::Error);
  CHECK_THROWS_WITH_AS(dist::all_reduce(gb::Tensor()), doctest::Contains("undefined tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(dist::broadcast(t, 1), doctest::Contains("src 1 is not a rank of this group of 1"), gb::Error);
  std::vector<gb::Tensor> two{gb::zeros({6}), gb::zeros({6})};
  CHECK_THROWS_WITH_AS(dist::all_gather(two, t), doctest::Contains("needs one per rank (1)"), gb::Error);
  std::vector<gb::Tensor> wrong{gb::zeros({5})};
  CHECK_THROWS_WITH_AS(dist::all_gather(wrong, t), doctest::Contains("expected sizes [6]"), gb::Error);
  CHECK_THROWS_WITH_AS(dist::reduce_scatter(out, {gb::zeros({6}, gb::kDouble)}), doctest::Contains("dtype Double"),
                       gb::Error);

  // booleans reduce logically, integers exactly
  auto b = gb::tensor({true, false});
  dist::all_reduce(b);
  CHECK(b[0].item<bool>());
  CHECK_FALSE(b[1].item<bool>());
  auto big = gb::full({3}, int64_t(1) << 40, gb::kInt64);
  dist::all_reduce(big, dist::ReduceOp::SUM);
  CHECK(big[2].item<int64_t>() == (int64_t(1) << 40));

  dist::destroy_process_group();
  CHECK_FALSE(dist::is_initialized());
  CHECK_THROWS_WITH_AS(dist::get_rank(), doctest::Contains("not initialized"), gb::Error);
  // MPI stays up for the process's lifetime: a second group starts
  dist::init_process_group("mpi", std::chrono::seconds(60));
  CHECK(dist::get_world_size() == 1);
  dist::destroy_process_group();
}

TEST_CASE("the trace recording names the group's backend, rank and world size in meta") {
  if (!gbtest::mpi_built()) return;
  TempDir tmp;
  const std::string path = tmp.file("dist.db");
  {
    gb::trace::Session session(path);
    dist::init_process_group("mpi");
    dist::all_reduce(gb::ones({3}));
    dist::destroy_process_group();
  }
  gb::trace::Reader r(path);
  CHECK(r.meta("distributed_backend") == "mpi");
  CHECK(r.meta("rank") == "0");
  CHECK(r.meta("world_size") == "1");
  // a session started after init_process_group gets them too (the session hook)
  dist::init_process_group("mpi");
  const std::string later = tmp.file("later.db");
  { gb::trace::Session session(later); }
  CHECK(gb::trace::Reader(later).meta("distributed_backend") == "mpi");
  dist::destroy_process_group();
}
