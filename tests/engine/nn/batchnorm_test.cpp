// tests/engine/nn/batchnorm_test.cpp — BatchNorm1d/2d: buffers, running statistics by hand (momentum and the
// cumulative average), train vs eval, rank errors, repr, gradcheck in double.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"
#include "support/repr.h"
#include "support/module_scope.h"

using gbtest::repr;

TEST_CASE("BatchNorm registers PyTorch's parameters and buffers with their initial values") {
  gb::nn::BatchNorm2d bn(3);
  CHECK(bn->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(bn->named_buffers().keys() == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  gbtest::expect(bn->weight, {1, 1, 1});
  gbtest::expect(bn->bias, {0, 0, 0});
  gbtest::expect(bn->running_mean, {0, 0, 0});
  gbtest::expect(bn->running_var, {1, 1, 1});
  CHECK(bn->num_batches_tracked.scalar_type() == gb::kInt64);
  CHECK(bn->num_batches_tracked.dim() == 0);
  CHECK(bn->num_batches_tracked.item<int64_t>() == 0);

  gb::nn::BatchNorm1d plain(gb::nn::BatchNormOptions(3).affine(false).track_running_stats(false));
  CHECK(plain->named_parameters().is_empty());
  CHECK(plain->named_buffers().is_empty());
}

TEST_CASE("BatchNorm1d in training: batch statistics, running stats updated with the unbiased variance") {
  gb::nn::BatchNorm1d bn(2);
  gb::Tensor x = gb::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}, {7.0, 8.0}}).to(gb::kFloat);
  gb::Tensor y = bn(x);
  // mean (4, 5), biased var 5, unbiased 20/3
  const double s = std::sqrt(5.0 + 1e-5);
  gbtest::expect(y, {-3 / s, -3 / s, -1 / s, -1 / s, 1 / s, 1 / s, 3 / s, 3 / s}, 1e-5, 1e-6);
  gbtest::expect(bn->running_mean, {0.4, 0.5}, 1e-6, 1e-6);
  gbtest::expect(bn->running_var, {0.9 + 0.1 * 20.0 / 3, 0.9 + 0.1 * 20.0 / 3}, 1e-6, 1e-6);
  CHECK(bn->num_batches_tracked.item<int64_t>() == 1);
  bn(x);
  gbtest::expect(bn->running_mean, {0.76, 0.95}, 1e-6, 1e-6);
  CHECK(bn->num_batches_tracked.item<int64_t>() == 2);

  // eval: (x - running_mean) / sqrt(running_var + eps) * weight + bias, stats untouched
  bn->eval();
  {
    gb::NoGradGuard g;
    bn->weight.fill_(2);
    bn->bias.fill_(1);
  }
  gb::Tensor rm = bn->running_mean.clone(), rv = bn->running_var.clone();
  gb::Tensor z = bn(x);
  gbtest::check_close(z, (x - rm) / (rv + 1e-5).sqrt() * 2 + 1, 1e-6, 1e-6);
  CHECK(gb::equal(rm, bn->running_mean));
  CHECK(bn->num_batches_tracked.item<int64_t>() == 2);
}

TEST_CASE("momentum = nullopt is the cumulative moving average") {
  gb::nn::BatchNorm1d bn(gb::nn::BatchNormOptions(1).momentum(std::nullopt));
  gb::Tensor a = gb::tensor({1.0, 3.0, 5.0, 7.0}).to(gb::kFloat).view({4, 1});
  bn(a);  // factor 1: running = batch
  gbtest::expect(bn->running_mean, {4.0});
  gbtest::expect(bn->running_var, {20.0 / 3}, 1e-6, 1e-5);
  bn(a + 2);  // factor 1/2
  gbtest::expect(bn->running_mean, {5.0});
  bn(a + 5);  // factor 1/3: (4 + 6 + 9) / 3
  gbtest::expect(bn->running_mean, {19.0 / 3}, 1e-6, 1e-5);
  CHECK(repr(*bn) == "BatchNorm1d(1, eps=1e-05, momentum=None, affine=true, track_running_stats=true)");
}

TEST_CASE("BatchNorm2d over (N, C, H, W); untracked stats use the batch in eval too") {
  gb::manual_seed(3);
  gb::nn::BatchNorm2d bn(gb::nn::BatchNormOptions(3).track_running_stats(false));
  gb::Tensor x = gb::randn({4, 3, 5, 5}) * 3 + 2;
  bn->eval();
  gb::Tensor y = bn(x);
  gb::Tensor m = y.mean({0, 2, 3});
  gb::Tensor v = y.var({0, 2, 3}, /*unbiased=*/false);
  gbtest::expect(m, {0, 0, 0}, 1e-5, 1e-5);
  gbtest::expect(v, {1, 1, 1}, 1e-3, 1e-3);

  gb::nn::BatchNorm1d bn1(4);
  gb::Tensor seq = gb::randn({3, 4, 6});  // (N, C, L)
  CHECK(bn1(seq).sizes() == gb::IntArrayRef({3, 4, 6}));
  gbtest::check_close(bn1->running_mean, seq.mean({0, 2}) * 0.1, 1e-5, 1e-6);
}

TEST_CASE("BatchNorm rank errors use PyTorch's words; one value per channel in training is refused") {
  gb::nn::BatchNorm1d bn1(3);
  CHECK_THROWS_WITH_AS(bn1(gb::randn({2, 3, 4, 4})), doctest::Contains("expected 2D or 3D input (got 4D input)"),
                       gb::Error);
  gb::nn::BatchNorm2d bn2(3);
  CHECK_THROWS_WITH_AS(bn2(gb::randn({2, 3, 4})), doctest::Contains("expected 4D input (got 3D input)"), gb::Error);
  CHECK_THROWS_WITH_AS(bn1(gb::randn({1, 3})),
                       doctest::Contains("Expected more than 1 value per channel when training"), gb::Error);
  CHECK(repr(*bn2) == "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
}

TEST_CASE("BatchNorm gradients pass gradcheck in double (train and eval)") {
  gb::manual_seed(11);
  gb::nn::BatchNorm2d bn(2);
  bn->to(gb::kFloat64);
  {
    gb::NoGradGuard g;
    bn->weight.copy_(gb::tensor({1.5, -0.5}, gb::kFloat64));
    bn->bias.copy_(gb::tensor({0.2, 0.3}, gb::kFloat64));
  }
  gb::Tensor x = gb::randn({3, 2, 2, 2}, gbtest::f64_grad());
  auto f = [&](const gb::variable_list& in) { return gb::variable_list{bn->forward(in[0])}; };
  CHECK(gb::autograd::gradcheck(f, {x, bn->weight, bn->bias}));
  bn->eval();
  CHECK(gb::autograd::gradcheck(f, {x, bn->weight, bn->bias}));
}

TEST_CASE("BatchNorm's raw forward attributes its allocations to the module") {
  gb::nn::BatchNorm2d bn(2);
  gb::Tensor x = gb::randn({2, 2, 3, 3});
  CHECK(gbtest::allocation_modules([&] { bn->forward(x); }) == std::set<std::string>{"BatchNorm2d"});
}
