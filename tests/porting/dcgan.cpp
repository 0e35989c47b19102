// tests/porting/dcgan.cpp — a libtorch program as libtorch's documentation writes them: a small DCGAN on MNIST
// (transposed convolutions and batch norm in the generator, a Sequential discriminator with LeakyReLU and Sigmoid,
// binary cross entropy, Adam with betas, `using namespace torch;`), checkpointed with torch::save and restored with
// torch::load. It is never compiled as it stands: tests/CMakeLists.txt renames a copy with tools/port.sh and builds
// it against glassbox; CTest runs it on MNIST-format files with made-up images. It fails unless the losses stay
// finite, the discriminator tells real from generated images after training, and a restored checkpoint (modules and
// optimizers) continues exactly as the original does.
//
//   ./porting_dcgan DATA_DIR CHECKPOINT_DIR
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

using namespace torch;

namespace {

const int64_t kNoiseSize = 16;
const int64_t kBatchSize = 64;
const int64_t kEpochs = 2;

struct ImageGeneratorImpl : nn::Module {
  explicit ImageGeneratorImpl(int64_t noise_size)
      : up1(nn::ConvTranspose2dOptions(noise_size, 32, 7).bias(false)),  // 1x1 -> 7x7
        bn1(32),
        up2(nn::ConvTranspose2dOptions(32, 16, 4).stride(2).padding(1).bias(false)),  // -> 14x14
        bn2(16),
        up3(nn::ConvTranspose2dOptions(16, 1, 4).stride(2).padding(1).bias(false)) {  // -> 28x28
    register_module("up1", up1);
    register_module("bn1", bn1);
    register_module("up2", up2);
    register_module("bn2", bn2);
    register_module("up3", up3);
  }
  torch::Tensor forward(torch::Tensor z) {
    z = torch::relu(bn1(up1(z)));
    z = torch::relu(bn2(up2(z)));
    return torch::tanh(up3(z));
  }
  nn::ConvTranspose2d up1;
  nn::BatchNorm2d bn1;
  nn::ConvTranspose2d up2;
  nn::BatchNorm2d bn2;
  nn::ConvTranspose2d up3;
};
TORCH_MODULE(ImageGenerator);

nn::Sequential make_discriminator() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 4).stride(2).padding(1).bias(false)),
                        nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 4).stride(2).padding(1).bias(false)),
                        nn::BatchNorm2d(32),
                        nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                        nn::Conv2d(nn::Conv2dOptions(32, 1, 7).bias(false)),
                        nn::Sigmoid());
}

// One discriminator step and one generator step; returns (d_loss, g_loss).
std::pair<float, float> train_step(ImageGenerator& g, nn::Sequential& d, optim::Adam& g_opt, optim::Adam& d_opt,
                                   const torch::Tensor& real, torch::Device device) {
  const int64_t n = real.size(0);
  d->zero_grad();
  torch::Tensor real_labels = torch::empty(n, device).uniform_(0.8, 1.0);
  torch::Tensor d_real = torch::binary_cross_entropy(d->forward(real).reshape(real_labels.sizes()), real_labels);
  d_real.backward();
  torch::Tensor fake = g->forward(torch::randn({n, kNoiseSize, 1, 1}, device));
  torch::Tensor fake_labels = torch::zeros(n, device);
  torch::Tensor d_fake =
      torch::binary_cross_entropy(d->forward(fake.detach()).reshape(fake_labels.sizes()), fake_labels);
  d_fake.backward();
  d_opt.step();

  g->zero_grad();
  fake_labels.fill_(1);
  torch::Tensor g_loss = torch::binary_cross_entropy(d->forward(fake).reshape(fake_labels.sizes()), fake_labels);
  g_loss.backward();
  g_opt.step();
  return {(d_real + d_fake).item<float>(), g_loss.item<float>()};
}

}  // namespace

int main(int argc, char** argv) {
  TORCH_CHECK(argc == 3, "usage: porting_dcgan DATA_DIR CHECKPOINT_DIR");
  const std::string data = argv[1], ckpt = argv[2];
  torch::manual_seed(1);
  torch::Device device(torch::kCPU);
  if (torch::cuda::is_available()) device = torch::Device(torch::kCUDA);

  ImageGenerator generator(kNoiseSize);
  generator->to(device);
  nn::Sequential discriminator = make_discriminator();
  discriminator->to(device);

  auto dataset = torch::data::datasets::MNIST(data)
                     .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                     .map(torch::data::transforms::Stack<>());
  const int64_t batches_per_epoch = std::ceil(dataset.size().value() / static_cast<double>(kBatchSize));
  auto loader = torch::data::make_data_loader(std::move(dataset),
                                              torch::data::DataLoaderOptions().batch_size(kBatchSize).workers(2));

  optim::Adam g_opt(generator->parameters(), optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.999)));
  optim::Adam d_opt(discriminator->parameters(), optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.999)));

  torch::Tensor last_real;
  for (int64_t epoch = 1; epoch <= kEpochs; ++epoch) {
    int64_t batch_index = 0;
    for (torch::data::Example<>& batch : *loader) {
      auto losses = train_step(generator, discriminator, g_opt, d_opt, batch.data.to(device), device);
      TORCH_CHECK(std::isfinite(losses.first) && std::isfinite(losses.second), "a loss went non-finite at epoch ",
                  epoch, " batch ", batch_index);
      if (++batch_index % 8 == 0)
        std::printf("[%ld/%ld][%2ld/%2ld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long>(epoch),
                    static_cast<long>(kEpochs), static_cast<long>(batch_index), static_cast<long>(batches_per_epoch),
                    losses.first, losses.second);
      last_real = batch.data.to(device);
    }
  }

  // The discriminator, in eval mode, scores real images above generated ones.
  {
    torch::NoGradGuard no_grad;
    generator->eval();
    discriminator->eval();
    const float real_score = discriminator->forward(last_real).mean().item<float>();
    const float fake_score =
        discriminator->forward(generator->forward(torch::randn({64, kNoiseSize, 1, 1}, device))).mean().item<float>();
    std::printf("discriminator: real %.3f, generated %.3f\n", real_score, fake_score);
    TORCH_CHECK(real_score > fake_score, "the discriminator did not learn to tell real from generated images");
    generator->train();
    discriminator->train();
  }

  // Checkpoint, then continue from the checkpoint in fresh objects: both continuations must agree exactly.
  torch::save(generator, ckpt + "/generator-checkpoint.pt");
  torch::save(g_opt, ckpt + "/generator-optimizer-checkpoint.pt");
  torch::save(discriminator, ckpt + "/discriminator-checkpoint.pt");
  torch::save(d_opt, ckpt + "/discriminator-optimizer-checkpoint.pt");
  torch::Tensor samples = generator->forward(torch::randn({8, kNoiseSize, 1, 1}, device));
  torch::save((samples + 1.0) / 2.0, torch::str(ckpt, "/dcgan-sample-", 1, ".pt"));

  ImageGenerator restored(kNoiseSize);
  nn::Sequential restored_d = make_discriminator();
  optim::Adam restored_g_opt(restored->parameters(), optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.999)));
  optim::Adam restored_d_opt(restored_d->parameters(), optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.999)));
  torch::load(restored, ckpt + "/generator-checkpoint.pt");
  torch::load(restored_g_opt, ckpt + "/generator-optimizer-checkpoint.pt");
  torch::load(restored_d, ckpt + "/discriminator-checkpoint.pt");
  torch::load(restored_d_opt, ckpt + "/discriminator-optimizer-checkpoint.pt");
  torch::Tensor saved_samples;
  torch::load(saved_samples, torch::str(ckpt, "/dcgan-sample-", 1, ".pt"));
  TORCH_CHECK(torch::allclose(saved_samples, (samples + 1.0) / 2.0), "the saved samples did not load back");

  torch::manual_seed(7);
  train_step(generator, discriminator, g_opt, d_opt, last_real, device);
  torch::manual_seed(7);
  train_step(restored, restored_d, restored_g_opt, restored_d_opt, last_real, device);
  auto a = generator->parameters(), b = restored->parameters();
  for (size_t i = 0; i < a.size(); ++i)
    TORCH_CHECK(torch::equal(a[i], b[i]), "parameter ", i, " differs after a step from the restored checkpoint");
  std::cout << "checkpoint restored: the next step matches" << std::endl;
  return 0;
}
