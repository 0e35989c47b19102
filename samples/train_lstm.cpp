// samples/train_lstm.cpp — an LSTM learns to tell three rhythms apart: each sample is a noisy sine of 1, 2 or 3
// cycles over its 24 steps, at a random phase and amplitude, and the class is how many cycles it has.
//
// A lesson in what a recurrent step is: gb::nn::LSTM (batch first, PyTorch's initialization) reads the sequence, its
// last step's output goes through a Linear to three logits, the loss is cross-entropy and gb::optim::Adam updates
// the weights, after clipping the gradients' norm at 1 (recurrent nets' usual guard against a step that explodes).
// On the cpu each LSTM layer is one op, `lstm_layer`, with one autograd node, LstmLayerBackward0: the
// input projection of every step in one GEMM, then the recurrence (engine/ops/rnn.cpp).
//
//   ./build/samples/train_lstm                          # 400 steps, prints the loss falling and the accuracy
//   ./build/samples/train_lstm --steps 2000 --hidden 64 # options: --steps --batch --hidden --lr --seed --min-accuracy
//   ./build/samples/train_lstm --trace runs/train_lstm.db   # traced; then: glassbox report runs/train_lstm.db
//
// With --min-accuracy A the program exits 1 when the held-out accuracy ends below A (the test suite uses it).
#include <glassbox/glassbox.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sample_cli.h"
#include "sample_run.h"

namespace F = gb::nn::functional;

namespace {

constexpr int64_t kSteps = 24;  // time steps per sequence
constexpr int64_t kClasses = 3;

struct Options {
  int steps = 400;
  int batch = 64;
  int hidden = 32;
  double lr = 0.005;
  uint64_t seed = 0;
  double min_accuracy = -1;
  std::string trace;
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{"train_lstm: an LSTM tells three rhythms apart (see the comment at the top of samples/train_lstm.cpp)"};
  app.add_option("--steps", o.steps, "training steps")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--hidden", o.hidden, "LSTM hidden size")->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "Adam learning rate")->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the data and the weights");
  app.add_option("--min-accuracy", o.min_accuracy, "exit 1 when held-out accuracy ends below this");
  app.add_option("--trace", o.trace, "record the run into this trace file, e.g. runs/train_lstm.db");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

// n sequences (n, kSteps, 1) and their classes (n): class c is a sine of c + 1 cycles, amplitude in [0.5, 1.5), a
// random phase, and noise of 0.3.
std::pair<gb::Tensor, gb::Tensor> rhythms(int64_t n) {
  gb::Tensor y = gb::randint(0, kClasses, {n});
  gb::Tensor cycles = (y + 1).to(gb::kFloat).unsqueeze(1);                   // (n, 1)
  gb::Tensor t = gb::arange(kSteps, gb::kFloat).unsqueeze(0) / double(kSteps);  // (1, kSteps)
  gb::Tensor phase = gb::rand({n, 1}) * (2 * M_PI), amplitude = gb::rand({n, 1}) + 0.5;
  gb::Tensor x = amplitude * gb::sin(cycles * t * (2 * M_PI) + phase) + gb::randn({n, kSteps}) * 0.3;
  return {x.unsqueeze(2), y};
}

struct RhythmNetImpl : gb::nn::Module {
  explicit RhythmNetImpl(int64_t hidden)
      : lstm(register_module("lstm", gb::nn::LSTM(gb::nn::LSTMOptions(1, hidden).batch_first(true)))),
        head(register_module("head", gb::nn::Linear(hidden, kClasses))) {}
  gb::Tensor forward(const gb::Tensor& x) {  // (N, kSteps, 1) -> (N, kClasses)
    return head(std::get<0>(lstm(x)).select(1, -1));
  }
  gb::nn::LSTM lstm;
  gb::nn::Linear head;
};
GB_MODULE(RhythmNet);

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  auto session = sample_run::open_trace(opt.trace);
  gb::manual_seed(opt.seed);
  auto [x_test, y_test] = rhythms(600);
  RhythmNet model(opt.hidden);
  gb::optim::Adam optimizer(model->parameters(), gb::optim::AdamOptions(opt.lr));
  std::printf("glassbox %s — train_lstm: 3 rhythms, sequences of %lld steps, LSTM 1-%d, Adam lr %.3g, %d threads\n",
              gb::version(), (long long)kSteps, opt.hidden, opt.lr, gb::get_num_threads());
  auto t0 = std::chrono::steady_clock::now();
  sample_run::StepClock clock;
  double first_loss = 0, last_loss = 0;
  using gb::trace::SpanKind;
  for (int step = 1; step <= opt.steps; ++step) {
    gb::trace::StepScope traced_step(step);
    clock.start();
    traced_step.set_samples(opt.batch);
    gb::Tensor xb, yb;
    {
      GB_TRACE_SPAN(SpanKind::dataloader, "fetch");
      gb::trace::PhaseScope data_time(gb::trace::Phase::data);
      std::tie(xb, yb) = rhythms(opt.batch);  // a fresh batch every step
    }
    clock.lap("data");
    auto loss = F::cross_entropy(model(xb), yb);
    clock.lap("forward");
    optimizer.zero_grad();
    loss.backward();
    clock.lap("backward");
    gb::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
    clock.lap("optimizer");
    last_loss = loss.item<double>();
    traced_step.set_loss(last_loss);
    traced_step.set_lr(opt.lr);
    if (step == 1) first_loss = last_loss;
    if (step == 1 || step % 50 == 0 || step == opt.steps) std::printf("step %4d  loss %.4f\n", step, last_loss);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (session) session->stop();

  gb::NoGradGuard no_grad;
  const double test_acc = model(x_test).argmax(1).eq(y_test).to(gb::kFloat).mean().item<double>();
  std::printf("loss %.4f -> %.4f in %d steps (%.2f ms/step)\n", first_loss, last_loss, opt.steps,
              1000.0 * seconds / opt.steps);
  std::printf("accuracy: held-out %.1f%%\n", 100 * test_acc);
  clock.print(opt.steps);
  if (!opt.trace.empty())
    std::printf("traced into %s: glassbox report %s (per op, module and autograd node)\n", opt.trace.c_str(),
                opt.trace.c_str());
  if (opt.min_accuracy >= 0 && test_acc < opt.min_accuracy) {
    std::fprintf(stderr, "train_lstm: held-out accuracy %.3f is below the required %.3f\n", test_acc, opt.min_accuracy);
    return 1;
  }
  return 0;
}
