// tests/engine/cuda/batch_norm_cudnn_gpu_test.cpp — GPU tier: batch_norm on cuda through cuDNN
// (engine/cuda/batch_norm_cudnn.cpp) against the cpu's: training steps of BatchNorm2d and BatchNorm1d (outputs,
// running statistics, all three gradients), eval mode's running statistics and its gradients, float16 inputs with
// float32 parameters, no affine parameters, and create_graph through it; PyTorch's node name for it.
#include "engine/cuda/cudnn_test_util.h"
#include "support/check.h"

using gbtest::kGpu;

namespace {

double bn_tolerance(gb::ScalarType t) { return t == gb::kDouble ? 1e-10 : t == gb::kFloat ? 1e-4 : 2e-2; }

// Two training steps and one eval forward of the same BatchNorm on both devices, input of sizes `shape` in dtype t.
template <class BN>
void check_module(BN cpu, const std::vector<int64_t>& shape, gb::ScalarType t) {
  BN gpu(cpu->options);  // the same options; its parameters copied below
  {
    gb::NoGradGuard ng;
    gpu->weight.copy_(gb::rand_like(gpu->weight));
    gpu->bias.copy_(gb::randn_like(gpu->bias));
    cpu->weight.copy_(gpu->weight);
    cpu->bias.copy_(gpu->bias);
  }
  gpu->to(kGpu);
  const double tol = bn_tolerance(t);
  for (int step = 0; step < 2; ++step) {
    CAPTURE(step);
    gb::Tensor x = (gb::randn(shape) * 3 + 1).to(t);
    gb::Tensor xc = x.clone().requires_grad_(), xg = x.to(kGpu).requires_grad_();
    gb::Tensor yc = cpu(xc.to(gb::kFloat)).to(t), yg = gpu(xg);
    CHECK(yg.scalar_type() == t);
    gbtest::check_close(yg, yc, tol, tol);
    CHECK(yg.grad_fn()->name() == "CudnnBatchNormBackward0");
    gb::Tensor g = gb::randn(shape).to(t);
    yc.backward(g);
    yg.backward(g.to(kGpu));
    gbtest::check_close(xg.grad(), xc.grad(), tol * 4, tol * 4);
    gbtest::check_close(gpu->weight.grad(), cpu->weight.grad(), tol * 4, tol * 4);
    gbtest::check_close(gpu->bias.grad(), cpu->bias.grad(), tol * 4, tol * 4);
    gbtest::check_close(gpu->running_mean, cpu->running_mean, 1e-5, 1e-5);
    gbtest::check_close(gpu->running_var, cpu->running_var, 1e-5, 1e-5);  // unbiased, as the cpu's
    CHECK(gpu->num_batches_tracked.cpu().template item<int64_t>() == step + 1);
  }
  cpu->eval();
  gpu->eval();
  gb::Tensor x = gb::randn(shape).to(t);
  gb::Tensor xc = x.clone().requires_grad_(), xg = x.to(kGpu).requires_grad_();
  gb::Tensor yc = cpu(xc.to(gb::kFloat)).to(t), yg = gpu(xg);
  gbtest::check_close(yg, yc, tol, tol);
  yc.sum().backward();
  yg.sum().backward();
  gbtest::check_close(xg.grad(), xc.grad(), tol * 4, tol * 4);  // the running statistics' gradient: w * rstd
}

}  // namespace

TEST_CASE("BatchNorm2d and BatchNorm1d on cuda train and evaluate as on the cpu") {
  if (gbtest::skip_without_cudnn()) return;
  gb::manual_seed(51);
  check_module(gb::nn::BatchNorm2d(6), {4, 6, 5, 7}, gb::kFloat);
  check_module(gb::nn::BatchNorm1d(5), {16, 5}, gb::kFloat);      // (N, C): one value per sample and channel
  check_module(gb::nn::BatchNorm1d(3), {4, 3, 9}, gb::kFloat);    // (N, C, L)
  check_module(gb::nn::BatchNorm2d(4), {3, 4, 6, 6}, gb::kHalf);  // float16 input, float32 parameters
}

TEST_CASE("batch_norm on cuda in float64, without affine parameters or running statistics") {
  if (gbtest::skip_without_cudnn()) return;
  gb::manual_seed(52);
  gb::Tensor x = gb::randn({5, 3, 4, 4}, gb::kDouble);
  gb::Tensor xc = x.clone().requires_grad_(), xg = x.to(kGpu).requires_grad_();
  gb::Tensor yc = gb::batch_norm(xc, {}, {}, {}, {}, true, 0.1, 1e-5);
  gb::Tensor yg = gb::batch_norm(xg, {}, {}, {}, {}, true, 0.1, 1e-5);
  gbtest::check_close(yg, yc, 1e-10, 1e-10);
  gb::Tensor g = gb::randn({5, 3, 4, 4}, gb::kDouble);
  yc.backward(g);
  yg.backward(g.to(kGpu));
  gbtest::check_close(xg.grad(), xc.grad(), 1e-9, 1e-9);
}

TEST_CASE("create_graph through batch_norm on cuda gives the cpu's second derivatives") {
  if (gbtest::skip_without_cudnn()) return;
  gb::manual_seed(53);
  gb::Tensor x = gb::randn({4, 3, 3, 3}, gb::kDouble), w = gb::rand({3}, gb::kDouble), b = gb::randn({3}, gb::kDouble);
  auto second = [&](const gb::Device& d) {
    gb::Tensor xd = x.to(d).requires_grad_(), wd = w.to(d).requires_grad_(), bd = b.to(d).requires_grad_();
    gb::Tensor y = gb::batch_norm(xd, wd, bd, {}, {}, true, 0.1, 1e-5);
    gb::Tensor gx = gb::autograd::grad({y.square().sum()}, {xd}, {}, true, true)[0];
    gx.square().sum().backward();
    return std::pair{xd.grad().cpu(), wd.grad().cpu()};
  };
  auto [gxx_cpu, gxw_cpu] = second(gb::kCPU);
  auto [gxx_gpu, gxw_gpu] = second(kGpu);
  gbtest::check_close(gxx_gpu, gxx_cpu, 1e-9, 1e-9);
  gbtest::check_close(gxw_gpu, gxw_cpu, 1e-9, 1e-9);
}

TEST_CASE("an input of 2^31 - 1 elements or more is refused with the size and the way out") {
  if (gbtest::skip_without_cudnn()) return;
  // (2, 1, 32768, 32769) float16: 2^31 + 65536 elements (4 GiB); cuDNN indexes in 32 bits
  gb::Tensor x = gb::empty({2, 1, 32768, 32769}, gb::TensorOptions().dtype(gb::kHalf).device(kGpu));
  CHECK_THROWS_WITH_AS(gb::batch_norm(x, {}, {}, {}, {}, true, 0.1, 1e-5),
                       doctest::Contains("batch_norm on cuda: the input [2, 1, 32768, 32769] has 2147549184 elements"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::batch_norm(x, {}, {}, {}, {}, true, 0.1, 1e-5),
                       doctest::Contains("Compute it from its formula on cuda"), gb::Error);
}
