// samples/train_transformer.cpp — a small Transformer encoder learns to reverse sequences.
//
// A lesson in what a modern training loop is made of, each piece PyTorch's: token and learned position embeddings,
// pre-norm TransformerEncoderLayers (self-attention + feed-forward), AdamW with a linear warmup then cosine decay
// (SequentialLR), gradient clipping, optionally bf16 autocast with a GradScaler and activation checkpointing, and a
// training checkpoint saved atomically at the end (safetensors). The task: read 8 digits, write them backwards —
// position i must attend to position 7 - i, which the attention learns from the position embeddings.
//
//   ./build/samples/train_transformer                      # 300 steps; prints loss, lr and held-out accuracy
//   ./build/samples/train_transformer --amp --checkpoint   # bf16 autocast + GradScaler, activations recomputed
//   ./build/samples/train_transformer --stop-at 100 --save run.safetensors   # stop early with a training checkpoint
//   ./build/samples/train_transformer --resume run.safetensors               # (model, AdamW, scheduler, scaler, RNG)
//   options: --steps N --batch N --dim N --layers N --lr X --seed N --min-accuracy A --amp --checkpoint
//            --stop-at N --save PATH --resume PATH
//   ./build/samples/train_transformer --trace runs/train_transformer.db && glassbox report runs/train_transformer.db
//   (GLASSBOX_TRACE=tf.db traces it too, with no option)
//
// Traced, every module call is a span named by its path (layers.0.self_attn, layers.1.linear2, ...) with the ops
// inside it, and every allocation carries the module that made it.
//
// It ends by saying where the step time went (data, forward, backward, optimizer: unscale, clipping, AdamW, the
// schedule), measured by its own clock.
//
// With --min-accuracy A the program exits 1 when held-out token accuracy ends below A (the test suite uses it).
#include <glassbox/glassbox.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sample_cli.h"
#include "sample_run.h"

namespace nn = gb::nn;
namespace F = gb::nn::functional;

namespace {

struct Options {
  int steps = 300;
  int batch = 64;
  int dim = 64;
  int layers = 2;
  double lr = 3e-3;
  uint64_t seed = 0;
  double min_accuracy = -1;
  bool amp = false;
  bool checkpoint = false;
  int stop_at = -1;
  std::string save, resume, trace;
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{"train_transformer: a Transformer encoder learns to reverse digit strings (see the comment at the top "
               "of samples/train_transformer.cpp)"};
  app.add_option("--steps", o.steps, "training steps (the schedule's length)")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--dim", o.dim, "model width, a multiple of 4 (4 heads)")
      ->check(sample_cli::kPositive)
      ->check([](const std::string& v) { return std::stoi(v) % 4 == 0 ? "" : "must be a multiple of 4 (4 heads)"; });
  app.add_option("--layers", o.layers, "encoder layers")->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "AdamW's peak learning rate")->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the data and the weights");
  app.add_option("--min-accuracy", o.min_accuracy, "exit 1 when held-out token accuracy ends below this");
  app.add_flag("--amp", o.amp, "bf16 autocast with a GradScaler");
  app.add_flag("--checkpoint", o.checkpoint, "activation checkpointing of every encoder layer");
  app.add_option("--stop-at", o.stop_at, "stop after this step (with --save: a checkpoint to resume from)")
      ->check(sample_cli::kNonNegative);
  app.add_option("--trace", o.trace, "record the run into this trace file, e.g. runs/train_transformer.db");
  app.add_option("--save", o.save, "write a training checkpoint here at the end");
  app.add_option("--resume", o.resume, "continue from this training checkpoint")->check(CLI::ExistingFile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

constexpr int64_t kVocab = 10, kLen = 8;

// A batch of random digit strings and their reversals: x (B, L) int64, y (B, L) int64.
std::pair<gb::Tensor, gb::Tensor> batch_of(int64_t b) {
  auto x = gb::randint(0, kVocab, {b, kLen});
  auto rev = gb::arange(kLen - 1, -1, -1, gb::TensorOptions().dtype(gb::kLong));
  return {x, x.index_select(1, rev)};
}

struct ReverserImpl : nn::Module {
  ReverserImpl(int64_t dim, int64_t layers, bool checkpoint) : checkpoint_(checkpoint) {
    tokens = register_module("tokens", nn::Embedding(kVocab, dim));
    positions = register_parameter("positions", gb::randn({kLen, dim}));  // N(0, 1), as the token embedding
    for (int64_t i = 0; i < layers; ++i)
      blocks->push_back(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(dim, 4)
                                                        .dim_feedforward(2 * dim)
                                                        .dropout(0.0)
                                                        .batch_first(true)
                                                        .norm_first(true)));
    register_module("layers", blocks);
    norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({dim})));
    head = register_module("head", nn::Linear(dim, kVocab));
  }
  gb::Tensor forward(const gb::Tensor& x) {  // x (B, L) tokens -> logits (B, L, V)
    auto h = tokens(x) + positions;
    if (checkpoint_) return head(norm(gb::utils::checkpoint_sequential(blocks, int(blocks->size()), h)));
    return head(norm(blocks->forward(h)));
  }
  nn::Embedding tokens{nullptr};
  gb::Tensor positions;
  nn::Sequential blocks;
  nn::LayerNorm norm{nullptr};
  nn::Linear head{nullptr};
  bool checkpoint_;
};
GB_MODULE(Reverser);

double accuracy(Reverser& model, const gb::Tensor& x, const gb::Tensor& y) {
  gb::NoGradGuard no_grad;
  model->eval();
  auto pred = model(x).argmax(-1);
  model->train();
  return pred.eq(y).to(gb::kDouble).mean().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  auto session = sample_run::open_trace(opt.trace);
  gb::manual_seed(opt.seed);
  auto [x_test, y_test] = batch_of(1024);  // from the seeded default generator, like the weights and batches

  Reverser model(opt.dim, opt.layers, opt.checkpoint);
  gb::optim::AdamW optimizer(model->parameters(), gb::optim::AdamWOptions(opt.lr).weight_decay(0.01));
  int warmup = std::max(1, opt.steps / 10);
  std::vector<std::shared_ptr<gb::optim::LRScheduler>> phases = {
      std::make_shared<gb::optim::LinearLR>(optimizer, 0.1, 1.0, warmup),
      std::make_shared<gb::optim::CosineAnnealingLR>(optimizer, opt.steps - warmup, opt.lr * 0.01)};
  gb::optim::SequentialLR scheduler(optimizer, phases, {warmup});
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().enabled(opt.amp));

  int64_t n_params = 0;
  for (const auto& p : model->parameters()) n_params += p.numel();
  std::printf("glassbox %s — train_transformer: reverse %lld digits; %d pre-norm layers, dim %d, %lld parameters; "
              "AdamW + warmup/cosine%s%s\n",
              gb::version(), (long long)kLen, opt.layers, opt.dim, (long long)n_params,
              opt.amp ? ", bf16 autocast + GradScaler" : "", opt.checkpoint ? ", activation checkpointing" : "");
  int start = 0, end = opt.stop_at >= 0 && opt.stop_at < opt.steps ? opt.stop_at : opt.steps;
  if (!opt.resume.empty()) {
    // Everything a step depends on comes back: weights, AdamW's moments, the schedule's position, the scaler's
    // scale and growth tracker, and the random generator (the batches continue where they stopped).
    auto ck = gb::load_checkpoint(opt.resume, model, optimizer, &scheduler, &scaler);
    start = int(ck.step);
    std::printf("resumed from %s at step %d (lr %.2e)\n", opt.resume.c_str(), start, scheduler.get_last_lr()[0]);
  }
  auto t0 = std::chrono::steady_clock::now();
  sample_run::StepClock clock;
  for (int step = start; step < end; ++step) {
    gb::trace::StepScope traced_step(step);
    clock.start();
    auto [x, y] = [&] {
      gb::trace::PhaseScope data_time(gb::trace::Phase::data);  // the trace's data_ns
      return batch_of(opt.batch);
    }();
    traced_step.set_samples(x.size(0));  // the trace's throughput: sequences and tokens per second
    traced_step.set_tokens(x.numel());
    clock.lap("data");
    gb::Tensor loss;
    {
      gb::autocast ac(gb::kCPU, gb::kBFloat16, /*enabled=*/opt.amp);
      auto logits = model(x);
      loss = F::cross_entropy(logits.reshape({-1, kVocab}), y.reshape({-1}));
    }
    clock.lap("forward");
    optimizer.zero_grad();
    scaler.scale(loss).backward();
    clock.lap("backward");
    double lr = 0;
    {
      gb::trace::PhaseScope optimizer_time(gb::trace::Phase::optimizer);  // unscale, clip and schedule count too
      scaler.unscale_(optimizer);
      nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      scaler.step(optimizer);
      scaler.update();
      lr = scheduler.get_last_lr()[0];
      scheduler.step();
    }
    clock.lap("optimizer");
    double l = loss.item<double>();
    traced_step.set_loss(l);
    traced_step.set_lr(lr);
    traced_step.set_grad_scale(scaler.get_scale());
    if (step % 50 == 0 || step == end - 1)
      std::printf("step %4d  loss %.6f  lr %.2e  held-out accuracy %.1f%%\n", step, l, lr,
                  100 * accuracy(model, x_test, y_test));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (session) session->stop();
  double acc = accuracy(model, x_test, y_test);
  std::printf("%d steps in %.1f s (%.1f ms/step); held-out token accuracy %.1f%% (%lld sequences)\n", end - start,
              seconds, 1000.0 * seconds / std::max(1, end - start), 100 * acc, (long long)x_test.size(0));
  clock.print(end - start);
  if (!opt.save.empty()) {
    gb::save_checkpoint(opt.save, model, optimizer, &scheduler, end, /*epoch=*/0, &scaler);
    std::printf("saved the training checkpoint to %s\n", opt.save.c_str());
  }
  if (!opt.trace.empty()) std::printf("traced into %s: glassbox report %s\n", opt.trace.c_str(), opt.trace.c_str());
  if (opt.min_accuracy >= 0 && acc < opt.min_accuracy) {
    std::fprintf(stderr, "train_transformer: held-out accuracy %.3f is below the required %.3f\n", acc,
                 opt.min_accuracy);
    return 1;
  }
  return 0;
}
