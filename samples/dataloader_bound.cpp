// samples/dataloader_bound.cpp — a training loop that waits for its data, and what DataLoader workers do about it.
//
// The pipeline is augmentation-heavy, as image training often is: each 48x48 image (gb::data::datasets::Shapes) is
// rotated by a random angle (antialiased bilinear resampling), blurred with a random-width Gaussian, jittered in brightness
// and contrast, randomly flipped and normalized — per sample, in plain C++ (the kind of transform a user writes;
// torchvision's RandomRotation, GaussianBlur and ColorJitter do the same work). The model is a small CNN whose step
// is cheaper than loading its batch. With num_workers 0 the training thread loads every batch itself, so the step
// waits for data most of the time; with workers, batches are augmented on other threads and prefetched while the
// model trains, and the wait share falls — as far as the machine's cores allow (each worker needs a core).
//
//   ./build/samples/dataloader_bound                     # num_workers 0, 1, 2: wait share and throughput of each
//   ./build/samples/dataloader_bound --workers 0 --trace runs/dataloader_bound.w0.db   # one setting, traced
//   ./build/tools/glassbox report runs/dataloader_bound.w0.db    # "data-bound: the training loop waited 75% ..."
//   options: --workers N (one setting) --steps N --batch N --engine-threads N --trace PATH
//
// Traced, the training thread's `wait` spans are the time each step waited for its batch, and each worker's `fetch`
// and `collate` spans show the batch being made, linked to its wait by the batch index; the viewer's Data loader
// panel draws them per step.
//
// The engine runs on one thread by default here (--engine-threads): the workers are the point, and on a 2-core
// machine an engine pool on both cores would take them away from the workers.
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "sample_cli.h"
#include "sample_run.h"

namespace F = gb::nn::functional;
namespace T = gb::data::transforms;

namespace {

struct Options {
  std::optional<int> workers;
  int steps = 24;
  int batch = 32;
  int engine_threads = 1;
  std::string trace;
};

Options parse(int argc, char** argv) {
  Options o;
  int workers = -1;
  CLI::App app{"dataloader_bound: an augmentation-heavy pipeline at num_workers 0, 1, 2 (see the comment at the top of "
               "samples/dataloader_bound.cpp)"};
  app.add_option("--workers", workers, "run only this num_workers (default: 0, 1 and 2 in turn)")
      ->check(sample_cli::kNonNegative);
  app.add_option("--steps", o.steps, "training steps per setting")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--engine-threads", o.engine_threads, "threads of the engine's own pool")
      ->check(sample_cli::kPositive);
  app.add_option("--trace", o.trace, "with --workers: record the run into this trace file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (workers >= 0) o.workers = workers;
  if (!o.trace.empty() && !o.workers) {
    std::fprintf(stderr, "dataloader_bound: --trace records one setting: give --workers N too (one trace each)\n");
    std::exit(2);
  }
  return o;
}

constexpr int64_t kSize = 48;

// (1,S,S) -> (1,S,S): rotate by a random angle in [-30, 30] degrees about the centre (2x2 bilinear samples per
// pixel, zeros outside),
// then blur with a Gaussian of random sigma in [0.5, 1.5] (separable, radius 3), then brightness/contrast jitter.
// The randomness comes from gb's generator, which the DataLoader seeds per worker and sample.
gb::Tensor augment(const gb::Tensor& image) {
  const int64_t S = image.size(-1);
  gb::Tensor x = image.contiguous();
  const float* in = x.data_ptr<float>();
  gb::Tensor r = gb::rand({4});
  const float* u = r.data_ptr<float>();
  const double angle = (u[0] * 60.0 - 30.0) * M_PI / 180.0, c = std::cos(angle), s = std::sin(angle);
  const double sigma = 0.5 + u[1];
  const float brightness = 0.8f + 0.4f * u[2], contrast = 0.8f + 0.4f * u[3];

  std::vector<float> rotated(size_t(S * S), 0.f), tmp(size_t(S * S));
  const double mid = (double(S) - 1) / 2;
  // Antialiased: each output pixel averages 2x2 bilinear samples of the rotated image.
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) {
      double v = 0;
      for (double si : {-0.25, 0.25})
        for (double sj : {-0.25, 0.25}) {
          const double yi = c * (double(i) + si - mid) - s * (double(j) + sj - mid) + mid;
          const double xj = s * (double(i) + si - mid) + c * (double(j) + sj - mid) + mid;
          const auto y0 = int64_t(std::floor(yi)), x0 = int64_t(std::floor(xj));
          const double dy = yi - double(y0), dx = xj - double(x0);
          for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b) {
              const int64_t yy = y0 + a, xx = x0 + b;
              if (yy >= 0 && yy < S && xx >= 0 && xx < S)
                v += 0.25 * (a ? dy : 1 - dy) * (b ? dx : 1 - dx) * in[yy * S + xx];
            }
        }
      rotated[size_t(i * S + j)] = float(v);
    }
  constexpr int kRadius = 3;
  float k[2 * kRadius + 1], ksum = 0;
  for (int t = -kRadius; t <= kRadius; ++t) ksum += k[t + kRadius] = float(std::exp(-t * t / (2 * sigma * sigma)));
  for (float& v : k) v /= ksum;
  auto blur = [&](const std::vector<float>& src, std::vector<float>& dst, bool rows) {
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j) {
        float v = 0;
        for (int t = -kRadius; t <= kRadius; ++t) {
          const int64_t p = std::clamp<int64_t>((rows ? j : i) + t, 0, S - 1);
          v += k[t + kRadius] * src[size_t(rows ? i * S + p : p * S + j)];
        }
        dst[size_t(i * S + j)] = v;
      }
  };
  blur(rotated, tmp, true);
  blur(tmp, rotated, false);
  float mean = 0;
  for (float v : rotated) mean += v;
  mean /= float(S * S);
  gb::Tensor out = gb::empty({1, S, S});
  float* o = out.data_ptr<float>();
  for (int64_t p = 0; p < S * S; ++p) o[p] = (rotated[size_t(p)] - mean) * contrast + mean * brightness;
  return out;
}

// conv 3x3 (8, stride 2) - relu - conv 3x3 (16, stride 2) - relu - global average pool - linear (4).
struct NetImpl : gb::nn::Module {
  NetImpl() {
    conv1 = register_module("conv1", gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 8, 3).stride(2).padding(1)));
    conv2 = register_module("conv2", gb::nn::Conv2d(gb::nn::Conv2dOptions(8, 16, 3).stride(2).padding(1)));
    fc = register_module("fc", gb::nn::Linear(16, 4));
  }
  gb::Tensor forward(const gb::Tensor& x) {
    auto h = F::relu(conv2(F::relu(conv1(x))));
    return fc(F::adaptive_avg_pool2d(h, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1));
  }
  gb::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  gb::nn::Linear fc{nullptr};
};
GB_MODULE(Net);

struct Result {
  double wait_share = 0, images_per_second = 0, ms_per_step = 0;
};

Result train(const Options& o, int workers) {
  gb::manual_seed(0);
  auto data = std::make_shared<gb::data::datasets::Shapes>(
      int64_t(o.steps) * o.batch, kSize, /*seed=*/0,
      T::Compose({augment, T::RandomHorizontalFlip(0.5), T::Normalize({0.25}, {0.3})}));
  gb::data::DataLoader loader(data, gb::data::DataLoaderOptions()
                                        .batch_size(o.batch)
                                        .shuffle(true)
                                        .num_workers(workers)
                                        .generator(std::make_shared<gb::Generator>(0)));
  Net model;
  gb::optim::SGD optimizer(model->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  sample_run::StepClock clock;
  int64_t step = 0;
  auto t0 = std::chrono::steady_clock::now();
  clock.start();
  auto it = loader.begin();  // the first batch: loaded (workers 0) or waited for here
  clock.lap("data wait");
  while (!(it == loader.end())) {
    gb::trace::StepScope traced_step(step);
    gb::data::Example<>& batch = *it;
    auto loss = F::cross_entropy(model(batch.data), batch.target);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    traced_step.set_loss(loss.item<double>());
    clock.lap("compute");
    ++step;
    ++it;  // the next batch: the step's `wait` span in a trace
    clock.lap("data wait");
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Result r;
  const double total = clock.total_seconds();
  r.wait_share = total > 0 ? clock.seconds("data wait") / total : 0;
  r.ms_per_step = 1000 * seconds / double(step);
  r.images_per_second = double(step * o.batch) / seconds;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  gb::set_num_threads(o.engine_threads);
  std::vector<int> settings = o.workers ? std::vector<int>{*o.workers} : std::vector<int>{0, 1, 2};
  std::printf("glassbox %s — dataloader_bound: %dx%d shapes rotated, blurred, jittered, flipped per sample; a small "
              "CNN; batch %d, %d steps per setting, %d engine thread(s)\n\n",
              gb::version(), int(kSize), int(kSize), o.batch, o.steps, o.engine_threads);
  auto session = sample_run::open_trace(o.trace);
  std::printf("  num_workers  wait share  images/s  ms/step\n");
  std::vector<Result> results;
  for (int w : settings) {
    Result r = train(o, w);
    results.push_back(r);
    std::printf("  %11d  %9.0f%%  %8.0f  %7.1f\n", w, 100 * r.wait_share, r.images_per_second, r.ms_per_step);
    std::fflush(stdout);
  }
  if (session) session->stop();
  if (results.size() > 1)
    std::printf("\nthe wait share went %.0f%% -> %.0f%% and throughput %.2fx from num_workers %d to %d\n",
                100 * results.front().wait_share, 100 * results.back().wait_share,
                results.back().images_per_second / results.front().images_per_second, settings.front(),
                settings.back());
  if (!o.trace.empty())
    std::printf("\ntraced into %s: glassbox report %s (data-loader section), or glassbox view %s (Data loader panel)\n",
                o.trace.c_str(), o.trace.c_str(), o.trace.c_str());
  return 0;
}
