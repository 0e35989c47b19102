// tests/engine/nn/transformer_gpu_test.cpp — GPU tier: a TransformerEncoderLayer on cuda (cuBLAS, the softmax,
// layer_norm and dropout kernels) against the cpu: training steps without dropout match; with dropout a seed
// repeats the run exactly.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("TransformerEncoderLayer training steps on cuda match the cpu's without dropout") {
  auto layer = [](double dropout) {
    gb::manual_seed(95);
    return gb::nn::TransformerEncoderLayer(
        gb::nn::TransformerEncoderLayerOptions(32, 4).dim_feedforward(64).dropout(dropout));
  };
  gb::backends::cuda::matmul::allow_tf32 = false;
  gb::nn::TransformerEncoderLayer cpu = layer(0), gpu = layer(0);
  gpu->to(kGpu);
  gb::optim::SGD oc(cpu->parameters(), gb::optim::SGDOptions(0.05)), og(gpu->parameters(), gb::optim::SGDOptions(0.05));
  gb::manual_seed(96);
  gb::Tensor x = gb::randn({10, 3, 32}), target = gb::randn({10, 3, 32});
  for (int step = 0; step < 2; ++step) {
    oc.zero_grad();
    og.zero_grad();
    gb::Tensor lc = (cpu(x) - target).square().mean(), lg = (gpu(x.to(kGpu)) - target.to(kGpu)).square().mean();
    lc.backward();
    lg.backward();
    CHECK(lg.item().to_double() == doctest::Approx(lc.item().to_double()).epsilon(1e-4));
    oc.step();
    og.step();
  }
  auto pc = cpu->parameters(), pg = gpu->parameters();
  for (size_t i = 0; i < pc.size(); ++i) gbtest::check_close(pg[i], pc[i], 1e-4, 1e-5);
  // with dropout: the same seed repeats the loss exactly
  gb::nn::TransformerEncoderLayer d = layer(0.1);
  d->to(kGpu);
  auto loss = [&] {
    gb::manual_seed(97);
    return (d(x.to(kGpu)) - target.to(kGpu)).square().mean().item().to_double();
  };
  const double l1 = loss(), l2 = loss();
  CHECK(std::isfinite(l1));
  CHECK(l1 == l2);
}
