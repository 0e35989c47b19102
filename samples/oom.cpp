// samples/oom.cpp — a training step that runs out of memory, the report that says why, and three ways out, each
// measured by the allocator.
//
// The model is a stack of Transformer encoder layers (gb::nn::TransformerEncoderLayer: self-attention + feed-forward,
// dropout) with a linear head and cross-entropy over every token, trained with AdamW. The "GPU" is the cpu device
// given a capacity (gb::memory::set_capacity), which makes its caching allocator behave like a card of that size:
// past it, gb::OutOfMemoryError with PyTorch's message and glassbox's report (what holds the memory by category, the
// largest live blocks with the op and module that made them, what to do). At the default batch the step's
// activations — every layer's attention scores and feed-forward outputs, saved for backward — do not fit. The
// program catches the error, prints the report, and then measures three ways out, one real training step each:
//   - a smaller batch, with gradient accumulation so the effective batch (and the update) stays the same;
//   - activation checkpointing: each layer keeps only its input and recomputes the rest during backward;
//   - mixed precision: bf16 autocast, so the matmuls' outputs saved for backward take half the bytes.
// Each prints its peak allocated memory against the capacity and its step time.
//
//   ./build/samples/oom                                  # batch 64 OOMs in a 128 MiB "GPU"; the report; the ways out
//   ./build/samples/oom --trace runs/oom.db && ./build/tools/glassbox report runs/oom.db   # the OOM in the trace
//   options: --batch N --seq L --dim D --layers N --capacity-mib M --trace PATH
//
// Exit status: 0 when the default batch ran out of memory and every way out fit; 1 otherwise (e.g. a capacity so
// large that nothing runs out: then there is nothing to show).
#include <glassbox/glassbox.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sample_cli.h"
#include "sample_run.h"

namespace F = gb::nn::functional;
namespace mem = gb::memory;

namespace {

struct Options {
  int batch = 64;
  int seq = 64;
  int dim = 64;
  int layers = 4;
  int capacity_mib = 128;
  std::string trace;
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{"oom: a training step runs out of memory; the report says why; three ways out, measured (see the "
               "comment at the top of samples/oom.cpp)"};
  app.add_option("--batch", o.batch, "the batch that runs out of memory")->check(sample_cli::kPositive);
  app.add_option("--seq", o.seq, "tokens per sequence")->check(sample_cli::kPositive);
  app.add_option("--dim", o.dim, "model width, a multiple of 4 (4 heads)")->check(sample_cli::kPositive);
  app.add_option("--layers", o.layers, "encoder layers")->check(sample_cli::kPositive);
  app.add_option("--capacity-mib", o.capacity_mib, "the device's capacity in MiB")->check(sample_cli::kPositive);
  app.add_option("--trace", o.trace, "record the run (and its OOM) into this trace file, e.g. runs/oom.db");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (o.dim % 4 != 0) {
    std::fprintf(stderr, "oom: --dim %d is not a multiple of 4 (the layers have 4 attention heads)\n", o.dim);
    std::exit(2);
  }
  return o;
}

constexpr int64_t kClasses = 16;

// (N, L, D) -> logits (N, L, classes): encoder layers (each optionally checkpointed), then a linear head.
struct EncoderImpl : gb::nn::Module {
  EncoderImpl(int64_t dim, int64_t layers) {
    blocks = register_module("layers", gb::nn::ModuleList());
    for (int64_t i = 0; i < layers; ++i)
      blocks->push_back(gb::nn::TransformerEncoderLayer(
          gb::nn::TransformerEncoderLayerOptions(dim, 4).dim_feedforward(4 * dim).batch_first(true)));
    head = register_module("head", gb::nn::Linear(dim, kClasses));
  }
  gb::Tensor forward(gb::Tensor h, bool checkpointed) {
    for (size_t i = 0; i < blocks->size(); ++i) {
      auto layer = blocks->ptr<gb::nn::TransformerEncoderLayerImpl>(i);
      auto run = [layer](const gb::Tensor& x) { return layer->forward(x); };
      h = checkpointed ? gb::utils::checkpoint(run, h) : run(h);
    }
    return head(h);
  }
  gb::nn::ModuleList blocks{nullptr};
  gb::nn::Linear head{nullptr};
};
GB_MODULE(Encoder);

struct Way {
  std::string name;
  int micro_batches = 1;  // gradient accumulation: the batch split into this many backwards, one optimizer step
  bool checkpointed = false;
  bool amp = false;
};

struct Measured {
  bool fits = false;
  int64_t peak_allocated = 0, peak_reserved = 0;
  double seconds = 0;
  std::optional<gb::OomReport> report;
  std::string message;
};

// One training step of `batch` sequences the way `way` says, from a clean cache; the allocator's peaks.
Measured step(Encoder& model, gb::optim::AdamW& optimizer, const Options& o, const Way& way, int64_t capacity) {
  Measured m;
  mem::empty_cache(gb::kCPU);
  mem::reset_peak_stats(gb::kCPU);
  mem::set_capacity(gb::kCPU, capacity);
  auto t0 = std::chrono::steady_clock::now();
  try {
    optimizer.zero_grad();
    const int64_t micro = o.batch / way.micro_batches;
    for (int k = 0; k < way.micro_batches; ++k) {
      gb::Tensor x = gb::randn({micro, o.seq, o.dim});
      gb::Tensor y = gb::randint(0, kClasses, {micro, o.seq});
      gb::Tensor loss;
      {
        gb::autocast ac(gb::kCPU, gb::kBFloat16, /*enabled=*/way.amp);
        loss = F::cross_entropy(model->forward(x, way.checkpointed).reshape({-1, kClasses}), y.reshape({-1}));
      }
      (loss / double(way.micro_batches)).backward();
    }
    optimizer.step();
    m.fits = true;
  } catch (const gb::OutOfMemoryError& e) {
    m.report = e.report();
    m.message = e.what();
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const mem::MemoryStats s = mem::memory_stats(gb::kCPU);
  m.peak_allocated = s.allocated_bytes[mem::kAll].peak;
  m.peak_reserved = s.reserved_bytes[mem::kAll].peak;
  mem::set_capacity(gb::kCPU, 0);
  return m;
}

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  auto session = sample_run::open_trace(o.trace);
  gb::manual_seed(0);
  const int64_t capacity = int64_t(o.capacity_mib) << 20;

  Encoder model(o.dim, o.layers);
  gb::optim::AdamW optimizer(model->parameters(), gb::optim::AdamWOptions(1e-3));
  int64_t n_params = 0;
  for (const auto& p : model->parameters()) n_params += p.numel();
  std::printf("glassbox %s — oom: %d Transformer encoder layers (dim %d, 4 heads, feed-forward %d), %lld parameters, "
              "AdamW; batch %d x %d tokens on a cpu device limited to %d MiB%s\n\n",
              gb::version(), o.layers, o.dim, 4 * o.dim, (long long)n_params, o.batch, o.seq, o.capacity_mib,
              session && session->active() ? (", traced into " + o.trace).c_str() : "");

  // The run that does not fit.
  Measured failed = step(model, optimizer, o, Way{"as written"}, capacity);
  if (failed.fits) {
    std::printf("batch %d fit in %d MiB (peak allocated %s): raise --batch or lower --capacity-mib to see an OOM\n",
                o.batch, o.capacity_mib, mib(failed.peak_allocated).c_str());
    return 1;
  }
  std::printf("batch %d ran out of memory. The report:\n\n%s\n\n", o.batch, failed.message.c_str());
  const gb::OomReport& r = *failed.report;
  int largest = 0;
  for (int c = 1; c < mem::kNumCategories; ++c)
    if (r.allocated_by_category[size_t(c)] > r.allocated_by_category[size_t(largest)]) largest = c;
  std::printf("the largest category was %s (%s of the %s allocated): the step's saved activations, so the ways out\n"
              "shrink those, each measured as one real training step in the same %d MiB:\n\n",
              mem::to_string(mem::Category(largest)), mib(r.allocated_by_category[size_t(largest)]).c_str(),
              mib(r.allocated).c_str(), o.capacity_mib);

  // The ways out. The accumulation factor is the smallest power of two whose micro-batch fits.
  std::vector<Way> ways;
  for (int k = 2; k <= o.batch; k *= 2) {
    Way w{"batch " + std::to_string(o.batch / k) + " x " + std::to_string(k) + " accumulated", k};
    if (o.batch % k == 0 && step(model, optimizer, o, w, capacity).fits) {
      ways.push_back(w);
      break;
    }
  }
  ways.push_back(Way{"activation checkpointing", 1, /*checkpointed=*/true});
  ways.push_back(Way{"bf16 autocast", 1, false, /*amp=*/true});

  // Every way, without the cap: its real peak (and the original step's, which did not fit).
  Measured unlimited = step(model, optimizer, o, Way{"as written"}, 0);
  std::printf("  %-32s  %14s  %14s  %9s  %s\n", "way", "peak allocated", "peak reserved", "step", "fits?");
  std::printf("  %-32s  %14s  %14s  %7.0fms  no (over by %s)\n", ("batch " + std::to_string(o.batch)).c_str(),
              mib(unlimited.peak_allocated).c_str(), mib(unlimited.peak_reserved).c_str(), 1000 * unlimited.seconds,
              mib(unlimited.peak_reserved - capacity).c_str());
  bool all_fit = true;
  for (const Way& w : ways) {
    Measured m = step(model, optimizer, o, w, capacity);
    all_fit = all_fit && m.fits;
    // A way that failed stopped at its OOM: its peaks are only how far it got.
    const char* at_least = m.fits ? "" : ">= ";
    std::printf("  %-32s  %14s  %14s  %7.0fms  %s (%.0f%% of the peak above)\n", w.name.c_str(),
                (at_least + mib(m.peak_allocated)).c_str(), (at_least + mib(m.peak_reserved)).c_str(),
                1000 * m.seconds, m.fits ? "yes" : "NO", 100.0 * double(m.peak_allocated) / double(unlimited.peak_allocated));
  }
  if (session) session->stop();
  std::printf("\n%s\n", all_fit ? "every way out fits; they combine (checkpointing + bf16 + a smaller batch)"
                                : "a way out did not fit: lower --batch or raise --capacity-mib");
  if (!o.trace.empty())
    std::printf("the OOM is in the trace: glassbox report %s (its story), or glassbox view %s (Memory panel, \"OOM "
                "report\")\n",
                o.trace.c_str(), o.trace.c_str());
  return all_fit ? 0 : 1;
}
