// samples/train_images.cpp — a small CNN learns to tell rendered shapes apart, fed by a DataLoader with workers.
//
// A lesson in the data pipeline: the images are drawn procedurally (gb::data::datasets::Shapes: circle, square,
// triangle, cross at random places, sizes and brightness, with noise), augmented on worker threads (random crop
// with padding, horizontal flip, normalize), collated into batches and prefetched while the model trains. The
// model is written with functional layers and tensors as parameters (as train_mlp does): conv 3x3 (8) - relu -
// maxpool 2 - conv 3x3 (16) - relu - maxpool 2 - linear (4 classes), trained with SGD and momentum.
//
//   ./build/samples/train_images                           # 3 epochs of 2048 images, 2 workers
//   ./build/samples/train_images --workers 0 --epochs 1     # options: --epochs --batch --workers --lr --seed
//                                                           #          --train N --min-accuracy A
//   GLASSBOX_TRACE=img.db ./build/samples/train_images && glassbox report img.db
//
// Traced, each step is a span; inside it the training thread's `wait` span is how long it waited for its batch,
// and the worker threads ("dataloader worker 0", "dataloader worker 1") show each batch's `fetch` and `collate`
// spans, linked to the wait by the batch index (spans.seq). The report says whether the loop was data-bound.
//
// With --min-accuracy A the program exits 1 when held-out accuracy ends below A (the test suite uses it).
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace F = gb::nn::functional;
namespace T = gb::data::transforms;
using gb::data::datasets::Shapes;

namespace {

struct Options {
  int epochs = 3;
  int batch = 64;
  int workers = 2;
  int64_t train = 2048;
  double lr = 0.05;
  uint64_t seed = 0;
  double min_accuracy = -1;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "train_images: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--epochs") o.epochs = std::atoi(next());
    else if (a == "--batch") o.batch = std::atoi(next());
    else if (a == "--workers") o.workers = std::atoi(next());
    else if (a == "--train") o.train = std::atoll(next());
    else if (a == "--lr") o.lr = std::atof(next());
    else if (a == "--seed") o.seed = std::strtoull(next(), nullptr, 10);
    else if (a == "--min-accuracy") o.min_accuracy = std::atof(next());
    else {
      std::fprintf(stderr, "train_images: unknown option '%s'. Options: --epochs N --batch N --workers N --train N "
                           "--lr X --seed N --min-accuracy A\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.epochs <= 0 || o.batch <= 0 || o.workers < 0 || o.train <= 0 || o.lr <= 0) {
    std::fprintf(stderr, "train_images: --epochs, --batch, --train and --lr must be positive, --workers >= 0\n");
    std::exit(2);
  }
  return o;
}

// PyTorch's default init for conv and linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
gb::Tensor param(std::vector<int64_t> shape, int64_t fan_in) {
  double bound = 1.0 / std::sqrt(double(fan_in));
  return (gb::rand(shape) * (2 * bound) - bound).requires_grad_();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  gb::manual_seed(opt.seed);
  const int64_t S = 16;

  // Training images are augmented on the workers; held-out images are only normalized.
  T::Normalize normalize({0.25}, {0.3});
  auto train_set = std::make_shared<Shapes>(opt.train, S, opt.seed,
                                            T::Compose({T::RandomCrop(S, 2), T::RandomHorizontalFlip(0.5), normalize}));
  auto test_set = std::make_shared<Shapes>(512, S, opt.seed + 1000, normalize);
  gb::data::DataLoader loader(train_set, gb::data::DataLoaderOptions()
                                             .batch_size(opt.batch)
                                             .shuffle(true)
                                             .drop_last(true)
                                             .num_workers(opt.workers)
                                             .generator(std::make_shared<gb::Generator>(opt.seed)));
  gb::data::DataLoader test_loader(test_set, gb::data::DataLoaderOptions().batch_size(256));

  std::vector<gb::Tensor> params = {
      param({8, 1, 3, 3}, 9),       param({8}, 9),        // conv1: 1 -> 8 channels
      param({16, 8, 3, 3}, 72),     param({16}, 72),      // conv2: 8 -> 16 channels
      param({4, 16 * 4 * 4}, 256),  param({4}, 256),      // fc: 256 -> 4 classes
  };
  auto forward = [&](const gb::Tensor& x) {  // x (N,1,16,16) -> logits (N,4)
    auto h = F::max_pool2d(F::relu(F::conv2d(x, params[0], F::Conv2dFuncOptions().bias(params[1]).padding(1))), F::MaxPool2dFuncOptions(2));
    h = F::max_pool2d(F::relu(F::conv2d(h, params[2], F::Conv2dFuncOptions().bias(params[3]).padding(1))), F::MaxPool2dFuncOptions(2));
    return F::linear(h.flatten(1), params[4], params[5]);
  };
  std::vector<gb::Tensor> velocity;
  for (auto& p : params) velocity.push_back(gb::zeros_like(p));

  std::printf("glassbox %s — train_images: %lld rendered %lldx%lld shapes (4 classes), batch %d, %d DataLoader "
              "workers, %d engine threads\n",
              gb::version(), (long long)opt.train, (long long)S, (long long)S, opt.batch, opt.workers,
              gb::get_num_threads());
  auto t0 = std::chrono::steady_clock::now();
  int64_t step = 0;
  double loss_sum = 0;
  int loss_n = 0;
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    auto it = loader.begin();  // the first batch is loaded (and waited for) here, before the step starts
    while (!(it == loader.end())) {
      gb::trace::StepScope traced_step(step);
      gb::data::Example<>& batch = *it;
      gb::Tensor loss;
      {
        GB_TRACE_SPAN(gb::trace::SpanKind::module, "forward");
        loss = F::cross_entropy(forward(batch.data), batch.target);
      }
      for (auto& p : params) p.mutable_grad() = gb::Tensor();
      loss.backward();
      {
        GB_TRACE_SPAN(gb::trace::SpanKind::optimizer, "SGD.step");
        gb::NoGradGuard no_grad;
        for (size_t i = 0; i < params.size(); ++i) {
          velocity[i].mul_(0.9).add_(params[i].grad());
          params[i].sub_(velocity[i], opt.lr);
        }
      }
      double l = loss.item<double>();
      traced_step.set_loss(l);
      traced_step.set_lr(opt.lr);
      loss_sum += l;
      ++loss_n;
      ++step;
      ++it;  // waits for the next batch inside this step: the trace's `wait` span
    }
    std::printf("epoch %d  mean loss %.4f\n", epoch, loss_sum / loss_n);
    loss_sum = 0;
    loss_n = 0;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  gb::NoGradGuard no_grad;
  int64_t correct = 0, total = 0;
  for (auto& b : test_loader) {
    correct += forward(b.data).argmax(1).eq(b.target).sum().item<int64_t>();
    total += b.target.size(0);
  }
  double acc = double(correct) / double(total);
  std::printf("%lld steps in %.1f s (%.1f ms/step); held-out accuracy %.1f%% (%lld images)\n", (long long)step,
              seconds, 1000.0 * seconds / double(step), 100 * acc, (long long)total);
  if (opt.min_accuracy >= 0 && acc < opt.min_accuracy) {
    std::fprintf(stderr, "train_images: held-out accuracy %.3f is below the required %.3f\n", acc, opt.min_accuracy);
    return 1;
  }
  return 0;
}
