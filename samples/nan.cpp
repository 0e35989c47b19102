// samples/nan.cpp — a training run that goes NaN, and the trace that names the op and module that made it.
//
// The planted bug is a classic: the classifier's head computes log(softmax(logits)) in two ops. Once the learning
// rate has pushed the logits apart, softmax rounds the smallest probabilities to exactly 0 in float32, log(0) is
// -inf, the loss becomes inf and the next step's gradients NaN. With GLASSBOX_TRACE (or --trace) the run's monitor
// writes, from this one run, the op that made the first non-finite value (`log`, in module `head`, at its step,
// with its input shapes), the non-finite loss that followed, and the graph of that step; `glassbox report` tells it
// first. The fix (--fixed) is log_softmax, which never takes the log of a rounded probability.
//
//   ./build/samples/nan --trace runs/nan.db && ./build/tools/glassbox report runs/nan.db
//   ./build/samples/nan --fixed --lr 0.1             # log_softmax and a sane learning rate: it learns, no alarm
//   options: --steps --lr --batch --hidden --seed --trace PATH --fixed
//
// Exit status: 0 when the run went non-finite as planted (or, with --fixed, stayed finite), 1 otherwise.
#include <glassbox/glassbox.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sample_cli.h"
#include "sample_run.h"

namespace F = gb::nn::functional;

namespace {

struct Options {
  int steps = 300;
  int batch = 64;
  int hidden = 32;
  double lr = 2.0;
  uint64_t seed = 0;
  std::string trace;
  bool fixed = false;
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{"nan: a training run that goes NaN, and the trace that names the op that made it (see the comment at "
               "the top of samples/nan.cpp)"};
  app.add_option("--steps", o.steps, "at most this many training steps")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--hidden", o.hidden, "hidden units")->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "SGD learning rate (too high on purpose)")->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the data and the weights");
  app.add_option("--trace", o.trace, "record the run into this trace file (or set GLASSBOX_TRACE)");
  app.add_flag("--fixed", o.fixed, "use log_softmax instead of log(softmax(...)): the run stays finite");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

// The classifier's head: a linear layer, then log-probabilities — in two ops (the bug) or in one (the fix).
struct HeadImpl : gb::nn::Module {
  HeadImpl(int64_t in, int64_t classes, bool fixed) : fixed(fixed) {
    fc = register_module("fc", gb::nn::Linear(in, classes));
  }
  gb::Tensor forward(const gb::Tensor& x) {
    gb::Tensor logits = fc(x);
    return fixed ? gb::log_softmax(logits, 1) : gb::log(gb::softmax(logits, 1));
  }
  gb::nn::Linear fc{nullptr};
  bool fixed;
};
GB_MODULE(Head);

struct NetImpl : gb::nn::Module {
  NetImpl(int64_t hidden, bool fixed) {
    body = register_module("body", gb::nn::Sequential(gb::nn::Linear(2, hidden), gb::nn::ReLU(),
                                                      gb::nn::Linear(hidden, hidden), gb::nn::ReLU()));
    head = register_module("head", Head(hidden, 3, fixed));
  }
  gb::Tensor forward(const gb::Tensor& x) { return head(body(x)); }
  gb::nn::Sequential body{nullptr};
  Head head{nullptr};
};
GB_MODULE(Net);

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  auto session = sample_run::open_trace(opt.trace);
  gb::manual_seed(opt.seed);

  // three Gaussian blobs in 2-D: x (N,2), y (N) = blob
  const int64_t n = 3 * 200;
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = i % 3;
  gb::Tensor y = gb::tensor(gb::ArrayRef<int64_t>(labels));
  gb::Tensor centers = gb::tensor({0.0f, 2.0f, 2.0f, -1.0f, -2.0f, -1.0f}).view({3, 2});
  gb::Tensor x = centers.index_select(0, y) + 0.5 * gb::randn({n, 2});

  Net net(opt.hidden, opt.fixed);
  gb::optim::SGD optimizer(net->parameters(), gb::optim::SGDOptions(opt.lr).momentum(0.9));
  std::printf("glassbox %s — nan: 3 blobs, MLP 2-%d-%d-3, head %s, SGD lr %.3g momentum 0.9%s\n", gb::version(),
              opt.hidden, opt.hidden, opt.fixed ? "log_softmax (fixed)" : "log(softmax(...)) (the bug)", opt.lr,
              session && session->active() ? (", traced into " + opt.trace).c_str() : "");

  int went_nonfinite = 0;
  double loss_value = 0;
  for (int step = 0; step < opt.steps; ++step) {
    gb::Tensor idx = gb::randint(0, n, {opt.batch});
    gb::Tensor loss = F::nll_loss(net(x.index_select(0, idx)), y.index_select(0, idx));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_value = loss.item<double>();
    if (step % 25 == 0) std::printf("step %4d  loss %.4f\n", step, loss_value);
    if (!std::isfinite(loss_value)) {
      went_nonfinite = step;
      std::printf("step %4d  loss %g: the run went non-finite\n", step, loss_value);
      break;
    }
  }
  if (session) session->stop();

  if (opt.fixed) {
    std::printf("final loss %.4f: log_softmax kept every log-probability finite%s\n", loss_value,
                opt.lr > 0.5 ? " (a trace of this run still warns that the learning rate is too high: try --lr 0.1)"
                             : "");
    return std::isfinite(loss_value) ? 0 : 1;
  }
  if (!went_nonfinite && std::isfinite(loss_value)) {
    std::printf("the run stayed finite for %d steps: raise --lr or --steps to see the bug\n", opt.steps);
    return 1;
  }
  if (!opt.trace.empty())
    std::printf("which op made it, in which module, at which step: glassbox report %s\n", opt.trace.c_str());
  else
    std::printf("run it again with --trace runs/nan.db to find which op made it, in which module, at which step\n");
  return 0;
}
