// tests/engine/cuda/blas_gpu_test.cpp — GPU tier: matrix products through cuBLAS (engine/cuda/blas.cu) against the
// CPU's BLAS: mm, addmm, bmm, matmul's broadcasting and linear, with transposed and sliced operands, in float32
// (TF32 off: exact products), float64, float16 and bfloat16; then a whole MLP training step on cuda against the same
// step on the cpu.
#include <cuda_runtime.h>

#include <string>
#include <thread>

#include "cuda/kernels.h"
#include "glassbox/core/cuda_stream.h"
#include "support/check.h"

using gbtest::kGpu;

namespace {

void check_product(const gb::Tensor& gpu, const gb::Tensor& cpu) {
  const gb::ScalarType t = cpu.scalar_type();
  const double rtol = t == gb::kDouble ? 1e-12 : t == gb::kFloat ? 1e-5 : t == gb::kHalf ? 2e-3 : 1.6e-2;
  CHECK(gpu.device() == kGpu);
  gbtest::check_close(gpu, cpu, rtol, rtol);
}
}  // namespace

TEST_CASE("mm, addmm, bmm and matmul equal the cpu in every floating dtype") {
  gb::backends::cuda::matmul::allow_tf32 = false;
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16}) {
    CAPTURE(gb::to_string(t));
    gb::manual_seed(21);
    gb::Tensor a = gb::randn({33, 17}).to(t), b = gb::randn({17, 9}).to(t), c = gb::randn({9}).to(t);
    check_product(gb::mm(a.to(kGpu), b.to(kGpu)), gb::mm(a, b));
    check_product(gb::mm(b.t().to(kGpu).t(), a.t().to(kGpu).t().t().t()), gb::mm(b.t().t(), a.t().t().t().t()));
    check_product(gb::mm(a.t().contiguous().to(kGpu).t(), b.to(kGpu)), gb::mm(a, b));  // a column-major operand
    check_product(gb::addmm(c.to(kGpu), a.to(kGpu), b.to(kGpu), 0.5, 2), gb::addmm(c, a, b, 0.5, 2));
    gb::Tensor x = gb::randn({4, 6, 17}).to(t), y = gb::randn({4, 17, 5}).to(t);
    check_product(gb::bmm(x.to(kGpu), y.to(kGpu)), gb::bmm(x, y));
    check_product(gb::matmul(x.to(kGpu), b.to(kGpu)), gb::matmul(x, b));   // (4,6,17) @ (17,9): folded
    check_product(gb::matmul(b.t().to(kGpu), x.transpose(1, 2).to(kGpu)), gb::matmul(b.t(), x.transpose(1, 2)));
    check_product(gb::matmul(a.to(kGpu), b.select(1, 0).to(kGpu)), gb::matmul(a, b.select(1, 0)));  // matrix @ vector
    check_product(a.to(kGpu).slice(0, 3, 20).mm(b.to(kGpu)), a.slice(0, 3, 20).mm(b));  // a row window
  }
  // integers are refused with the next step, as PyTorch's "addmm_cuda" not implemented for 'Long'
  CHECK_THROWS_WITH(gb::mm(gb::ones({2, 2}, gb::kInt64).to(kGpu), gb::ones({2, 2}, gb::kInt64).to(kGpu)),
                    doctest::Contains("not implemented for 'Long'"));
}

// addmm with a bias vector (beta = alpha = 1, linear's case) runs on cuBLASLt's bias epilogue (blas.cu's
// gemm_and_bias): its 4 MiB workspace comes from the caching allocator, which is how this sees the path was taken.
TEST_CASE("addmm and linear with a bias vector take cuBLASLt's bias epilogue and equal the cpu") {
  gb::backends::cuda::matmul::allow_tf32 = false;
  auto allocated = [] { return gb::memory::memory_stats(kGpu).allocated_bytes[gb::memory::kAll].allocated; };
  for (gb::ScalarType t : {gb::kFloat, gb::kHalf, gb::kBFloat16}) {
    CAPTURE(std::string(gb::to_string(t)));
    gb::manual_seed(23);
    gb::Tensor a = gb::randn({33, 17}).to(t), b = gb::randn({17, 9}).to(t), c = gb::randn({9}).to(t);
    gb::Tensor w = gb::randn({9, 17}).to(t);
    const int64_t before = allocated();
    check_product(gb::addmm(c.to(kGpu), a.to(kGpu), b.to(kGpu)), gb::addmm(c, a, b));
    CHECK(allocated() - before >= (4 << 20));
    check_product(gb::linear(a.to(kGpu), w.to(kGpu), c.to(kGpu)), gb::linear(a, w, c));  // b = w^T: transposed
    check_product(gb::addmm(c.to(kGpu), a.t().contiguous().to(kGpu).t(), b.to(kGpu)), gb::addmm(c, a, b));
    // odd addresses (a view 1 element in) and an odd leading dimension: the heuristic is told the alignment
    gb::Tensor big = gb::randn({34 * 17 + 1}).to(t);
    gb::Tensor av = big.narrow(0, 1, 33 * 17).view({33, 17});
    check_product(gb::addmm(c.to(kGpu), big.to(kGpu).narrow(0, 1, 33 * 17).view({33, 17}), b.to(kGpu)),
                  gb::addmm(c, av, b));
    // a bias off a 16-byte boundary (a slice of a longer vector): cuBLASLt is not told the bias's alignment, so this
    // takes the copy path (a misaligned epilogue load would fault and poison the context)
    gb::Tensor cb = gb::randn({12}).to(t);
    check_product(gb::addmm(cb.to(kGpu).narrow(0, 3, 9), a.to(kGpu), b.to(kGpu)), gb::addmm(cb.narrow(0, 3, 9), a, b));
    // not the epilogue's case: the copy-then-GEMM path, same values
    const int64_t before_other = allocated();
    check_product(gb::addmm(c.to(kGpu), a.to(kGpu), b.to(kGpu), 0.5, 2), gb::addmm(c, a, b, 0.5, 2));
    gb::Tensor c2 = gb::randn({33, 9}).to(t);
    check_product(gb::addmm(c2.to(kGpu), a.to(kGpu), b.to(kGpu)), gb::addmm(c2, a, b));
    CHECK(allocated() - before_other < (4 << 20));
  }
  // float64 has no bias epilogue here: the copy path
  gb::Tensor a = gb::randn({5, 3}, gb::kDouble), b = gb::randn({3, 4}, gb::kDouble), c = gb::randn({4}, gb::kDouble);
  check_product(gb::addmm(c.to(kGpu), a.to(kGpu), b.to(kGpu)), gb::addmm(c, a, b));
  // and linear's backward through it
  gb::Tensor x = gb::randn({8, 17}).requires_grad_(), w = gb::randn({9, 17}).requires_grad_(),
             bias = gb::randn({9}).requires_grad_();
  gb::Tensor xg = x.detach().to(kGpu).requires_grad_(), wg = w.detach().to(kGpu).requires_grad_(),
             bg = bias.detach().to(kGpu).requires_grad_();
  gb::linear(x, w, bias).sum().backward();
  gb::linear(xg, wg, bg).sum().backward();
  check_product(bg.grad(), bias.grad());
  check_product(wg.grad(), w.grad());
}

// _addmm_activation on cuda: a bias vector takes cuBLASLt's RELU_BIAS / GELU_BIAS epilogue (GELU's tanh form, as
// PyTorch's cuda op), anything else addmm + the activation; both against the cpu's values of the same formula.
TEST_CASE("_addmm_activation on cuda: the epilogue and the fallback equal the cpu") {
  gb::backends::cuda::matmul::allow_tf32 = false;
  for (gb::ScalarType t : {gb::kFloat, gb::kHalf, gb::kBFloat16}) {
    CAPTURE(std::string(gb::to_string(t)));
    gb::manual_seed(24);
    gb::Tensor a = gb::randn({33, 17}).to(t), b = gb::randn({17, 9}).to(t), c = gb::randn({9}).to(t);
    gb::Tensor c2 = gb::randn({33, 9}).to(t);
    check_product(gb::_addmm_activation(c.to(kGpu), a.to(kGpu), b.to(kGpu)), gb::relu(gb::addmm(c, a, b)));
    check_product(gb::_addmm_activation(c.to(kGpu), a.to(kGpu), b.to(kGpu), 1, 1, true),
                  gb::gelu(gb::addmm(c, a, b), "tanh"));
    check_product(gb::_addmm_activation(c2.to(kGpu), a.to(kGpu), b.to(kGpu), 1, 1, true),
                  gb::gelu(gb::addmm(c2, a, b), "tanh"));
    check_product(gb::_addmm_activation(c2.to(kGpu), a.to(kGpu), b.to(kGpu), 0.5, 2),
                  gb::relu(gb::addmm(c2, a, b, 0.5, 2)));
  }
}

TEST_CASE("TF32 is used only when allowed, and then within its precision") {
  gb::manual_seed(22);
  gb::Tensor a = gb::randn({256, 256}), b = gb::randn({256, 256});
  gb::Tensor exact = gb::mm(a.to(gb::kDouble), b.to(gb::kDouble));
  gb::backends::cuda::matmul::allow_tf32 = false;
  gb::Tensor f32 = gb::mm(a.to(kGpu), b.to(kGpu)).cpu().to(gb::kDouble);
  gb::backends::cuda::matmul::allow_tf32 = true;
  gb::Tensor tf32 = gb::mm(a.to(kGpu), b.to(kGpu)).cpu().to(gb::kDouble);
  gb::backends::cuda::matmul::allow_tf32 = false;
  const double err32 = (f32 - exact).abs().max().item().to_double();
  const double errtf = (tf32 - exact).abs().max().item().to_double();
  CHECK(err32 < 1e-3);
  CHECK(errtf < 0.2);      // TF32 keeps 10 mantissa bits
  CHECK(errtf > err32);    // and is measurably less exact: the flag reached cuBLAS
}

TEST_CASE("an MLP training step on cuda matches the same step on the cpu") {
  gb::manual_seed(23);
  gb::nn::Sequential cpu_net(gb::nn::Linear(20, 64), gb::nn::ReLU(), gb::nn::Linear(64, 64), gb::nn::Tanh(),
                             gb::nn::Linear(64, 5));
  gb::manual_seed(23);
  gb::nn::Sequential gpu_net(gb::nn::Linear(20, 64), gb::nn::ReLU(), gb::nn::Linear(64, 64), gb::nn::Tanh(),
                             gb::nn::Linear(64, 5));
  gpu_net->to(kGpu);
  for (const auto& p : gpu_net->parameters()) CHECK(p.device() == kGpu);
  gb::optim::SGD cpu_opt(cpu_net->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9));
  gb::optim::SGD gpu_opt(gpu_net->parameters(), gb::optim::SGDOptions(0.1).momentum(0.9));
  gb::Tensor x = gb::randn({32, 20}), y = gb::randn({32, 5});
  for (int step = 0; step < 3; ++step) {
    cpu_opt.zero_grad();
    gpu_opt.zero_grad();
    // the squared error written out (the loss functions' fused kernels are CPU-only so far)
    gb::Tensor lc = (cpu_net->forward(x) - y).pow(2).mean();
    gb::Tensor lg = (gpu_net->forward(x.to(kGpu)) - y.to(kGpu)).pow(2).mean();
    lc.backward();
    lg.backward();
    CHECK(lg.item().to_double() == doctest::Approx(lc.item().to_double()).epsilon(1e-5));
    cpu_opt.step();
    gpu_opt.step();
  }
  auto pc = cpu_net->parameters(), pg = gpu_net->parameters();
  for (size_t i = 0; i < pc.size(); ++i) gbtest::check_close(pg[i], pc[i], 1e-4, 1e-5);
}

TEST_CASE("several host threads multiply on their own streams at once, each with the cpu's results") {
  // 4 threads, each queueing on two pool streams in turn with its one cuBLAS handle (a workspace per stream), with
  // operands whose layout needs a contiguous copy (kept alive until the GEMM is queued, ops/cuda_gemm.h) and
  // elementwise ops between the products; the results are read back on each thread's stream and compared here.
  gb::backends::cuda::matmul::allow_tf32 = false;
  constexpr int kThreads = 4, kSteps = 20;
  gb::manual_seed(27);
  std::vector<gb::Tensor> base, w, expected(kThreads), got(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    base.push_back(gb::randn({64, 2 * 96}));
    w.push_back(gb::randn({96, 80}) * 0.1);
  }
  auto run = [&](int t, gb::Device d) {
    gb::Tensor x = base[size_t(t)].to(d).slice(1, 0, 2 * 96, 2);  // (64, 96), strides (192, 2): copied for BLAS
    gb::Tensor ww = w[size_t(t)].to(d), acc = gb::zeros({64, 80}, gb::TensorOptions().device(d));
    for (int i = 0; i < kSteps; ++i) acc = gb::relu(acc * 0.5 + gb::mm(x, ww) + gb::mm(x * 0.1, ww.t().t()));
    return acc.sum({0});
  };
  for (int t = 0; t < kThreads; ++t) expected[size_t(t)] = run(t, gb::kCPU);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        gb::cuda::CUDAStream s0 = gb::cuda::getStreamFromPool(), s1 = gb::cuda::getStreamFromPool();
        gb::Tensor r;
        for (int round = 0; round < 2; ++round) {
          gb::cuda::CUDAStreamGuard guard(round % 2 ? s1 : s0);
          r = run(t, kGpu).cpu();  // the blocking copy waits for this stream's work
        }
        got[size_t(t)] = r;
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(errors[size_t(t)] == "");
    REQUIRE(got[size_t(t)].defined());
    gbtest::check_close(got[size_t(t)], expected[size_t(t)], 1e-4, 1e-4);
  }
}

TEST_CASE("cuBLASLt's workspace is 32 MiB on Hopper and later, 4 MiB before") {
  int major = 0;
  REQUIRE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
  CHECK(gb::cuda_kernels::lt_workspace_bytes(0) == (major >= 9 ? size_t(32) << 20 : size_t(4) << 20));
  // a linear through the bias epilogue with that workspace gives the cpu's result
  gb::manual_seed(28);
  gb::Tensor a = gb::randn({128, 256}), b = gb::randn({256, 512}), c = gb::randn({512});
  gb::backends::cuda::matmul::allow_tf32 = false;
  gbtest::check_close(gb::addmm(c.to(kGpu), a.to(kGpu), b.to(kGpu)), gb::addmm(c, a, b), 1e-4, 1e-4);
}
