// samples/train_images.cpp — a CNN learns to classify images, fed by a DataLoader with workers.
//
// A lesson in the data pipeline: by default the images are drawn procedurally (gb::data::datasets::Shapes: circle,
// square, triangle, cross at random places, sizes and brightness, with noise); with --mnist DIR they are MNIST's IDX
// files from DIR (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte).
// Training images are augmented on worker threads (random crop with padding, horizontal flip for the shapes,
// normalize), collated into batches and prefetched while the model trains. Two models (--model):
//   small   conv 3x3 (8) - batch norm - relu - maxpool 2 - conv 3x3 (16) - batch norm - relu - maxpool 2 - linear
//   resnet  a ResNet-style net: a conv stem, then residual basic blocks (two 3x3 convs with batch norm, the input
//           added back; a strided block's shortcut is a 1x1 conv + batch norm) at widths 16, 32, 64, global average
//           pooling, linear
// trained with SGD + momentum under a OneCycleLR schedule; held-out accuracy is measured in eval mode (batch norm's
// running statistics). It ends by saying where the step time went: waiting for data, forward, backward, optimizer.
//
//   ./build/samples/train_images                           # 3 epochs of 2048 shapes, 2 workers, the small CNN
//   ./build/samples/train_images --model resnet --epochs 2  # the ResNet-style net
//   ./build/samples/train_images --mnist data/mnist --epochs 1 --train 60000
//   ./build/samples/train_images --trace runs/train_images.db && ./build/tools/glassbox report runs/train_images.db
//   options: --epochs --batch --workers --lr --seed --train N --model --mnist DIR --trace PATH --min-accuracy A
//
// Traced, each step is a span; inside it the training thread's `wait` span is how long it waited for its batch,
// and the worker threads ("dataloader worker 0", "dataloader worker 1") show each batch's `fetch` and `collate`
// spans, linked to the wait by the batch index (spans.seq). The report says whether the loop was data-bound. The
// model's calls are module spans (conv1, bn1, ... or stem, layer1.0, ...) and SGD.step an optimizer span.
//
// With --min-accuracy A the program exits 1 when held-out accuracy ends below A (the test suite uses it).
#include <glassbox/data/data.h>
#include <glassbox/glassbox.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sample_cli.h"
#include "sample_run.h"
#include "small_cnn.h"

namespace F = gb::nn::functional;
namespace T = gb::data::transforms;
using gb::data::datasets::MNIST;
using gb::data::datasets::Shapes;

namespace {

struct Options {
  int epochs = 3;
  int batch = 64;
  int workers = 2;
  int64_t train = 2048;
  double lr = 0;  // 0: the model's own, 0.05 (small) or 0.01 (resnet: at 0.02 a 12x gradient-norm jump at the peak)
  uint64_t seed = 0;
  double min_accuracy = -1;
  std::string model = "small";
  std::string mnist;
  std::string trace;
};

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app{"train_images: a CNN learns images through a DataLoader (see the comment at the top of "
               "samples/train_images.cpp)"};
  app.add_option("--epochs", o.epochs, "epochs")->check(sample_cli::kPositive);
  app.add_option("--batch", o.batch, "batch size")->check(sample_cli::kPositive);
  app.add_option("--workers", o.workers, "DataLoader worker threads")->check(sample_cli::kNonNegative);
  app.add_option("--train", o.train, "training images per epoch (MNIST: the first N of its 60000)")
      ->check(sample_cli::kPositive);
  app.add_option("--lr", o.lr, "SGD learning rate, OneCycleLR peaks at twice it (default: small 0.05, resnet 0.01)")
      ->check(sample_cli::kPositive);
  app.add_option("--seed", o.seed, "seed of the images, the augmentation and the weights");
  app.add_option("--model", o.model, "small: two conv layers; resnet: residual blocks at widths 16, 32, 64")
      ->check(CLI::IsMember({"small", "resnet"}));
  app.add_option("--mnist", o.mnist, "train on MNIST: the folder holding its four IDX files");
  app.add_option("--trace", o.trace, "record the run into this trace file, e.g. runs/train_images.db");
  app.add_option("--min-accuracy", o.min_accuracy, "exit 1 when held-out accuracy ends below this");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (o.lr == 0) o.lr = o.model == "resnet" ? 0.01 : 0.05;
  return o;
}

gb::nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return gb::nn::Conv2d(gb::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

// ResNet's basic block: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)); the shortcut is the identity, or a
// strided 1x1 conv + batch norm where the block changes the width or the resolution.
struct BasicBlockImpl : gb::nn::Module {
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride) {
    conv1 = register_module("conv1", conv3x3(in, out, stride));
    bn1 = register_module("bn1", gb::nn::BatchNorm2d(out));
    conv2 = register_module("conv2", conv3x3(out, out, 1));
    bn2 = register_module("bn2", gb::nn::BatchNorm2d(out));
    if (stride != 1 || in != out)
      shortcut = register_module(
          "shortcut", gb::nn::Sequential(gb::nn::Conv2d(gb::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                                         gb::nn::BatchNorm2d(out)));
  }
  gb::Tensor forward(const gb::Tensor& x) {
    auto h = F::relu(bn1(conv1(x)));
    h = bn2(conv2(h));
    return F::relu(h + (shortcut ? shortcut->forward(x) : x));
  }
  gb::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  gb::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  gb::nn::Sequential shortcut{nullptr};
};
GB_MODULE(BasicBlock);

// stem conv 3x3 (16) - bn - relu; layer1: 16, layer2: 32 (stride 2), layer3: 64 (stride 2), one block each;
// global average pooling; linear.
struct ResNetImpl : gb::nn::Module {
  explicit ResNetImpl(int64_t classes) {
    stem = register_module("stem", gb::nn::Sequential(conv3x3(1, 16, 1), gb::nn::BatchNorm2d(16), gb::nn::ReLU()));
    layer1 = register_module("layer1", BasicBlock(16, 16, 1));
    layer2 = register_module("layer2", BasicBlock(16, 32, 2));
    layer3 = register_module("layer3", BasicBlock(32, 64, 2));
    fc = register_module("fc", gb::nn::Linear(64, classes));
  }
  gb::Tensor forward(const gb::Tensor& x) {  // x (N,1,S,S) -> logits (N,classes)
    auto h = layer3(layer2(layer1(stem->forward(x))));
    return fc(F::adaptive_avg_pool2d(h, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1));
  }
  gb::nn::Sequential stem{nullptr};
  BasicBlock layer1{nullptr}, layer2{nullptr}, layer3{nullptr};
  gb::nn::Linear fc{nullptr};
};
GB_MODULE(ResNet);

using ImageSet = gb::data::Dataset<gb::data::Example<>>;

// The first n images of a dataset held in tensors (a shorter MNIST epoch), as a glassbox dataset.
class FirstN : public ImageSet {
 public:
  FirstN(const gb::Tensor& images, const gb::Tensor& targets, int64_t n)
      : images_(images.narrow(0, 0, n)), targets_(targets.narrow(0, 0, n)) {}
  gb::data::Example<> get(int64_t i) override { return {images_[i], targets_[i]}; }
  int64_t size() const override { return images_.size(0); }

 private:
  gb::Tensor images_, targets_;
};

struct Data {
  std::shared_ptr<ImageSet> train, test;
  int64_t image = 0, classes = 0;
  std::string name;
};

// MNIST from the user's folder (a clear error when a file is missing), the first `n` training images augmented by
// a random crop with padding; or the rendered shapes.
Data load_data(const Options& opt) {
  Data d;
  if (!opt.mnist.empty()) {
    for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                          "t10k-labels-idx1-ubyte"})
      if (!std::filesystem::exists(std::filesystem::path(opt.mnist) / f)) {
        std::fprintf(stderr,
                     "train_images: --mnist %s has no %s. The folder must hold MNIST's four IDX files, uncompressed "
                     "(gunzip the .gz downloads).\n",
                     opt.mnist.c_str(), f);
        std::exit(2);
      }
    T::Normalize normalize({0.1307}, {0.3081});
    auto train = std::make_shared<MNIST>(opt.mnist, MNIST::Mode::kTrain);
    auto test = std::make_shared<MNIST>(opt.mnist, MNIST::Mode::kTest);
    d.image = train->images().size(2);
    d.classes = 10;
    int64_t n = std::min<int64_t>(opt.train, train->images().size(0));
    auto subset = std::make_shared<FirstN>(train->images(), train->targets(), n);
    auto test_set = std::make_shared<FirstN>(test->images(), test->targets(), test->images().size(0));
    d.train = std::make_shared<gb::data::TransformDataset<>>(subset, T::Compose({T::RandomCrop(d.image, 2), normalize}));
    d.test = std::make_shared<gb::data::TransformDataset<>>(test_set, normalize);
    d.name = "MNIST " + std::to_string(n) + " digits " + std::to_string(d.image) + "x" + std::to_string(d.image);
  } else {
    d.image = 16;
    d.classes = 4;
    T::Normalize normalize({0.25}, {0.3});
    d.train = std::make_shared<Shapes>(opt.train, d.image, opt.seed,
                                       T::Compose({T::RandomCrop(d.image, 2), T::RandomHorizontalFlip(0.5), normalize}));
    d.test = std::make_shared<Shapes>(512, d.image, opt.seed + 1000, normalize);
    d.name = std::to_string(opt.train) + " rendered 16x16 shapes (4 classes)";
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  auto session = sample_run::open_trace(opt.trace);
  gb::manual_seed(opt.seed);
  Data data = load_data(opt);

  gb::data::DataLoader loader(data.train, gb::data::DataLoaderOptions()
                                              .batch_size(opt.batch)
                                              .shuffle(true)
                                              .drop_last(true)
                                              .num_workers(opt.workers)
                                              .generator(std::make_shared<gb::Generator>(opt.seed)));
  gb::data::DataLoader test_loader(data.test, gb::data::DataLoaderOptions().batch_size(256));

  std::shared_ptr<gb::nn::Module> model;
  std::function<gb::Tensor(const gb::Tensor&)> forward;
  if (opt.model == "resnet") {
    ResNet net(data.classes);
    model = net.ptr();
    forward = [net](const gb::Tensor& x) mutable { return net(x); };
  } else {
    sample_models::SmallNet net(data.image, data.classes);
    model = net.ptr();
    forward = [net](const gb::Tensor& x) mutable { return net(x); };
  }
  int64_t parameters = 0;
  for (const auto& p : model->parameters()) parameters += p.numel();
  gb::optim::SGD optimizer(model->parameters(), gb::optim::SGDOptions(opt.lr).momentum(0.9));
  const int64_t steps_per_epoch = loader.size();
  if (steps_per_epoch == 0) {
    std::fprintf(stderr, "train_images: --train %lld is smaller than one batch (--batch %d): no step to run\n",
                 (long long)opt.train, opt.batch);
    return 2;
  }
  gb::optim::OneCycleLR scheduler(optimizer, gb::optim::OneCycleLROptions(opt.lr * 2)
                                                 .epochs(opt.epochs)
                                                 .steps_per_epoch(steps_per_epoch));

  std::printf("glassbox %s — train_images: %s, model %s (%lld parameters), batch %d, %d DataLoader workers, %d "
              "engine threads%s\n",
              gb::version(), data.name.c_str(), opt.model.c_str(), (long long)parameters,
              opt.batch, opt.workers, gb::get_num_threads(), opt.trace.empty() ? "" : (", traced into " + opt.trace).c_str());
  auto t0 = std::chrono::steady_clock::now();
  sample_run::StepClock clock;
  int64_t step = 0;
  double loss_sum = 0;
  int loss_n = 0;
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    clock.start();
    auto it = loader.begin();  // the first batch is loaded (and waited for) here, before the step starts
    clock.lap("data wait");
    while (!(it == loader.end())) {
      gb::trace::StepScope traced_step(step);
      gb::data::Example<>& batch = *it;
      clock.start();
      auto loss = F::cross_entropy(forward(batch.data), batch.target);
      clock.lap("forward");
      optimizer.zero_grad();
      loss.backward();
      clock.lap("backward");
      optimizer.step();
      double lr = scheduler.get_last_lr()[0];
      scheduler.step();
      clock.lap("optimizer");
      double l = loss.item<double>();
      traced_step.set_loss(l);
      traced_step.set_lr(lr);
      loss_sum += l;
      ++loss_n;
      ++step;
      clock.start();
      ++it;  // waits for the next batch inside this step: the trace's `wait` span
      clock.lap("data wait");
    }
    std::printf("epoch %d  mean loss %.4f\n", epoch, loss_sum / loss_n);
    loss_sum = 0;
    loss_n = 0;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (session) session->stop();

  gb::NoGradGuard no_grad;
  model->eval();  // batch norm uses its running statistics
  int64_t correct = 0, total = 0;
  for (auto& b : test_loader) {
    correct += forward(b.data).argmax(1).eq(b.target).sum().item<int64_t>();
    total += b.target.size(0);
  }
  double acc = double(correct) / double(total);
  std::printf("%lld steps in %.1f s (%.1f ms/step); held-out accuracy %.1f%% (%lld images)\n", (long long)step,
              seconds, 1000.0 * seconds / double(step), 100 * acc, (long long)total);
  clock.print(step);
  if (!opt.trace.empty()) std::printf("traced into %s: glassbox report %s\n", opt.trace.c_str(), opt.trace.c_str());
  if (opt.min_accuracy >= 0 && acc < opt.min_accuracy) {
    std::fprintf(stderr, "train_images: held-out accuracy %.3f is below the required %.3f\n", acc, opt.min_accuracy);
    return 1;
  }
  return 0;
}
