// samples/train_mlp.cpp — the flagship sample: an MLP learns three interleaved spirals.
//
// A lesson in what a training step is: the data is generated from a seed, the model is a gb::nn::Sequential of two
// hidden layers of ReLU units (PyTorch's default initialization), the loss is cross-entropy, gradients come from
// autograd, and gb::optim::SGD with momentum updates the weights.
//
//   ./build/samples/train_mlp                        # 300 steps, prints the loss falling and the accuracy
//   ./build/samples/train_mlp --steps 600 --lr 0.3   # options: --steps --batch --hidden --lr --seed --min-accuracy
//   ./build/samples/train_mlp --trace runs/train_mlp.db   # the same run, traced; then: glassbox report runs/...
//   ./build/samples/train_mlp --device cuda          # on the GPU (model, batches, loss and optimizer on cuda:0)
//   (GLASSBOX_TRACE=mlp.db ./build/samples/train_mlp traces it too, with no option)
//
// Traced, each step is a span with the loss and learning rate in the steps table; inside it the data fetch, one
// module span per layer call (named by its path: "0", "1", ... in the Sequential) with its ops, the backward (its
// phases and every autograd node it ran) and the optimizer step ("SGD.step").
//
// It ends by saying where the step time went (data, forward, backward, optimizer), measured by its own clock.
//
// With --min-accuracy A the program exits 1 when the held-out accuracy ends below A (the test suite uses it).
#include <glassbox/glassbox.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sample_cli.h"
#include "sample_run.h"
#include "spirals.h"

namespace F = gb::nn::functional;

namespace {

struct Options {
  int steps = 300;
  int batch = 128;
  int hidden = 64;
  double lr = 0.1;
  double momentum = 0.9;
  uint64_t seed = 0;
  double min_accuracy = -1;
  std::string trace;
  std::string device = "cpu";
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{
      "train_mlp: an MLP learns three interleaved spirals (see the comment at the top of "
      "samples/train_mlp.cpp)"};
  app.add_option("--steps", o.steps, "training steps")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--hidden", o.hidden, "hidden units per layer")->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "SGD learning rate")->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the data and the weights");
  app.add_option("--min-accuracy", o.min_accuracy, "exit 1 when held-out accuracy ends below this");
  app.add_option("--trace", o.trace, "record the run into this trace file, e.g. runs/train_mlp.db");
  app.add_option("--device", o.device,
                 "where the model trains: cpu or cuda[:N] (batches are drawn on the cpu and moved)");
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
  auto session = sample_run::open_trace(opt.trace);
  gb::manual_seed(opt.seed);
  // 3 arms x 400 points; a random 80/20 split into train and held-out sets (the same on every run of a seed).
  const sample_data::SpiralSplit data = sample_data::spiral_split(opt.seed + 1);
  const int64_t n_train = data.n_train;
  const gb::Tensor &x_train = data.x_train, &y_train = data.y_train, &x_test = data.x_test, &y_test = data.y_test;

  const int64_t H = opt.hidden;
  gb::nn::Sequential model(gb::nn::Linear(2, H), gb::nn::ReLU(), gb::nn::Linear(H, H), gb::nn::ReLU(),
                           gb::nn::Linear(H, 3));  // x (N,2) -> logits (N,3)
  gb::Device device;
  try {
    device = gb::Device(opt.device);
    GB_CHECK(!device.is_meta(), "a meta run has no values to train on; samples/plan_memory plans memory on meta");
    model->to(device);  // before the optimizer takes the parameters, as in PyTorch
  } catch (const gb::Error& e) {
    std::fprintf(stderr, "train_mlp: --device %s: %s\n", opt.device.c_str(), e.what());
    return 2;
  }
  gb::optim::SGD optimizer(model->parameters(), gb::optim::SGDOptions(opt.lr).momentum(opt.momentum));
  // On cuda the laps wait for the device, so each phase's time is its kernels' and not only their launches.
  auto lap = [&](sample_run::StepClock& c, const char* phase) {
    if (device.is_cuda()) gb::cuda::synchronize();
    c.lap(phase);
  };

  std::printf(
      "glassbox %s — train_mlp: 3 spirals, %lld train / %lld held-out points, MLP 2-%lld-%lld-3, SGD lr %.3g "
      "momentum %.2g, %d threads, on %s\n",
      gb::version(), (long long)n_train, (long long)x_test.size(0), (long long)H, (long long)H, opt.lr, opt.momentum,
      gb::get_num_threads(), device.str().c_str());
  auto t0 = std::chrono::steady_clock::now();
  sample_run::StepClock clock;
  double first_loss = 0, last_loss = 0;
  using gb::trace::SpanKind;
  for (int step = 1; step <= opt.steps; ++step) {
    gb::trace::StepScope traced_step(step);
    clock.start();
    traced_step.set_samples(opt.batch);  // the trace's throughput (steps.samples)
    gb::Tensor xb, yb;
    {
      GB_TRACE_SPAN(SpanKind::dataloader, "fetch");
      gb::trace::PhaseScope data_time(gb::trace::Phase::data);  // the trace's data_ns (a DataLoader counts its own)
      auto idx = gb::randint(0, n_train, {opt.batch});
      xb = x_train.index_select(0, idx).to(device);
      yb = y_train.index_select(0, idx).to(device);
    }
    lap(clock, "data");
    auto loss = F::cross_entropy(model->forward(xb), yb);
    lap(clock, "forward");
    optimizer.zero_grad();  // set_to_none=true, PyTorch 2's default
    loss.backward();
    lap(clock, "backward");
    optimizer.step();
    lap(clock, "optimizer");
    last_loss = loss.item<double>();
    traced_step.set_loss(last_loss);
    traced_step.set_lr(opt.lr);
    if (step == 1) first_loss = last_loss;
    if (step == 1 || step % 25 == 0 || step == opt.steps) std::printf("step %4d  loss %.4f\n", step, last_loss);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (session) session->stop();

  gb::NoGradGuard no_grad;
  auto accuracy = [&](const gb::Tensor& x, const gb::Tensor& y) {
    return model->forward(x.to(device)).cpu().argmax(1).eq(y).to(gb::kFloat).mean().item<double>();
  };
  double train_acc = accuracy(x_train, y_train), test_acc = accuracy(x_test, y_test);
  std::printf("loss %.4f -> %.4f in %d steps (%.1f ms/step)\n", first_loss, last_loss, opt.steps,
              1000.0 * seconds / opt.steps);
  std::printf("accuracy: train %.1f%%, held-out %.1f%%\n", 100 * train_acc, 100 * test_acc);
  clock.print(opt.steps);
  if (!opt.trace.empty())
    std::printf("traced into %s: glassbox report %s (per op, module and autograd node)\n", opt.trace.c_str(),
                opt.trace.c_str());
  if (opt.min_accuracy >= 0 && test_acc < opt.min_accuracy) {
    std::fprintf(stderr, "train_mlp: held-out accuracy %.3f is below the required %.3f\n", test_acc, opt.min_accuracy);
    return 1;
  }
  return 0;
}
