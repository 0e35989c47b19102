// samples/train_ddp.cpp — the flagship MLP (three interleaved spirals) trained data-parallel: one process per rank,
// started by mpirun, DistributedDataParallel averaging the gradients over the ranks during backward.
//
//   mpirun -np 2 ./build/samples/train_ddp                   # as root: mpirun --allow-run-as-root -np 2 ...
//   mpirun -np 2 --oversubscribe ./build/samples/train_ddp   # more ranks than cores
//   GLASSBOX_TRACE=runs/ddp.db mpirun -np 2 ./build/samples/train_ddp   # runs/ddp.rank0.db and runs/ddp.rank1.db
//   ./build/samples/train_ddp                                # without mpirun: a group of one, as train_mlp trains
//
// What DDP does here: each rank builds the model from its own seed, and the wrapper broadcasts rank 0's weights, so
// every rank starts equal. gb::data::DistributedSampler gives each rank its share of every epoch (the same shuffle
// on every rank, seeded by the epoch), a global batch of --batch split across the ranks. Backward all-reduces the
// gradients bucket by bucket (average), so every rank takes the same SGD step: the run learns as a single process on
// the global batch does, and ends with the parameters identical on every rank (checked at the end).
//
// With --min-accuracy A every rank exits 1 when the held-out accuracy ends below A (the test suite uses it).
// --straggler R makes rank R sleep --straggler-ms in every step before its forward (a slow input pipeline, a noisy
// neighbour): the others wait for it in the first all-reduce, and `glassbox report` on the merged trace names it:
//   GLASSBOX_TRACE=runs/ddp.db mpirun -np 2 ./build/samples/train_ddp --straggler 1
//   glassbox merge runs/ddp.rank0.db runs/ddp.rank1.db -o runs/ddp.db && glassbox report runs/ddp.db
// --poison R feeds rank R a batch holding a NaN at step --poison-step: its forward goes non-finite first, the
// all-reduce carries the NaN to every rank, and the merged trace's report names rank R as where it started (the
// run then ends: its parameters are NaN on every rank).
#include <glassbox/glassbox.h>
#include <glassbox/nn/parallel/distributed.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "sample_cli.h"
#include "spirals.h"

namespace F = gb::nn::functional;
namespace dist = gb::distributed;

namespace {

struct Options {
  int epochs = 40;
  int batch = 128;  // global: split across the ranks
  int hidden = 64;
  double lr = 0.1;
  double momentum = 0.9;
  uint64_t seed = 0;
  double min_accuracy = -1;
  int straggler = -1;
  int straggler_ms = 20;
  int poison = -1;
  int poison_step = 5;
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{"train_ddp: the spirals MLP trained data-parallel under mpirun (see samples/train_ddp.cpp)"};
  app.add_option("--epochs", o.epochs, "epochs over the training set")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "global batch size, split across the ranks")->check(sample_cli::kPositive);
  app.add_option("--hidden", o.hidden, "hidden units per layer")->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "SGD learning rate")->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the data, the shuffle and rank 0's weights");
  app.add_option("--min-accuracy", o.min_accuracy, "exit 1 when held-out accuracy ends below this");
  app.add_option("--straggler", o.straggler, "this rank sleeps --straggler-ms in every step (-1: none)");
  app.add_option("--straggler-ms", o.straggler_ms, "how long the straggler sleeps per step")
      ->check(sample_cli::kNonNegative);
  app.add_option("--poison", o.poison, "this rank gets a batch with a NaN at --poison-step (-1: none)");
  app.add_option("--poison-step", o.poison_step, "the step of the poisoned batch")->check(sample_cli::kPositive);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  try {
    dist::init_process_group("mpi");
  } catch (const gb::Error& e) {
    std::fprintf(stderr, "train_ddp: %s\n", e.what());
    return 2;
  }
  const int rank = dist::get_rank(), world = dist::get_world_size();
  if (opt.batch % world != 0) {
    if (rank == 0) std::fprintf(stderr, "train_ddp: --batch %d does not split over %d ranks\n", opt.batch, world);
    return 2;
  }

  // The same data on every rank (one seed): 3 arms x 400 points, split at random 80/20 into train and held-out sets.
  const sample_data::SpiralSplit data = sample_data::spiral_split(opt.seed + 1);
  const int64_t n_train = data.n_train;
  const gb::Tensor &x_train = data.x_train, &y_train = data.y_train, &x_test = data.x_test, &y_test = data.y_test;

  // Each rank its own initial weights: DDP's broadcast makes them rank 0's.
  gb::manual_seed(opt.seed + uint64_t(rank));
  const int64_t H = opt.hidden;
  gb::nn::Sequential model(gb::nn::Linear(2, H), gb::nn::ReLU(), gb::nn::Linear(H, H), gb::nn::ReLU(),
                           gb::nn::Linear(H, 3));
  gb::nn::parallel::DistributedDataParallel<gb::nn::Sequential> ddp(model);
  gb::optim::SGD optimizer(ddp.parameters(), gb::optim::SGDOptions(opt.lr).momentum(opt.momentum));
  gb::data::DistributedSampler sampler(n_train, world, rank, /*shuffle=*/true, opt.seed);
  const int64_t local_batch = opt.batch / world;

  if (rank == 0)
    std::printf(
        "glassbox %s — train_ddp: %d ranks (%s), global batch %d (%lld per rank), %lld train / %lld "
        "held-out points, MLP 2-%lld-%lld-3, SGD lr %.3g momentum %.2g, %zu gradient buckets\n",
        gb::version(), world, dist::get_backend().c_str(), opt.batch, (long long)local_batch, (long long)n_train,
        (long long)x_test.size(0), (long long)H, (long long)H, opt.lr, opt.momentum, ddp.reducer().buckets().size());
  auto t0 = std::chrono::steady_clock::now();
  gb::Generator unused_gen(0);  // DistributedSampler seeds its own shuffle (seed + epoch)
  int step = 0;
  double loss_value = 0;
  for (int epoch = 0; epoch < opt.epochs; ++epoch) {
    sampler.set_epoch(epoch);
    const std::vector<int64_t> mine = sampler.indices(unused_gen);
    for (size_t b = 0; b + size_t(local_batch) <= mine.size(); b += size_t(local_batch)) {
      gb::trace::StepScope traced_step(++step);
      if (rank == opt.straggler) std::this_thread::sleep_for(std::chrono::milliseconds(opt.straggler_ms));
      std::vector<int64_t> ids(mine.begin() + long(b), mine.begin() + long(b) + local_batch);
      auto idx = gb::tensor(gb::ArrayRef<int64_t>(ids));
      auto x = x_train.index_select(0, idx);
      if (rank == opt.poison && step == opt.poison_step) x.index_put_({0, 0}, std::nanf(""));
      auto loss = F::cross_entropy(ddp(x), y_train.index_select(0, idx));
      optimizer.zero_grad();
      loss.backward();  // the gradients arrive averaged over the ranks
      optimizer.step();
      loss_value = loss.item<double>();
      traced_step.set_loss(loss_value);
      if (opt.poison >= 0 && step == opt.poison_step + 1) break;  // one step after: the NaN has reached every rank
    }
    if (opt.poison >= 0 && step >= opt.poison_step + 1) break;
    if (epoch == 0 || (epoch + 1) % 10 == 0) {
      dist::barrier();  // every rank has finished the epoch when rank 0 reports it
      if (rank == 0) std::printf("epoch %3d  step %4d  rank 0's loss %.4f\n", epoch + 1, step, loss_value);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.poison >= 0) {
    if (rank == 0)
      std::printf("rank %d got a NaN in its batch at step %d; after the all-reduce rank 0's loss is %g. Merge the "
                  "ranks' traces and `glassbox report` names rank %d.\n",
                  opt.poison, opt.poison_step, loss_value, opt.poison);
    dist::destroy_process_group();
    return 0;
  }

  gb::NoGradGuard no_grad;
  auto accuracy = [&](const gb::Tensor& x, const gb::Tensor& y) {
    return model->forward(x).argmax(1).eq(y).to(gb::kFloat).mean().item<double>();
  };
  const double test_acc = accuracy(x_test, y_test);
  // every rank took the same steps: the largest difference from rank 0's parameters, over all ranks
  std::vector<gb::Tensor> flat;
  for (const auto& p : ddp.parameters()) flat.push_back(p.detach().reshape({-1}));
  auto mine = gb::cat(flat), rank0 = mine.clone();
  dist::broadcast(rank0, 0);
  auto diff = (mine - rank0).abs().max();
  dist::all_reduce(diff, dist::ReduceOp::MAX);
  if (rank == 0) {
    std::printf("%d steps in %.2f s (%.2f ms/step); held-out accuracy %.1f%%\n", step, seconds, 1000.0 * seconds / step,
                100 * test_acc);
    std::printf("parameters identical on all %d ranks: %s (largest difference %g)\n", world,
                diff.item<float>() == 0.0f ? "yes" : "NO", double(diff.item<float>()));
  }
  dist::destroy_process_group();
  if (diff.item<float>() != 0.0f) return 1;
  if (opt.min_accuracy >= 0 && test_acc < opt.min_accuracy) {
    std::fprintf(stderr, "train_ddp: rank %d: held-out accuracy %.3f is below the required %.3f\n", rank, test_acc,
                 opt.min_accuracy);
    return 1;
  }
  return 0;
}
