// samples/long_run.cpp — a long training run, traced from its first step to its last, that goes non-finite late.
//
// Written as plain user code, with nothing of glassbox's tracing API in it: trace it with GLASSBOX_TRACE=run.db
// (or --trace). An MLP learns the spirals with SGD for tens of thousands of steps. Its first layer standardises each
// batch by the batch's own statistics, (x - mean) / std, without an epsilon: fine for every batch of distinct
// samples, until --fault-at, where a corrupt shard repeats one sample across the whole batch: its std is 0, the
// division makes Inf (and NaN where 0 / 0), and the loss goes NaN. The trace keeps:
//   - the summary of every step (loss, lr, where the step time went, samples/s, the gradient norm, peak memory),
//     however long the run: `glassbox report` and the viewer's Run panel show the whole run;
//   - full detail (every op, autograd node and allocation) in the first steps, a window every 1000 steps, and the
//     flight recorder's last steps before the fault, written when the first anomaly fired: `glassbox report` names
//     the op and module that made the first non-finite value (div in module norm), with its op shapes, as for a short
//     run;
//   - and stays small: about 1 KB per step after the first steps (full detail would be ~6 KB per step).
// The run stops a few steps after it went non-finite (a NaN run wastes the rest), as a watchful user would.
//
//   GLASSBOX_TRACE=runs/long_run.db ./build/samples/long_run && ./build/tools/glassbox report runs/long_run.db
//   ./build/samples/long_run --steps 100000 --fault-at 95000 --trace runs/long_run.db
//   options: --steps --fault-at (0: no fault) --batch --hidden --lr --seed --trace PATH
//
// Exit status: 0 when the run went non-finite at the planted step (or, without a fault, stayed finite and learned),
// 1 otherwise.
#include <glassbox/glassbox.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sample_cli.h"
#include "sample_run.h"
#include "spirals.h"

namespace F = gb::nn::functional;

namespace {

struct Options {
  int64_t steps = 30000;
  int64_t fault_at = 28000;
  int64_t batch = 32;
  int64_t hidden = 32;
  double lr = 0.1;
  uint64_t seed = 0;
  std::string trace;
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{"long_run: a long training run that goes non-finite late (see the comment at the top of "
               "samples/long_run.cpp)"};
  app.add_option("--steps", o.steps, "training steps")->check(sample_cli::kPositive);
  app.add_option("--fault-at", o.fault_at, "the step whose batch is corrupt (0: none)")->check(CLI::NonNegativeNumber);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--hidden", o.hidden, "hidden units per layer")->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "SGD learning rate")->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the data and the weights");
  app.add_option("--trace", o.trace, "record the run into this trace file (or set GLASSBOX_TRACE)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (o.fault_at >= o.steps) {
    std::fprintf(stderr, "long_run: --fault-at %lld is not before --steps %lld; pick a step inside the run\n",
                 (long long)o.fault_at, (long long)o.steps);
    std::exit(2);
  }
  return o;
}

// Standardises a batch (N, D) by its own mean and standard deviation per feature, with no epsilon: the planted
// weakness a batch of N copies of one sample turns into 0 / 0.
struct StandardizeImpl : gb::nn::Module {
  gb::Tensor forward(const gb::Tensor& x) { return (x - x.mean({0}, true)) / x.std({0}, true, true); }
};
GB_MODULE(Standardize);

struct NetImpl : gb::nn::Module {
  explicit NetImpl(int64_t hidden) {
    norm = register_module("norm", Standardize());
    body = register_module("body", gb::nn::Sequential(gb::nn::Linear(2, hidden), gb::nn::ReLU(),
                                                      gb::nn::Linear(hidden, hidden), gb::nn::ReLU()));
    head = register_module("head", gb::nn::Linear(hidden, 3));
  }
  gb::Tensor forward(const gb::Tensor& x) { return head(body(norm(x))); }
  Standardize norm{nullptr};
  gb::nn::Sequential body{nullptr};
  gb::nn::Linear head{nullptr};
};
GB_MODULE(Net);

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  auto session = sample_run::open_trace(opt.trace);
  gb::manual_seed(opt.seed);
  const sample_data::SpiralSplit data = sample_data::spiral_split(opt.seed);

  Net net(opt.hidden);
  gb::optim::SGD optimizer(net->parameters(), gb::optim::SGDOptions(opt.lr).momentum(0.9));
  std::printf("glassbox %s — long_run: spirals, MLP 2-%lld-%lld-3, SGD lr %.3g, %lld steps, corrupt batch at step "
              "%lld\n",
              gb::version(), (long long)opt.hidden, (long long)opt.hidden, opt.lr, (long long)opt.steps,
              (long long)opt.fault_at);

  const auto t0 = std::chrono::steady_clock::now();
  int64_t went_nonfinite = -1, step = 0;
  double loss_value = 0;
  for (; step < opt.steps; ++step) {
    gb::Tensor idx = gb::randint(0, data.n_train, {opt.batch});
    if (opt.fault_at > 0 && step == opt.fault_at) idx = gb::full({opt.batch}, 7, gb::kLong);  // one sample, repeated
    gb::Tensor loss = F::cross_entropy(net(data.x_train.index_select(0, idx)), data.y_train.index_select(0, idx));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_value = loss.item<double>();
    if (step % 5000 == 0) std::printf("step %6lld  loss %.4f\n", (long long)step, loss_value);
    if (went_nonfinite < 0 && !std::isfinite(loss_value)) {
      went_nonfinite = step;
      std::printf("step %6lld  loss %g: the run went non-finite\n", (long long)step, loss_value);
    }
    if (went_nonfinite >= 0 && step >= went_nonfinite + 10) break;  // nothing more to learn from a NaN run
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%lld steps in %.1f s (%.3f ms/step)\n", (long long)std::min(step + 1, opt.steps), seconds,
              1000.0 * seconds / double(std::min(step + 1, opt.steps)));
  if (session) session->stop();

  if (opt.fault_at == 0) {
    gb::NoGradGuard no_grad;
    // the held-out set standardised by the training set's statistics (as a batch of the training data would be)
    const gb::Tensor mean = data.x_train.mean({0}, true), sd = data.x_train.std({0}, true, true);
    const gb::Tensor logits = net->head(net->body((data.x_test - mean) / sd));
    const double accuracy = logits.argmax(1).eq(data.y_test).to(gb::kFloat).mean().item<double>();
    std::printf("held-out accuracy %.1f%%\n", 100 * accuracy);
    return std::isfinite(loss_value) && accuracy > 0.9 ? 0 : 1;
  }
  if (went_nonfinite != opt.fault_at) {
    std::printf("the run went non-finite at step %lld, not at the corrupt batch's step %lld\n",
                (long long)went_nonfinite, (long long)opt.fault_at);
    return 1;
  }
  const char* trace = opt.trace.empty() ? std::getenv("GLASSBOX_TRACE") : opt.trace.c_str();
  if (trace && *trace)
    std::printf("the whole run and the op that made the first Inf: glassbox report %s\n", trace);
  else
    std::printf("run it again with GLASSBOX_TRACE=runs/long_run.db to find which op made it, and see the run\n");
  return 0;
}
