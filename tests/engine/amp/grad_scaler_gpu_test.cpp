// tests/engine/amp/grad_scaler_gpu_test.cpp — GPU tier: GradScaler on cuda (the fused check-and-unscale kernel,
// engine/cuda/amp.cu): gradients unscaled exactly, more tensors than one launch takes, a planted inf skipping the step
// and backing the scale off, and an autocast float16 training loop on cuda that learns.
#include <limits>

#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("unscale_ on cuda divides every gradient by the scale, over several launches") {
  std::vector<gb::Tensor> params;
  for (int i = 0; i < 150; ++i) params.push_back(gb::zeros({i + 1}).to(kGpu).requires_grad_());
  gb::optim::SGD opt(params, gb::optim::SGDOptions(0.1));
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().init_scale(1024));
  std::vector<gb::Tensor> expected;
  for (auto& p : params) {
    gb::Tensor g = gb::randn(p.sizes());
    p.mutable_grad() = (g * 1024).to(kGpu);
    expected.push_back(g);
  }
  scaler.unscale_(opt);
  for (size_t i = 0; i < params.size(); ++i) gbtest::check_close(params[i].grad(), expected[i], 1e-6, 1e-7);
  CHECK(scaler.step(opt));  // all finite: the step runs
  scaler.update();
  CHECK(scaler.get_scale() == 1024.0);
}

TEST_CASE("a non-finite gradient on cuda skips the step and backs the scale off") {
  gb::Tensor a = gb::ones({1000}).to(kGpu).requires_grad_(), b = gb::ones({10}).to(kGpu).requires_grad_();
  gb::optim::SGD opt({a, b}, gb::optim::SGDOptions(0.1));
  gb::amp::GradScaler scaler(gb::amp::GradScalerOptions().init_scale(256));
  gb::Tensor ga = gb::ones({1000});
  ga.index_put_({777}, std::numeric_limits<float>::infinity());
  a.mutable_grad() = ga.to(kGpu);
  b.mutable_grad() = gb::full({10}, 512.0).to(kGpu);
  CHECK_FALSE(scaler.step(opt));
  scaler.update();
  CHECK(scaler.get_scale() == 128.0);
  CHECK(gb::equal(a.detach().cpu(), gb::ones({1000})));      // not stepped
  gbtest::check_close(b.grad(), gb::full({10}, 2.0), 0, 0);  // unscaled all the same
}

TEST_CASE("autocast float16 on cuda with GradScaler trains an MLP") {
  gb::manual_seed(101);
  gb::nn::Sequential net(gb::nn::Linear(16, 64), gb::nn::ReLU(), gb::nn::Linear(64, 4));
  net->to(kGpu);
  gb::optim::SGD opt(net->parameters(), gb::optim::SGDOptions(0.05).momentum(0.9));
  gb::amp::GradScaler scaler;
  gb::Tensor x = gb::randn({128, 16}).to(kGpu), y = gb::randint(0, 4, {128}).to(kGpu);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    opt.zero_grad();
    gb::Tensor loss;
    {
      gb::autocast ac(gb::kCUDA);
      gb::Tensor logits = net->forward(x);
      CHECK(logits.scalar_type() == gb::kHalf);  // linear runs in float16 under CUDA autocast
      loss = gb::nn::functional::cross_entropy(logits, y);
    }
    scaler.scale(loss).backward();
    for (const auto& p : net->parameters()) CHECK(p.grad().scalar_type() == gb::kFloat);
    scaler.step(opt);
    scaler.update();
    (step == 0 ? first : last) = loss.item().to_double();
  }
  CHECK(last < 0.5 * first);
}
