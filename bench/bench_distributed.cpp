// bench/bench_distributed.cpp — data-parallel costs, run under mpirun (`mpirun -np 2 build/bench/bench_distributed`,
// as root with --allow-run-as-root; `make bench` runs it with 2 ranks). Rank 0 prints the JSON lines.
//   allreduce_25mb   gb::distributed::all_reduce of a 25 MB float32 bucket (the DDP default), through the group's
//                    communication thread, against MPI_Allreduce called directly on the same buffer (target <= 1.5)
//   ddp_step         one training step of an MLP 784-512-512-10 on 64 and 256 samples per rank under DDP, against
//                    the same step without DDP run at the same time on every rank (so both share the cores alike;
//                    target overhead <= 15%); _bucket_view: with gradient_as_bucket_view, the gradients zeroed in
//                    place (set to none, the next backward makes new ones, copied into the bucket once more)
//   ddp_overhead_ms  the time DDP adds to the step (DDP step - plain step) against the time libtorch's own DDP
//                    machinery adds to its step (c10d::Reducer, buckets assigned as torch.nn.parallel.
//                    DistributedDataParallel assigns them) over the same MPI (libtorch_mpi_group.h), on the same model
//                    with the same weights and batches; both overheads as fractions in the line
//   ddp_step_vs_libtorch  glassbox's DDP step against libtorch's
// Each rank runs one engine thread: two ranks share this machine's two cores. Every timed loop has a fixed count
// (a collective needs every rank to run the same number), the two candidates alternate over rounds, and each keeps
// its best median.
#include <glassbox/glassbox.h>
#include <glassbox/nn/parallel/distributed.h>
#include <mpi.h>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.h"
#include "libtorch_mpi_group.h"

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

// Alternating rounds of the candidates; each one's best median.
std::vector<double> alternate(const std::vector<std::function<void()>>& fns, int reps, int rounds = 3) {
  std::vector<double> best(fns.size(), 1e30);
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < fns.size(); ++i) best[i] = std::min(best[i], median_per_call(fns[i], reps));
  return best;
}

torch::Tensor to_torch(const gb::Tensor& x) {
  gb::Tensor c = x.contiguous();
  if (c.scalar_type() == gb::kInt64)
    return torch::from_blob(c.data_ptr<int64_t>(), c.sizes().vec(), torch::kLong).clone();
  return torch::from_blob(c.data_ptr<float>(), c.sizes().vec(), torch::kFloat).clone();
}

// libtorch's DDP as torch.nn.parallel.DistributedDataParallel drives it from Python: buckets assigned by size (the
// first 1 MB, then bucket_cap 25 MB) over the parameters, reversed; prepare_for_forward / prepare_for_backward
// around each forward (no unused parameters); the buckets rebuilt once in gradient order after the first backward.
struct TorchDdp {
  TorchDdp(const std::vector<torch::Tensor>& params, const c10::intrusive_ptr<c10d::ProcessGroup>& group,
           bool as_view) {
    const size_t cap = size_t(25) << 20;
    auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(params, {c10d::kDefaultFirstBucketBytes, cap},
                                                                     std::vector<bool>(params.size(), false));
    std::reverse(buckets.begin(), buckets.end());
    std::reverse(limits.begin(), limits.end());
    reducer = std::make_unique<c10d::Reducer>(params, buckets, limits, group, std::vector<bool>(params.size(), false),
                                              int64_t(cap), false, as_view, std::unordered_map<size_t, std::string>{},
                                              int64_t(c10d::kDefaultFirstBucketBytes));
  }
  void before_forward() {
    reducer->rebuild_buckets();
    reducer->prepare_for_forward();
  }
  void before_backward() { reducer->prepare_for_backward({}); }
  std::unique_ptr<c10d::Reducer> reducer;
};

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
  torch::set_num_threads(1);
  auto peer_group = bench::MpiPeerGroup::create();
  const std::string extra = "\"ranks\": " + std::to_string(world) + ", \"threads_per_rank\": 1";

  {                                       // a 25 MB bucket
    const int64_t n = int64_t(25) << 18;  // 25 MiB of floats
    gb::Tensor bucket = gb::full({n}, float(rank + 1));
    float* p = bucket.data_ptr<float>();
    auto ours = [&] { dist::all_reduce(bucket); };
    auto direct = [&] { MPI_Allreduce(MPI_IN_PLACE, p, int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
    const std::vector<double> t = alternate({ours, direct}, 10);
    const double s = t[0], peer = t[1];
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
      opt_ddp.zero_grad(/*set_to_none=*/!as_view);  // with bucket views zeroed in place, so they stay views
      F::cross_entropy(ddp(x), y).backward();
      opt_ddp.step();
    };
    // libtorch: the same model, weights and batch, plain and under its DDP over the same MPI
    auto torch_mlp = [&] {
      auto m = torch::nn::Sequential(torch::nn::Linear(784, 512), torch::nn::ReLU(), torch::nn::Linear(512, 512),
                                     torch::nn::ReLU(), torch::nn::Linear(512, 10));
      torch::NoGradGuard no_grad;
      const std::vector<gb::Tensor> from = plain->parameters();
      std::vector<torch::Tensor> to = m->parameters();
      for (size_t i = 0; i < to.size(); ++i) to[i].copy_(to_torch(from[i]));
      return m;
    };
    auto t_plain = torch_mlp(), t_wrapped = torch_mlp();
    TorchDdp t_ddp(t_wrapped->parameters(), peer_group, as_view);
    torch::optim::SGD t_opt_plain(t_plain->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    torch::optim::SGD t_opt_ddp(t_wrapped->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    const torch::Tensor tx = to_torch(x), ty = to_torch(y);
    auto t_step_plain = [&] {
      t_opt_plain.zero_grad();
      torch::nn::functional::cross_entropy(t_plain->forward(tx), ty).backward();
      t_opt_plain.step();
    };
    auto t_step_ddp = [&] {
      // Python's Optimizer.zero_grad: libtorch 1.13's C++ one detach_()es each .grad, which the bucket views refuse
      for (torch::Tensor& p : t_wrapped->parameters())
        if (p.grad().defined()) p.mutable_grad().zero_();
      t_ddp.before_forward();
      torch::Tensor loss = torch::nn::functional::cross_entropy(t_wrapped->forward(tx), ty);
      t_ddp.before_backward();
      loss.backward();
      t_opt_ddp.step();
    };
    const std::vector<double> t = alternate({step_ddp, step_plain, t_step_ddp, t_step_plain}, 20);
    const double over = t[0] / t[1] - 1, t_over = t[2] / t[3] - 1;
    const std::string name = "mlp784_b" + std::to_string(batch) + "_per_rank" + (as_view ? "_bucket_view" : "");
    if (rank == 0) {
      bench::emit_vs("distributed", "ddp_step_ms_" + name, t[0] * 1e3, "ms", "same step without DDP", t[1] * 1e3,
                     extra + ", \"overhead\": " + std::to_string(over) +
                         ", \"buckets\": " + std::to_string(ddp.reducer().buckets().size()));
      bench::emit_vs("distributed", "ddp_overhead_ms_" + name, (t[0] - t[1]) * 1e3, "ms",
                     "libtorch DDP (c10d::Reducer) on the same MPI", (t[2] - t[3]) * 1e3,
                     extra + ", \"overhead\": " + std::to_string(over) + ", \"libtorch_overhead\": " +
                         std::to_string(t_over) + ", \"libtorch_ddp_ms\": " + std::to_string(t[2] * 1e3) +
                         ", \"libtorch_plain_ms\": " + std::to_string(t[3] * 1e3));
      bench::emit("distributed", "ddp_step_vs_libtorch_ms_" + name, t[0] * 1e3, "ms", t[2] * 1e3, extra);
    }
  }
  dist::destroy_process_group();
  return 0;
}
