// tests/engine/amp/autocast_test.cpp — autocast regions: per-op policies, nesting, disabled regions, gradients in
// the parameters' dtype, the weight cache, and bf16 results close to fp32.
#include <doctest/doctest.h>

#include "glassbox/amp/autocast.h"
#include "glassbox/autograd/saved_tensor_hooks.h"
#include "support/check.h"

namespace {

gb::Tensor param(std::vector<int64_t> shape, uint64_t seed) {
  gb::manual_seed(seed);
  return gb::randn(shape).requires_grad_(true);
}

// ||a - b|| / ||b|| in float64.
double rel_err(const gb::Tensor& a, const gb::Tensor& b) {
  gb::Tensor ad = a.detach().to(gb::kDouble), bd = b.detach().to(gb::kDouble);
  return (ad - bd).norm().item<double>() / bd.norm().item<double>();
}

}  // namespace

TEST_CASE("lower-precision ops give bf16, fp32 ops give fp32, cat and stack promote") {
  auto x = gb::randn({4, 8});
  auto w = param({6, 8}, 1), b = param({6}, 2);
  auto img = gb::randn({2, 3, 5, 5});
  auto k = param({4, 3, 3, 3}, 3);
  gb::autocast ac(gb::kCPU, gb::kBFloat16);
  CHECK(gb::linear(x, w, b).scalar_type() == gb::kBFloat16);
  CHECK(gb::matmul(x, w.t()).scalar_type() == gb::kBFloat16);
  CHECK(gb::mm(x, w.t()).scalar_type() == gb::kBFloat16);
  CHECK(gb::addmm(b, x, w.t()).scalar_type() == gb::kBFloat16);
  CHECK(gb::bmm(x.unsqueeze(0), w.t().unsqueeze(0)).scalar_type() == gb::kBFloat16);
  CHECK(gb::conv2d(img, k).scalar_type() == gb::kBFloat16);

  auto h = x.to(gb::kBFloat16);
  CHECK(gb::softmax(h, 1).scalar_type() == gb::kFloat);
  CHECK(gb::log_softmax(h, 1).scalar_type() == gb::kFloat);
  CHECK(gb::softmax(h, 1, gb::kBFloat16).scalar_type() == gb::kBFloat16);  // an explicit dtype wins
  CHECK(gb::layer_norm(h, {8}).scalar_type() == gb::kFloat);
  CHECK(gb::group_norm(h.view({4, 4, 2}), 2).scalar_type() == gb::kFloat);
  CHECK(gb::sum(h).scalar_type() == gb::kFloat);
  CHECK(gb::exp(h).scalar_type() == gb::kFloat);
  CHECK(gb::log(h.abs() + 1).scalar_type() == gb::kFloat);
  CHECK(gb::pow(h, 2).scalar_type() == gb::kFloat);
  CHECK(gb::norm(h).scalar_type() == gb::kFloat);
  auto target = gb::tensor(std::vector<int64_t>{0, 1, 2, 3});
  CHECK(gb::cross_entropy(h, target).scalar_type() == gb::kFloat);
  CHECK(gb::nll_loss(h, target).scalar_type() == gb::kFloat);
  CHECK(gb::mse_loss(h, gb::zeros({4, 8})).scalar_type() == gb::kFloat);
  CHECK(gb::l1_loss(h, gb::zeros({4, 8})).scalar_type() == gb::kFloat);
  CHECK(gb::binary_cross_entropy_with_logits(h, gb::zeros({4, 8})).scalar_type() == gb::kFloat);

  CHECK(gb::cat({h, x}).scalar_type() == gb::kFloat);
  CHECK(gb::stack({h, x}).scalar_type() == gb::kFloat);
  CHECK(gb::cat({h, h}).scalar_type() == gb::kBFloat16);
  CHECK(gb::addcmul(x, h, h).scalar_type() == gb::kFloat);

  // ops outside the lists keep their inputs' dtype; integer and double tensors are never cast
  CHECK(gb::relu(h).scalar_type() == gb::kBFloat16);
  CHECK((x + 1).scalar_type() == gb::kFloat);
  auto xd = x.to(gb::kDouble);
  CHECK(gb::mm(xd, xd.t()).scalar_type() == gb::kDouble);
  auto xi = gb::ones({2, 2}, gb::TensorOptions().dtype(gb::kInt64));
  CHECK(gb::mm(xi, xi).scalar_type() == gb::kInt64);
  CHECK(gb::sum(xi).scalar_type() == gb::kInt64);
}

TEST_CASE("queries, nesting and disabled regions restore the outer state") {
  CHECK(!gb::amp::is_autocast_enabled(gb::kCPU));
  CHECK(gb::amp::get_autocast_dtype(gb::kCPU) == gb::kBFloat16);
  CHECK(gb::amp::get_autocast_dtype(gb::kCUDA) == gb::kHalf);
  auto x = gb::randn({3, 3});
  {
    gb::autocast outer(gb::kCPU);
    CHECK(gb::amp::is_autocast_enabled(gb::kCPU));
    CHECK(!gb::amp::is_autocast_enabled(gb::kCUDA));
    {
      gb::autocast off(gb::kCPU, std::nullopt, /*enabled=*/false);
      CHECK(!gb::amp::is_autocast_enabled(gb::kCPU));
      CHECK(gb::mm(x, x).scalar_type() == gb::kFloat);
      {
        gb::autocast half(gb::kCPU, gb::kHalf);
        CHECK(gb::amp::get_autocast_dtype(gb::kCPU) == gb::kHalf);
        CHECK(gb::mm(x, x).scalar_type() == gb::kHalf);
      }
      CHECK(gb::amp::get_autocast_dtype(gb::kCPU) == gb::kBFloat16);
      CHECK(gb::mm(x, x).scalar_type() == gb::kFloat);
    }
    CHECK(gb::amp::is_autocast_enabled(gb::kCPU));
    CHECK(gb::mm(x, x).scalar_type() == gb::kBFloat16);
  }
  CHECK(!gb::amp::is_autocast_enabled(gb::kCPU));
  CHECK(gb::mm(x, x).scalar_type() == gb::kFloat);
  // a CUDA region does not touch CPU tensors
  {
    gb::autocast cuda(gb::kCUDA);
    CHECK(gb::amp::is_autocast_enabled(gb::kCUDA));
    CHECK(gb::mm(x, x).scalar_type() == gb::kFloat);
  }
  CHECK_THROWS_WITH_AS(gb::autocast(gb::kCPU, gb::kFloat), doctest::Contains("target dtype is not supported"),
                       gb::Error);
  CHECK_THROWS_AS(gb::autocast{gb::kMeta}, gb::Error);  // braces: not a declaration of kMeta
  CHECK(!gb::amp::is_autocast_enabled(gb::kCPU));
}

TEST_CASE("gradients arrive in the fp32 parameters' dtype and match fp32 within bf16 tolerance") {
  gb::manual_seed(7);
  auto x = gb::randn({16, 32});
  auto w1 = param({64, 32}, 11), b1 = param({64}, 12), w2 = param({10, 64}, 13);
  auto target = gb::tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5});
  auto forward = [&] { return gb::cross_entropy(gb::linear(gb::relu(gb::linear(x, w1, b1)), w2), target); };

  gb::Tensor ref = forward();
  ref.backward();
  gb::Tensor g1 = w1.grad().clone(), g2 = w2.grad().clone(), gb1 = b1.grad().clone();
  w1.mutable_grad() = gb::Tensor();
  w2.mutable_grad() = gb::Tensor();
  b1.mutable_grad() = gb::Tensor();

  gb::Tensor loss;
  {
    gb::autocast ac(gb::kCPU);
    loss = forward();
  }
  CHECK(loss.scalar_type() == gb::kFloat);
  loss.backward();
  REQUIRE(w1.grad().defined());
  CHECK(w1.grad().scalar_type() == gb::kFloat);
  CHECK(w2.grad().scalar_type() == gb::kFloat);
  CHECK(b1.grad().scalar_type() == gb::kFloat);
  // bf16 keeps 8 bits of mantissa (0.4% per rounding); a few roundings deep, ~1% relative overall
  gbtest::check_close(loss, ref, 1e-2, 0);
  MESSAGE("relative errors vs fp32: w1 ", rel_err(w1.grad(), g1), " w2 ", rel_err(w2.grad(), g2), " b1 ",
          rel_err(b1.grad(), gb1));
  CHECK(rel_err(w1.grad(), g1) < 3e-2);
  CHECK(rel_err(w2.grad(), g2) < 3e-2);
  CHECK(rel_err(b1.grad(), gb1) < 3e-2);
  CHECK(rel_err(w1.grad(), g1) > 0);  // bf16 really ran: not the fp32 numbers
}

TEST_CASE("bf16 matmul really computes: values within bf16 rounding of fp32") {
  gb::manual_seed(3);
  auto a = gb::randn({33, 17}), b = gb::randn({17, 9});
  gb::Tensor ref = gb::mm(a, b), got;
  {
    gb::autocast ac(gb::kCPU);
    got = gb::mm(a, b);
  }
  CHECK(got.scalar_type() == gb::kBFloat16);
  // exact product of the bf16-rounded operands, rounded once
  gb::Tensor exact = gb::mm(a.to(gb::kBFloat16).to(gb::kFloat), b.to(gb::kBFloat16).to(gb::kFloat));
  gbtest::check_close(got.to(gb::kFloat), exact.to(gb::kBFloat16).to(gb::kFloat), 0, 1e-6);
  gbtest::check_close(got.to(gb::kFloat), ref, 2e-2, 5e-2);
}

TEST_CASE("the weight cache reuses one cast per parameter inside a region and is cleared on exit") {
  auto w = param({4, 4}, 5);
  auto x = gb::randn({2, 4});
  std::shared_ptr<gb::autograd::Node> first_cast;
  {
    gb::autocast ac(gb::kCPU);
    gb::Tensor y1 = gb::linear(x, w);
    CHECK(gb::amp::autocast_cache_size() == 1);
    {
      gb::autocast inner(gb::kCPU);  // nested: same cache
      gb::Tensor y2 = gb::mm(x, w.t());
      CHECK(gb::amp::autocast_cache_size() == 1);
    }
    CHECK(gb::amp::autocast_cache_size() == 1);  // an inner exit keeps it
    gb::Tensor y3 = gb::linear(x, w);
    // both outputs reach w through the same ToCopyBackward0 node: the cast was made once
    auto cast1 = y1.grad_fn()->next_functions();
    auto cast3 = y3.grad_fn()->next_functions();
    std::shared_ptr<gb::autograd::Node> c1, c3;
    for (auto& [n, nr] : cast1)
      if (n && n->name() == "ToCopyBackward0" && n->next_functions()[0].first->is_accumulate_grad()) c1 = n;
    for (auto& [n, nr] : cast3)
      if (n && n->name() == "ToCopyBackward0" && n->next_functions()[0].first->is_accumulate_grad()) c3 = n;
    REQUIRE(c1);
    CHECK(c1 == c3);
    first_cast = c1;
    (y1.sum() + y3.sum()).backward();
    // w.grad = 2 * column sums of x, in fp32
    CHECK(w.grad().scalar_type() == gb::kFloat);
  }
  CHECK(gb::amp::autocast_cache_size() == 0);
  {
    gb::autocast ac(gb::kCPU);
    gb::Tensor y = gb::linear(x, w);
    std::shared_ptr<gb::autograd::Node> c;
    for (auto& [n, nr] : y.grad_fn()->next_functions())
      if (n && n->name() == "ToCopyBackward0" && n->next_functions()[0].first->is_accumulate_grad()) c = n;
    REQUIRE(c);
    CHECK(c != first_cast);  // a new region casts again
  }
  {
    gb::autocast ac(gb::kCPU, std::nullopt, true, /*cache_enabled=*/false);
    gb::linear(x, w);
    CHECK(gb::amp::autocast_cache_size() == 0);
    CHECK(!gb::amp::is_autocast_cache_enabled());
  }
  {  // inputs that are not parameters are not cached
    gb::autocast ac(gb::kCPU);
    gb::mm(x, x.t());
    CHECK(gb::amp::autocast_cache_size() == 0);
  }
}

TEST_CASE("inside an autocast op autocast is off: its inner ops cast nothing again") {
  // a saved-tensor pack hook runs inside the op that saves: it sees the op's view of the autocast state
  auto w = param({3, 4}, 9);
  auto x = gb::randn({2, 4});
  std::vector<bool> enabled_inside;
  std::vector<gb::ScalarType> saved_dtypes;
  gb::autocast ac(gb::kCPU);
  gb::autograd::SavedTensorHooks hooks(
      [&](const gb::Tensor& t) -> std::any {
        enabled_inside.push_back(gb::amp::is_autocast_enabled(gb::kCPU));
        saved_dtypes.push_back(t.scalar_type());
        return t;
      },
      [](const std::any& p) { return std::any_cast<gb::Tensor>(p); });
  gb::Tensor y = gb::linear(x, w);
  CHECK(gb::amp::is_autocast_enabled(gb::kCPU));  // back on after the op
  REQUIRE(!enabled_inside.empty());
  for (bool e : enabled_inside) CHECK(!e);
  for (auto d : saved_dtypes) CHECK(d == gb::kBFloat16);  // linear saved the cast operands, cast once
}
