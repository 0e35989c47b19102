// samples/train_images.cpp — a small CNN learns to tell rendered shapes apart, fed by a DataLoader with workers.
//
// A lesson in the data pipeline: the images are drawn procedurally (gb::data::datasets::Shapes: circle, square,
// triangle, cross at random places, sizes and brightness, with noise), augmented on worker threads (random crop
// with padding, horizontal flip, normalize), collated into batches and prefetched while the model trains. The
// model is a gb::nn::Module: conv 3x3 (8) - batch norm - relu - maxpool 2 - conv 3x3 (16) - batch norm - relu -
// maxpool 2 - linear (4 classes), trained with SGD + momentum under a OneCycleLR schedule; held-out accuracy is
// measured in eval mode (batch norm's running statistics).
//
//   ./build/samples/train_images                           # 3 epochs of 2048 images, 2 workers
//   ./build/samples/train_images --workers 0 --epochs 1     # options: --epochs --batch --workers --lr --seed
//                                                           #          --train N --min-accuracy A
//   GLASSBOX_TRACE=img.db ./build/samples/train_images && glassbox report img.db
//
// Traced, each step is a span; inside it the training thread's `wait` span is how long it waited for its batch,
// and the worker threads ("dataloader worker 0", "dataloader worker 1") show each batch's `fetch` and `collate`
// spans, linked to the wait by the batch index (spans.seq). The report says whether the loop was data-bound. The
// model's calls are module spans (conv1, bn1, ...) and SGD.step an optimizer span.
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

#include "sample_cli.h"

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
  CLI::App app{"train_images: a CNN learns rendered shapes through a DataLoader (see the comment at the top of "
               "samples/train_images.cpp)"};
  app.add_option("--epochs", o.epochs, "epochs")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--workers", o.workers, "DataLoader worker threads")->check(sample_cli::kNonNegative);
  app.add_option("--train", o.train, "training images per epoch")->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "SGD learning rate (OneCycleLR peaks at twice it)")->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the images, the augmentation and the weights");
  app.add_option("--min-accuracy", o.min_accuracy, "exit 1 when held-out accuracy ends below this");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

// conv 3x3 (8) - batch norm - relu - maxpool 2 - conv 3x3 (16) - batch norm - relu - maxpool 2 - linear (4).
struct ShapesNetImpl : gb::nn::Module {
  ShapesNetImpl() {
    conv1 = register_module("conv1", gb::nn::Conv2d(gb::nn::Conv2dOptions(1, 8, 3).padding(1)));
    bn1 = register_module("bn1", gb::nn::BatchNorm2d(8));
    conv2 = register_module("conv2", gb::nn::Conv2d(gb::nn::Conv2dOptions(8, 16, 3).padding(1)));
    bn2 = register_module("bn2", gb::nn::BatchNorm2d(16));
    fc = register_module("fc", gb::nn::Linear(16 * 4 * 4, 4));
  }
  gb::Tensor forward(const gb::Tensor& x) {  // x (N,1,16,16) -> logits (N,4)
    auto h = F::max_pool2d(F::relu(bn1(conv1(x))), F::MaxPool2dFuncOptions(2));
    h = F::max_pool2d(F::relu(bn2(conv2(h))), F::MaxPool2dFuncOptions(2));
    return fc(h.flatten(1));
  }
  gb::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  gb::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  gb::nn::Linear fc{nullptr};
};
GB_MODULE(ShapesNet);

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

  ShapesNet model;
  gb::optim::SGD optimizer(model->parameters(), gb::optim::SGDOptions(opt.lr).momentum(0.9));
  const int64_t steps_per_epoch = opt.train / opt.batch;
  gb::optim::OneCycleLR scheduler(optimizer, gb::optim::OneCycleLROptions(opt.lr * 2)
                                                 .epochs(opt.epochs)
                                                 .steps_per_epoch(steps_per_epoch));

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
      auto loss = F::cross_entropy(model(batch.data), batch.target);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      double lr = scheduler.get_last_lr()[0];
      scheduler.step();
      double l = loss.item<double>();
      traced_step.set_loss(l);
      traced_step.set_lr(lr);
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
  model->eval();  // batch norm uses its running statistics
  int64_t correct = 0, total = 0;
  for (auto& b : test_loader) {
    correct += model(b.data).argmax(1).eq(b.target).sum().item<int64_t>();
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
