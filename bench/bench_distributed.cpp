// bench/bench_distributed.cpp — data-parallel costs, run under mpirun (`mpirun -np 2 build/bench/bench_distributed`,
// as root with --allow-run-as-root; `make bench` runs it with 2 ranks). Rank 0 prints the JSON lines.
//   allreduce_25mb   gb::distributed::all_reduce of a 25 MB float32 bucket (the DDP default), through the group's
//                    communication thread, against MPI_Allreduce called directly on the same buffer (target <= 1.5)
//   ddp_step         one training step of an MLP 784-512-512-10 on 64 and 256 samples per rank under DDP, against
//                    the same step without DDP run at the same time on every rank (so both share the cores alike;
//                    target overhead <= 15%); _bucket_view: with gradient_as_bucket_view
// Each rank runs one engine thread: two ranks share this machine's two cores. Every timed loop has a fixed count
// (a collective needs every rank to run the same number), the two candidates alternate over rounds, and each keeps
// its best median.
#include <glassbox/glassbox.h>
#include <glassbox/nn/parallel/distributed.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.h"

namespace dist = gb::distributed;

namespace {

// The median seconds per call of fn over `reps` calls (after 2 warm-up calls), the ranks starting together.
double median_per_call(const std::function<void()>& fn, int reps) {
  fn();
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    dist::barrier();
    const double t0 = bench::now_s();
    fn();
    t.push_back(bench::now_s() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Alternating rounds of the two; each one's best median.
std::pair<double, double> alternate(const std::function<void()>& ours, const std::function<void()>& peer, int reps,
                                    int rounds = 3) {
  double a = 1e30, b = 1e30;
  for (int r = 0; r < rounds; ++r) {
    a = std::min(a, median_per_call(ours, reps));
    b = std::min(b, median_per_call(peer, reps));
  }
  return {a, b};
}

struct MlpImpl : gb::nn::Module {
  MlpImpl() {
    fc1 = register_module("fc1", gb::nn::Linear(784, 512));
    fc2 = register_module("fc2", gb::nn::Linear(512, 512));
    fc3 = register_module("fc3", gb::nn::Linear(512, 10));
  }
  gb::Tensor forward(const gb::Tensor& x) { return fc3(fc2(fc1(x).relu()).relu()); }
  gb::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
GB_MODULE(Mlp);

}  // namespace

int main() {
  dist::init_process_group("mpi");
  const int rank = dist::get_rank(), world = dist::get_world_size();
  gb::set_num_threads(1);
  const std::string extra = "\"ranks\": " + std::to_string(world) + ", \"threads_per_rank\": 1";

  {                                       // a 25 MB bucket
    const int64_t n = int64_t(25) << 18;  // 25 MiB of floats
    gb::Tensor bucket = gb::full({n}, float(rank + 1));
    float* p = bucket.data_ptr<float>();
    auto ours = [&] { dist::all_reduce(bucket); };
    auto direct = [&] { MPI_Allreduce(MPI_IN_PLACE, p, int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
    auto [s, peer] = alternate(ours, direct, 10);
    if (rank == 0)
      bench::emit_vs("distributed", "allreduce_25mb_ms", s * 1e3, "ms", "MPI_Allreduce", peer * 1e3,
                     extra + ", \"gbs_algbw\": " + std::to_string(double(n) * 4 / s / 1e9));
  }

  // a DDP step against the plain step; also with gradient_as_bucket_view (no copy of the averages back into .grad)
  for (auto [batch, as_view] : {std::pair<int64_t, bool>{64, false}, {256, false}, {64, true}, {256, true}}) {
    gb::manual_seed(0);
    Mlp plain;
    Mlp wrapped;
    gb::nn::parallel::DistributedDataParallel<Mlp> ddp(
        wrapped, gb::nn::parallel::DistributedDataParallelOptions().gradient_as_bucket_view(as_view));
    gb::optim::SGD opt_plain(plain->parameters(), gb::optim::SGDOptions(0.01).momentum(0.9));
    gb::optim::SGD opt_ddp(ddp.parameters(), gb::optim::SGDOptions(0.01).momentum(0.9));
    gb::manual_seed(uint64_t(10 + rank));
    auto x = gb::randn({batch, 784});
    auto y = gb::randint(0, 10, {batch});
    namespace F = gb::nn::functional;
    auto step_plain = [&] {
      opt_plain.zero_grad();
      F::cross_entropy(plain(x), y).backward();
      opt_plain.step();
    };
    auto step_ddp = [&] {
      opt_ddp.zero_grad();
      F::cross_entropy(ddp(x), y).backward();
      opt_ddp.step();
    };
    auto [s, peer] = alternate(step_ddp, step_plain, 20);
    if (rank == 0)
      bench::emit_vs("distributed",
                     "ddp_step_ms_mlp784_b" + std::to_string(batch) + "_per_rank" + (as_view ? "_bucket_view" : ""),
                     s * 1e3, "ms", "same step without DDP", peer * 1e3,
                     extra + ", \"overhead\": " + std::to_string(s / peer - 1) +
                         ", \"buckets\": " + std::to_string(ddp.reducer().buckets().size()));
  }
  dist::destroy_process_group();
  return 0;
}
