// samples/plan_memory.cpp — "does this model fit on an 80 GiB GPU at batch N, and what is the largest batch that
// fits?", answered in seconds on a machine without a GPU.
//
// A lesson in the meta device: tensors made with gb::TensorOptions().device(gb::kMeta) have shapes and
// allocations but no values, every op runs its checks and allocates its outputs and temporaries through the same
// caching allocator as a real run (the numbers equal a cpu run's exactly), and no kernel computes. Give the meta
// allocator a capacity and it behaves like a GPU of that size: it raises gb::OutOfMemoryError with the report a
// real OOM would print. Catch it, let the tensors go, and try a smaller batch: the process stays usable.
//
// The model is built from functional ops over parameter tensors made on meta (an nn::Module is made on the cpu with
// its initialization first; a 1.2B-parameter one would take 4.5 GiB and seconds before planning even starts):
//   --model transformer  a pre-norm GPT-style Transformer: tokens (N, L, D), per layer
//                 h += out(attention(qkv(layer_norm(h)))), softmax(QK^T / sqrt(d)) over the heads, dropout 0.1 on
//                 the attention weights; then h += fc2(gelu(fc1(layer_norm(h)))); a vocabulary head and
//                 cross-entropy over every token (the default: the attention weights, (N, heads, L, L) per layer,
//                 are what limits the batch)
//   --model mlp   the same without attention (an MLP stack over tokens)
//   --model conv  a ResNet-shaped conv stack: stages of conv-bn-relu-conv-bn + identity, stride-2 downsampling,
//                 global average pooling, a linear head, cross-entropy
// One training step = forward, loss, backward, SGD with momentum (the momentum buffers are optimizer_state).
//
//   ./build/samples/plan_memory                          # transformer: D=4096, L=2048, 8 layers, 32 heads, 80 GiB
//   ./build/samples/plan_memory --batch 16               # does batch 16 fit? exit 0 if it does, 1 if not
//   ./build/samples/plan_memory --model conv --capacity-gib 24 --width 128 --layers 4 --image 224
//   options: --model transformer|mlp|conv --heads H --batch N --capacity-gib G | --capacity-mib M --layers N --width D --seq L
//            --vocab V --image S --classes C --max-batch N
#include <glassbox/glassbox.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "sample_cli.h"

namespace mem = gb::memory;

namespace {

struct Options {
  std::string model = "transformer";
  std::optional<int64_t> batch;
  int64_t capacity = int64_t(80) << 30;
  int64_t layers = 8, width = 4096, seq = 2048, vocab = 32000;  // transformer and mlp
  int64_t heads = 32;                                          // transformer
  int64_t image = 224, classes = 1000;                         // conv (width = first stage's channels)
  int64_t max_batch = int64_t(1) << 20;
};

Options parse(int argc, char** argv) {
  Options o;
  int64_t batch = 0;
  double capacity_gib = 0, capacity_mib = 0;
  CLI::App app{"plan_memory: does one training step fit on a GPU of this size, and what is the largest batch that "
               "does? (planned on the meta device; see the comment at the top of samples/plan_memory.cpp)"};
  app.add_option("--model", o.model,
                 "transformer (attention + MLP over tokens), mlp (an MLP stack over tokens) or conv (a conv net over "
                 "images)")
      ->check(CLI::IsMember({"transformer", "mlp", "conv"}));
  auto* batch_opt = app.add_option("--batch", batch, "the batch to check (without it: only the search)")
                        ->check(sample_cli::kPositive);
  auto* gib = app.add_option("--capacity-gib", capacity_gib, "the device's capacity in GiB (default 80)")
                  ->check(sample_cli::kPositive);
  auto* mib = app.add_option("--capacity-mib", capacity_mib, "the device's capacity in MiB")
                  ->check(sample_cli::kPositive)
                  ->excludes(gib);
  app.add_option("--layers", o.layers, "layers (mlp) or stages (conv)")->check(sample_cli::kPositive);
  auto* width = app.add_option("--width", o.width, "hidden width (mlp, default 4096) or first stage's channels "
                                                   "(conv, default 64)")
                    ->check(sample_cli::kPositive);
  app.add_option("--seq", o.seq, "tokens per sample (transformer, mlp)")->check(sample_cli::kPositive);
  app.add_option("--vocab", o.vocab, "vocabulary (transformer, mlp)")->check(sample_cli::kPositive);
  app.add_option("--heads", o.heads, "attention heads (transformer; must divide --width)")->check(sample_cli::kPositive);
  app.add_option("--image", o.image, "image side (conv)")->check(sample_cli::kPositive);
  app.add_option("--classes", o.classes, "classes (conv)")->check(sample_cli::kPositive);
  app.add_option("--max-batch", o.max_batch, "the search's upper bound")->check(sample_cli::kPositive);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (*batch_opt) o.batch = batch;
  if (*gib) o.capacity = int64_t(capacity_gib * double(int64_t(1) << 30));
  if (*mib) o.capacity = int64_t(capacity_mib * double(1 << 20));
  if (o.model == "conv" && !*width) o.width = 64;
  if (o.model == "transformer" && o.width % o.heads != 0) {
    std::fprintf(stderr, "plan_memory: --heads %lld does not divide --width %lld\n", (long long)o.heads,
                 (long long)o.width);
    std::exit(2);
  }
  return o;
}

const gb::TensorOptions kMeta = gb::TensorOptions().device(gb::kMeta);

gb::Tensor param(std::vector<int64_t> shape, double std) { return (gb::randn(shape, kMeta) * std).requires_grad_(); }
gb::Tensor constant(std::vector<int64_t> shape, double v) { return gb::full(shape, v, kMeta).requires_grad_(); }

// The model's parameters and one training step's forward; `loss(batch)` runs the forward and returns the loss.
struct Model {
  std::vector<gb::Tensor> params;
  virtual ~Model() = default;
  virtual gb::Tensor loss(int64_t batch) = 0;
  int64_t numel() const {
    int64_t n = 0;
    for (const auto& p : params) n += p.numel();
    return n;
  }
};

// Tokens (N, L, D) through `layers` pre-norm blocks, then a vocabulary head and cross-entropy over every token.
// A block is h += out(attention(qkv(layer_norm(h)))) (with attention: the transformer), then
// h += fc2(gelu(fc1(layer_norm(h)))) (the mlp stack is this part alone).
struct TokenStack final : Model {
  int64_t D, L, V, H, layers;
  bool attention;
  size_t per_layer;  // parameters per block: 6 for the MLP part, 6 more for attention
  TokenStack(const Options& o, bool attention)
      : D(o.width), L(o.seq), V(o.vocab), H(o.heads), layers(o.layers), attention(attention),
        per_layer(attention ? 12 : 6) {
    for (int64_t l = 0; l < layers; ++l) {
      if (attention)  // ln1 weight and bias, qkv (3D, D) and bias, out (D, D) and bias
        for (auto p : {constant({D}, 1), constant({D}, 0), param({3 * D, D}, 0.02), constant({3 * D}, 0),
                       param({D, D}, 0.02), constant({D}, 0)})
          params.push_back(p);
      // ln2 weight and bias, fc1 (4D, D) and bias, fc2 (D, 4D) and bias
      for (auto p : {constant({D}, 1), constant({D}, 0), param({4 * D, D}, 0.02), constant({4 * D}, 0),
                     param({D, 4 * D}, 0.02), constant({D}, 0)})
        params.push_back(p);
    }
    params.push_back(param({V, D}, 0.02));  // the vocabulary head
  }
  gb::Tensor loss(int64_t batch) override {
    gb::Tensor h, target;
    {
      mem::CategoryGuard cat(mem::Category::input);
      h = gb::randn({batch, L, D}, kMeta);  // the embedded tokens: (N, L, D)
      target = gb::randint(0, V, {batch * L}, kMeta.dtype(gb::kInt64));
    }
    for (int64_t l = 0; l < layers; ++l) {
      const gb::Tensor* p = &params[size_t(l) * per_layer];
      // Allocations inside are stamped with the layer's path: the OOM report names the module that holds memory.
      const std::string path = "layers." + std::to_string(l);
      mem::AllocationContext module("", path);
      if (attention) {
        mem::AllocationContext attn("", path + ".attn");
        const int64_t d = D / H;
        auto qkv = gb::linear(gb::layer_norm(h, {D}, p[0], p[1]), p[2], p[3]);  // (N, L, 3D)
        auto heads = [&](int64_t i) {                                           // (N, H, L, d)
          return qkv.narrow(2, i * D, D).view({batch, L, H, d}).transpose(1, 2);
        };
        auto w = gb::softmax(gb::matmul(heads(0), heads(1).transpose(2, 3)) / std::sqrt(double(d)), -1);
        w = gb::dropout(w, 0.1, /*train=*/true);  // (N, H, L, L)
        auto y = gb::matmul(w, heads(2)).transpose(1, 2).reshape({batch, L, D});
        h = h + gb::linear(y, p[4], p[5]);
        p += 6;
      }
      auto x = gb::layer_norm(h, {D}, p[0], p[1]);  // the norm and the residual add are the block's, not the MLP's
      gb::Tensor y;
      {
        mem::AllocationContext mlp("", path + ".mlp");
        y = gb::linear(gb::gelu(gb::linear(x, p[2], p[3])), p[4], p[5]);  // (N, L, 4D) -> (N, L, D)
      }
      h = h + y;
    }
    auto logits = gb::linear(h, params.back()).view({batch * L, V});  // (N*L, V)
    return gb::cross_entropy(logits, target);
  }
};

struct ConvStack final : Model {
  int64_t C, S, K, layers;
  std::vector<gb::Tensor> running;  // batch-norm statistics (buffers, not parameters)
  ConvStack(const Options& o) : C(o.width), S(o.image), K(o.classes), layers(o.layers) {
    auto conv = [&](int64_t out, int64_t in, int64_t k) {
      params.push_back(param({out, in, k, k}, 0.05));  // conv weight and bias, batch-norm weight and bias
      params.push_back(constant({out}, 0));
      params.push_back(constant({out}, 1));
      params.push_back(constant({out}, 0));
      running.push_back(gb::zeros({out}, kMeta));
      running.push_back(gb::ones({out}, kMeta));
    };
    conv(C, 3, 3);  // the stem
    int64_t ch = C;
    for (int64_t l = 0; l < layers; ++l) {  // each stage: a stride-2 conv to twice the channels, then a residual block
      conv(2 * ch, ch, 3);
      ch *= 2;
      conv(ch, ch, 3);
      conv(ch, ch, 3);
    }
    params.push_back(param({K, ch}, 0.02));
    params.push_back(constant({K}, 0));
  }
  gb::Tensor loss(int64_t batch) override {
    gb::Tensor x, target;
    {
      mem::CategoryGuard cat(mem::Category::input);
      x = gb::randn({batch, 3, S, S}, kMeta);  // (N, 3, H, W)
      target = gb::randint(0, K, {batch}, kMeta.dtype(gb::kInt64));
    }
    size_t i = 0, r = 0;
    auto cbr = [&](const gb::Tensor& in, int64_t stride, bool relu) {
      const gb::Tensor* p = &params[i];
      i += 4;
      auto y = gb::conv2d(in, p[0], p[1], stride, 1);
      y = gb::batch_norm(y, p[2], p[3], running[r], running[r + 1], true, 0.1, 1e-5);
      r += 2;
      return relu ? gb::relu(y) : y;
    };
    auto h = cbr(x, 1, true);
    for (int64_t l = 0; l < layers; ++l) {
      mem::AllocationContext module("", "stages." + std::to_string(l));  // names the module in the OOM report
      h = cbr(h, 2, true);
      h = gb::relu(h + cbr(cbr(h, 1, true), 1, false));
    }
    h = gb::adaptive_avg_pool2d(h, {1, 1}).flatten(1);  // (N, channels)
    return gb::cross_entropy(gb::linear(h, params[i], params[i + 1]), target);
  }
};

struct StepResult {
  bool fits = false;
  mem::MemoryStats stats;     // peaks of the step (when it fits)
  std::string oom_report;     // when it does not
  int64_t params = 0;
};

// One training step at `batch` on a meta device of the planned capacity: everything it makes is freed on return,
// also when it runs out of memory (the exception unwinds the tensors), so the next try starts from nothing.
StepResult try_step(const Options& o, int64_t batch) {
  const gb::Device meta(gb::kMeta);
  StepResult r;
  mem::empty_cache(meta);
  mem::set_capacity(meta, o.capacity);
  mem::reset_peak_stats(meta);
  try {
    std::unique_ptr<Model> model;
    if (o.model == "transformer" || o.model == "mlp") model = std::make_unique<TokenStack>(o, o.model == "transformer");
    else model = std::make_unique<ConvStack>(o);
    r.params = model->numel();
    std::vector<gb::Tensor> velocity;
    {
      mem::CategoryGuard cat(mem::Category::optimizer_state);  // SGD's momentum buffers
      for (auto& p : model->params) velocity.push_back(gb::zeros_like(p));
    }
    gb::Tensor loss = model->loss(batch);
    loss.backward();
    {
      gb::NoGradGuard no_grad;
      for (size_t i = 0; i < model->params.size(); ++i) {
        velocity[i].mul_(0.9).add_(model->params[i].grad());  // v = momentum * v + g
        model->params[i].sub_(velocity[i], 0.1);                // p -= lr * v
      }
    }
    r.fits = true;
    r.stats = mem::memory_stats(meta);
  } catch (const gb::OutOfMemoryError& e) {
    r.oom_report = e.what();
  }
  mem::set_capacity(meta, 0);
  mem::empty_cache(meta);
  return r;
}

std::string gib(int64_t bytes) { return mem::format_size(bytes); }

void print_peaks(const mem::MemoryStats& s) {
  std::printf("  peak allocated %s, peak reserved %s (capacity counts the context and reserved)\n",
              gib(s.allocated_bytes[mem::kAll].peak).c_str(), gib(s.reserved_bytes[mem::kAll].peak).c_str());
  std::printf("  each category's own peak:\n");
  for (int c = 0; c < mem::kNumCategories; ++c) {
    int64_t peak = s.allocated_bytes_by_category[size_t(c)].peak;
    if (peak > 0) std::printf("    %-16s %12s\n", mem::to_string(mem::Category(c)), gib(peak).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("glassbox %s — plan_memory: %s model on a %s meta device (one training step: forward, "
              "cross-entropy, backward, SGD with momentum)\n",
              gb::version(), o.model.c_str(), gib(o.capacity).c_str());
  int exit_code = 0;
  if (o.batch) {
    StepResult r = try_step(o, *o.batch);
    std::printf("model: %lld parameters (%s in float32)\n", (long long)r.params, gib(r.params * 4).c_str());
    if (r.fits) {
      std::printf("batch %lld fits.\n", (long long)*o.batch);
      print_peaks(r.stats);
    } else {
      std::printf("batch %lld does NOT fit:\n%s\n", (long long)*o.batch, r.oom_report.c_str());
      exit_code = 1;
    }
  }
  // The largest batch that fits: double until a step runs out of memory, then bisect.
  int64_t good = 0, bad = 0;
  std::string first_oom;
  int64_t first_oom_batch = 0;
  auto trial = [&](int64_t b) {
    StepResult r = try_step(o, b);
    std::printf("  batch %-8lld %s", (long long)b, r.fits ? "fits" : "OOM");
    if (r.fits) std::printf("   peak allocated %s, reserved %s", gib(r.stats.allocated_bytes[mem::kAll].peak).c_str(),
                            gib(r.stats.reserved_bytes[mem::kAll].peak).c_str());
    std::printf("\n");
    if (!r.fits && first_oom.empty()) first_oom = r.oom_report, first_oom_batch = b;
    return r;
  };
  std::printf("searching the largest batch that fits:\n");
  StepResult best;
  for (int64_t b = 1; b <= o.max_batch; b *= 2) {
    StepResult r = trial(b);
    if (!r.fits) {
      bad = b;
      break;
    }
    good = b, best = r;
  }
  if (good > 0 && bad > 0) {
    while (bad - good > 1) {
      int64_t mid = good + (bad - good) / 2;
      StepResult r = trial(mid);
      if (r.fits) good = mid, best = r;
      else bad = mid;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (good == 0) {
    std::printf("not even batch 1 fits on %s.\n", gib(o.capacity).c_str());
  } else {
    std::printf("largest batch that fits: %lld%s\n", (long long)good,
                bad == 0 ? " (the --max-batch limit; larger may fit too)" : "");
    print_peaks(best.stats);
  }
  if (!first_oom.empty())
    std::printf("\nthe OOM report of batch %lld, the first that did not fit:\n%s\n", (long long)first_oom_batch,
                first_oom.c_str());
  std::printf("planned in %.2f s, without a GPU\n", seconds);
  return exit_code;
}
