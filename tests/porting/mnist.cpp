// tests/porting/mnist.cpp — a libtorch program as libtorch's documentation writes them: a small CNN on MNIST, read
// with torch::data (datasets::MNIST, Normalize<>, Stack<>, make_data_loader with a sampler), the model a plain
// member-initialized struct held on the stack (not a shared_ptr), SGD with momentum. It is never compiled as it
// stands: tests/CMakeLists.txt renames a copy with tools/port.sh and builds it against glassbox. CTest runs it on
// MNIST-format files with made-up images (tests/samples/write_mnist_like.py; no download) and it fails unless the
// held-out accuracy reaches 90%.
//
//   ./porting_mnist DATA_DIR     (DATA_DIR holds train-images-idx3-ubyte, ..., t10k-labels-idx1-ubyte)
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <string>

namespace {

const int64_t kTrainBatchSize = 64;
const int64_t kTestBatchSize = 128;
const int64_t kEpochs = 3;

struct Classifier : torch::nn::Module {
  Classifier()
      : conv1(torch::nn::Conv2dOptions(1, 8, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(8, 16, /*kernel_size=*/5)),
        head(256, 32),
        out(32, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("head", head);
    register_module("out", out);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 256});
    x = torch::relu(head->forward(x));
    x = torch::dropout(x, /*p=*/0.25, /*train=*/is_training());
    return torch::log_softmax(out->forward(x), /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear head;
  torch::nn::Linear out;
};

template <typename Loader>
void train_epoch(int64_t epoch, Classifier& model, torch::Device device, Loader& loader,
                 torch::optim::Optimizer& optimizer, size_t dataset_size) {
  model.train();
  size_t seen = 0;
  double last_loss = 0;
  for (auto& batch : loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto loss = torch::nll_loss(model.forward(data), targets);
    AT_ASSERT(!std::isnan(loss.template item<float>()));
    loss.backward();
    optimizer.step();
    seen += static_cast<size_t>(batch.data.size(0));
    last_loss = loss.template item<float>();
  }
  std::printf("epoch %ld: %zu/%zu examples, last loss %.4f\n", static_cast<long>(epoch), seen, dataset_size, last_loss);
}

template <typename Loader>
double evaluate(Classifier& model, torch::Device device, Loader& loader, size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model.eval();
  double loss_sum = 0;
  int64_t correct = 0;
  for (const auto& batch : loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model.forward(data);
    loss_sum += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum).template item<float>();
    correct += output.argmax(1).eq(targets).sum().template item<int64_t>();
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(dataset_size);
  std::printf("test: average loss %.4f, accuracy %.3f\n", loss_sum / static_cast<double>(dataset_size), accuracy);
  return accuracy;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : "./data";
  torch::manual_seed(1);

  torch::DeviceType device_type = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  torch::Device device(device_type);
  std::cout << "Training on " << device << "." << std::endl;

  Classifier model;
  model.to(device);

  auto train_set = torch::data::datasets::MNIST(root)
                       .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                       .map(torch::data::transforms::Stack<>());
  const size_t train_size = train_set.size().value();
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(train_set), torch::data::DataLoaderOptions().batch_size(kTrainBatchSize).workers(2));

  auto test_set = torch::data::datasets::MNIST(root, torch::data::datasets::MNIST::Mode::kTest)
                      .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                      .map(torch::data::transforms::Stack<>());
  const size_t test_size = test_set.size().value();
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(test_set),
                                                                                              kTestBatchSize);

  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.05).momentum(0.5));

  double accuracy = 0;
  for (int64_t epoch = 1; epoch <= kEpochs; ++epoch) {
    train_epoch(epoch, model, device, *train_loader, optimizer, train_size);
    accuracy = evaluate(model, device, *test_loader, test_size);
  }
  TORCH_CHECK(accuracy >= 0.9, "the classifier reached only ", accuracy, " held-out accuracy (expected >= 0.9)");
  return 0;
}
