// tests/engine/ops/linalg_test.cpp — mm, bmm, matmul, addmm, linear, dot, outer: hand-computed values, every
// matmul shape rule (1-D promotion, batch broadcasting, folding), non-contiguous operands, 16-bit and integer
// dtypes, errors, gradcheck in f64 and gradgradcheck for the products.
#include "ops/cuda_gemm.h"
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::gradgradcheck1;

namespace {

gb::TensorOptions f64() { return gb::TensorOptions().dtype(gb::kFloat64); }

// a @ b by broadcasting and summing (no GEMM): (...,N,K,1) * (...,1,K,M) summed over K. Needs a, b >= 2-D.
gb::Tensor ref_matmul(const gb::Tensor& a, const gb::Tensor& b) {
  gb::NoGradGuard ng;
  auto a64 = a.to(gb::kFloat64), b64 = b.to(gb::kFloat64);
  return (a64.unsqueeze(-1) * b64.unsqueeze(-3)).sum({-2});
}


}  // namespace

TEST_CASE("mm computes hand-checked products in every dtype") {
  auto a = gb::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  auto b = gb::tensor({{7.0, 8.0}, {9.0, 10.0}, {11.0, 12.0}});
  for (auto dt : {gb::kFloat, gb::kFloat64, gb::kHalf, gb::kBFloat16, gb::kInt64, gb::kInt32}) {
    CAPTURE(gb::to_string(dt));
    auto c = gb::mm(a.to(dt), b.to(dt));
    CHECK(c.scalar_type() == dt);
    CHECK(c.sizes() == gb::IntArrayRef({2, 2}));
    check_values(c, {58, 64, 139, 154}, dt == gb::kBFloat16 ? 1.0 : 1e-6);
  }
  CHECK(a.mm(b).grad_fn() == nullptr);
}

TEST_CASE("mm takes transposed and sliced operands as they are") {
  gb::manual_seed(1);
  auto a = gb::randn({5, 7}, f64());
  auto b = gb::randn({7, 4}, f64());
  auto at = gb::randn({7, 5}, f64()).t();  // column-major view
  auto bt = gb::randn({4, 7}, f64()).t();
  check_close(gb::mm(a, b), ref_matmul(a, b), 1e-12, 1e-12);
  check_close(gb::mm(at, b), ref_matmul(at, b), 1e-12, 1e-12);
  check_close(gb::mm(a, bt), ref_matmul(a, bt), 1e-12, 1e-12);
  check_close(gb::mm(at, bt), ref_matmul(at, bt), 1e-12, 1e-12);
  // a row slice (row stride larger than the width), a strided slice (needs a copy), an expanded operand
  auto wide = gb::randn({5, 10}, f64());
  auto sl = wide.narrow(1, 2, 7);
  check_close(gb::mm(sl, b), ref_matmul(sl, b), 1e-12, 1e-12);
  auto stepped = gb::randn({5, 14}, f64()).slice(1, 0, 14, 2);
  check_close(gb::mm(stepped, b), ref_matmul(stepped, b), 1e-12, 1e-12);
  auto ex = gb::randn({1, 7}, f64()).expand({5, 7});
  check_close(gb::mm(ex, b), ref_matmul(ex, b), 1e-12, 1e-12);
  // a float32 product big enough for OpenBLAS's threaded kernels, on transposed operands
  auto x = gb::randn({96, 130}).t();
  auto y = gb::randn({70, 96}).t();
  check_close(gb::mm(x, y), ref_matmul(x, y), 1e-4, 1e-4);
}

TEST_CASE("mm and friends handle empty dims") {
  auto a = gb::randn({2, 0});
  auto b = gb::randn({0, 3});
  auto c = gb::mm(a, b);
  CHECK(c.sizes() == gb::IntArrayRef({2, 3}));
  check_values(c, {0, 0, 0, 0, 0, 0});
  CHECK(gb::mm(gb::randn({0, 4}), gb::randn({4, 3})).sizes() == gb::IntArrayRef({0, 3}));
  check_values(gb::addmm(gb::full({3}, 2.0), a, b, 0.5), {1, 1, 1, 1, 1, 1});
  check_values(gb::dot(gb::randn({0}), gb::randn({0})), {0});
}

TEST_CASE("bmm multiplies batch by batch") {
  auto a = gb::arange(12, f64()).view({2, 2, 3});
  auto b = gb::arange(6, f64()).view({2, 3, 1});
  auto c = gb::bmm(a, b);
  CHECK(c.sizes() == gb::IntArrayRef({2, 2, 1}));
  // batch 0: [0 1 2; 3 4 5] @ [0 1 2]^T = [5, 14]; batch 1: [6 7 8; 9 10 11] @ [3 4 5]^T = [86, 122]
  check_values(c, {5, 14, 86, 122});
  auto bt = gb::randn({2, 4, 3}, f64()).transpose(1, 2);
  check_close(gb::bmm(a, bt), ref_matmul(a, bt), 1e-12, 1e-12);
  check_values(gb::bmm(a.to(gb::kInt64), b.to(gb::kInt64)), {5, 14, 86, 122});
}

TEST_CASE("matmul follows NumPy's shape rules") {
  gb::manual_seed(2);
  auto v3 = gb::tensor({1.0, 2.0, 3.0});
  auto m = gb::tensor({{1.0, 0.0, 2.0}, {0.0, 1.0, -1.0}});  // (2,3)
  auto d = gb::matmul(v3, v3);                                 // 1-D @ 1-D: a 0-dim dot product
  CHECK(d.dim() == 0);
  check_values(d, {14});
  auto mv = gb::matmul(m, v3);  // (2,3) @ (3) -> (2)
  CHECK(mv.sizes() == gb::IntArrayRef({2}));
  check_values(mv, {7, -1});
  auto vm = gb::matmul(gb::tensor({1.0, 2.0}), m);  // (2) @ (2,3) -> (3)
  CHECK(vm.sizes() == gb::IntArrayRef({3}));
  check_values(vm, {1, 2, 0});

  struct Case {
    std::vector<int64_t> a, b, out;
  };
  std::vector<Case> cases = {
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},          // folded into one GEMM
      {{2, 3, 4}, {4}, {2, 3}},                // folded matrix-vector
      {{4}, {2, 4, 5}, {2, 5}},                // 1-D @ batch
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},          // matrix broadcast over b's batch
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}}, // batch dims broadcast
      {{1, 3, 4}, {7, 4, 2}, {7, 3, 2}},
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},
  };
  for (const auto& c : cases) {
    CAPTURE(gb::IntArrayRef(c.a));
    CAPTURE(gb::IntArrayRef(c.b));
    auto a = gb::randn(c.a, f64());
    auto b = gb::randn(c.b, f64());
    auto r = gb::matmul(a, b);
    CHECK(r.sizes() == gb::IntArrayRef(c.out));
    auto a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
    auto b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
    auto ref = ref_matmul(a2, b2);
    if (a.dim() == 1) ref = ref.squeeze(-2);
    if (b.dim() == 1) ref = ref.squeeze(-1);
    check_close(r, ref, 1e-12, 1e-12);
  }
  // a batched operand whose batch dims don't flatten without a copy (permuted) still gives the right answer
  auto p = gb::randn({3, 2, 4}, f64()).permute({1, 0, 2});  // (2,3,4), non-contiguous batch
  auto w = gb::randn({4, 5}, f64());
  check_close(gb::matmul(p, w), ref_matmul(p, w), 1e-12, 1e-12);
  check_close(p.matmul(w.t().t()), ref_matmul(p, w), 1e-12, 1e-12);
}

TEST_CASE("addmm and linear fold the bias into the GEMM") {
  auto x = gb::tensor({{1.0, 2.0}, {3.0, 4.0}});
  auto w = gb::tensor({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}});  // (out=3, in=2)
  auto b = gb::tensor({10.0, 20.0, 30.0});
  auto y = gb::linear(x, w, b);
  CHECK(y.sizes() == gb::IntArrayRef({2, 3}));
  check_values(y, {11, 22, 33, 13, 24, 37});
  check_values(gb::linear(x, w), {1, 2, 3, 3, 4, 7});
  auto x3 = gb::stack({x, x * 2.0});  // (2,2,2)
  auto y3 = gb::linear(x3, w, b);
  CHECK(y3.sizes() == gb::IntArrayRef({2, 2, 3}));
  check_values(y3, {11, 22, 33, 13, 24, 37, 12, 24, 36, 16, 28, 44});
  auto y1 = gb::linear(gb::tensor({1.0, 2.0}), w, b);
  CHECK(y1.sizes() == gb::IntArrayRef({3}));
  check_values(y1, {11, 22, 33});
  // addmm: beta * self + alpha * a @ b, self broadcast; beta = 0 ignores self (even NaN)
  check_values(gb::addmm(b, x, w.t(), 2, 3), {23, 46, 69, 29, 52, 81});
  auto nan_self = gb::full({2, 3}, std::nan(""));
  check_values(gb::addmm(nan_self, x, w.t(), 0, 1), {1, 2, 3, 3, 4, 7});
  check_values(gb::addmm(gb::ones({2, 1}, gb::kFloat), x, w.t()), {2, 3, 4, 4, 5, 8});
  // the names PyTorch gives these nodes
  auto xg = x.to(gb::kFloat64).requires_grad_();
  auto wg = w.to(gb::kFloat64).requires_grad_();
  auto bg = b.to(gb::kFloat64).requires_grad_();
  CHECK(gb::linear(xg, wg, bg).grad_fn()->name() == "LinearBackward0");  // one node per layer
  CHECK(gb::linear(xg, wg).grad_fn()->name() == "LinearBackward0");
  CHECK(gb::mm(xg, wg.t()).grad_fn()->name() == "MmBackward0");
  CHECK(gb::bmm(xg.unsqueeze(0), xg.unsqueeze(0)).grad_fn()->name() == "BmmBackward0");
  CHECK(gb::dot(bg, bg).grad_fn()->name() == "DotBackward0");
  // a big linear layer, compared with the sum-of-products reference
  gb::manual_seed(3);
  auto X = gb::randn({256, 784});
  auto W = gb::randn({1024, 784}) * 0.05;
  auto B = gb::randn({1024});
  auto Y = gb::linear(X, W, B);
  auto ref = gb::mm(X.to(gb::kFloat64), W.to(gb::kFloat64).t()) + B.to(gb::kFloat64);
  check_close(Y, ref, 1e-4, 1e-3);
}

// at::_addmm_activation's semantics on the cpu: addmm, then relu or the exact GELU on its output, the same bits as the
// two ops; not differentiable (PyTorch's NotImplemented node, raised at backward).
TEST_CASE("_addmm_activation is relu or gelu of addmm, in one op, not differentiable") {
  gb::manual_seed(31);
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble}) {
    CAPTURE(std::string(gb::to_string(t)));
    auto o = gb::TensorOptions().dtype(t);
    gb::Tensor bias = gb::randn({6}, o), m1 = gb::randn({5, 4}, o), m2 = gb::randn({4, 6}, o);
    gb::Tensor self2 = gb::randn({5, 6}, o);
    CHECK(gb::equal(gb::_addmm_activation(bias, m1, m2), gb::relu(gb::addmm(bias, m1, m2))));
    CHECK(gb::equal(gb::_addmm_activation(bias, m1, m2, 1, 1, true), gb::gelu(gb::addmm(bias, m1, m2))));
    CHECK(gb::equal(gb::_addmm_activation(self2, m1, m2, 0.5, 2), gb::relu(gb::addmm(self2, m1, m2, 0.5, 2))));
    CHECK(gb::equal(gb::_addmm_activation(self2, m1.t().contiguous().t(), m2, 1, 1, true),
                    gb::gelu(gb::addmm(self2, m1, m2))));
    // relu's zeros are really there: a product that is negative everywhere
    check_values(gb::_addmm_activation(gb::full({2}, -1.0, o), gb::ones({3, 1}, o), gb::ones({1, 2}, o) * -1.0),
                 std::vector<double>(6, 0.0));
  }
  CHECK_THROWS_WITH(gb::_addmm_activation(gb::zeros({3}), gb::zeros({2, 4}), gb::zeros({5, 3})),
                    doctest::Contains("shapes cannot be multiplied"));
  gb::Tensor w = gb::randn({4, 3}).requires_grad_();
  gb::Tensor y = gb::_addmm_activation(gb::zeros({3}), gb::randn({2, 4}), w);
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "NotImplemented");
  CHECK_THROWS_WITH(y.sum().backward(), doctest::Contains("the derivative for '_addmm_activation' is not implemented"));
}

TEST_CASE("16-bit floats multiply through float") {
  gb::manual_seed(4);
  auto a = gb::randn({6, 5});
  auto b = gb::randn({5, 3});
  for (auto dt : {gb::kHalf, gb::kBFloat16}) {
    auto c = gb::matmul(a.to(dt), b.to(dt));
    CHECK(c.scalar_type() == dt);
    check_close(c, ref_matmul(a.to(dt), b.to(dt)), 2e-2, 2e-2);
    auto l = gb::linear(a.to(dt), b.t().to(dt), gb::ones({3}, gb::kFloat).to(dt));
    check_close(l, ref_matmul(a.to(dt), b.to(dt)) + 1.0, 2e-2, 2e-2);
  }
}

TEST_CASE("dot and outer") {
  auto a = gb::tensor({1.0, 2.0, 3.0});
  auto b = gb::tensor({4.0, -5.0, 6.0});
  check_values(gb::dot(a, b), {12});
  auto strided = gb::tensor({4.0, 0.0, -5.0, 0.0, 6.0}).slice(0, 0, 5, 2);
  check_values(gb::dot(a, strided), {12});
  check_values(gb::dot(gb::arange(4), gb::arange(4)), {14});
  auto o = gb::outer(a, gb::tensor({1.0, 10.0}));
  CHECK(o.sizes() == gb::IntArrayRef({3, 2}));
  check_values(o, {1, 10, 2, 20, 3, 30});
}

TEST_CASE("shape and dtype errors name the op and both shapes") {
  auto a = gb::ones({2, 3}, gb::kFloat);
  auto b = gb::ones({4, 5}, gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::mm(a, b), doctest::Contains("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::mm(a, b), doctest::Contains("mm:"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::mm(a, gb::ones({3, 2}, gb::kFloat64)),
                       doctest::Contains("expected m1 and m2 to have the same dtype, but got: float != double"),
                       gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::mm(a, gb::ones({3}, gb::kFloat)), doctest::Contains("mat2 must be a matrix"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::matmul(a, b), doctest::Contains("matmul: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::matmul(gb::ones({2, 2, 3}, gb::kFloat), gb::ones({4}, gb::kFloat)),
                       doctest::Contains("(2x2x3 and 4)"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::matmul(gb::ones({2, 2, 3}, gb::kFloat), gb::ones({3, 3, 1}, gb::kFloat)),
                       doctest::Contains("matmul: The size of tensor a (2) must match the size of tensor b (3)"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::matmul(gb::ones({}, gb::kFloat), a),
                       doctest::Contains("both arguments to matmul need to be at least 1D, but they are 0D and 2D"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::bmm(gb::ones({2, 2, 3}, gb::kFloat), gb::ones({3, 3, 1}, gb::kFloat)),
                       doctest::Contains("Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::bmm(a, a), doctest::Contains("batch1 must be a 3D tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::linear(gb::ones({4, 3}, gb::kFloat), gb::ones({5, 2}, gb::kFloat)),
                       doctest::Contains("mat1 and mat2 shapes cannot be multiplied (4x3 and 2x5)"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::linear(a, gb::ones({5, 3}, gb::kFloat), gb::ones({4}, gb::kFloat)),
                       doctest::Contains("linear: bias of shape [4]"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::addmm(gb::ones({3, 3}, gb::kFloat), a, gb::ones({3, 2}, gb::kFloat)),
                       doctest::Contains("addmm: self of shape [3, 3]"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::dot(gb::ones({3}, gb::kFloat), gb::ones({4}, gb::kFloat)),
                       doctest::Contains("inconsistent tensor size, expected tensor [3] and src [4]"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::dot(a, a), doctest::Contains("1D tensors expected, but got 2D and 2D tensors"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::dot(gb::ones({3}, gb::kFloat), gb::ones({3}, gb::kFloat64)),
                       doctest::Contains("expected both vectors to have same dtype, but found Float and Double"),
                       gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::outer(a, gb::ones({3}, gb::kFloat)), doctest::Contains("Expected 1-D argument self, but got 2-D"),
                       gb::Error);
}

TEST_CASE("gradients of the products match finite differences") {
  gb::manual_seed(5);
  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto b = gb::randn({4, 2}, gbtest::f64_grad());
  auto at = gb::randn({4, 3}, gbtest::f64_grad());  // used as at.t(): a non-contiguous operand
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::mm(v[0], v[1]); }, {a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::mm(v[0].t(), v[1]); }, {at, b}));
  auto ba = gb::randn({2, 3, 4}, gbtest::f64_grad());
  auto bb = gb::randn({2, 4, 2}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::bmm(v[0], v[1].transpose(1, 2).transpose(1, 2)); },
                           {ba, bb}));
  // matmul in each of its paths
  auto v4 = gb::randn({4}, gbtest::f64_grad());
  auto b3 = gb::randn({3, 4, 2}, gbtest::f64_grad());
  auto b4 = gb::randn({2, 1, 3, 4}, gbtest::f64_grad());
  auto mm = [](const gb::variable_list& v) { return gb::matmul(v[0], v[1]); };
  CHECK(gbtest::gradcheck1(mm, {v4, v4}));
  CHECK(gbtest::gradcheck1(mm, {a, v4}));
  CHECK(gbtest::gradcheck1(mm, {v4, b}));
  CHECK(gbtest::gradcheck1(mm, {ba, b}));
  CHECK(gbtest::gradcheck1(mm, {ba, v4}));
  CHECK(gbtest::gradcheck1(mm, {v4, b3}));
  CHECK(gbtest::gradcheck1(mm, {a, b3}));
  CHECK(gbtest::gradcheck1(mm, {b4, b3}));
  // linear / addmm / dot / outer
  auto w = gb::randn({5, 4}, gbtest::f64_grad());
  auto bias = gb::randn({5}, gbtest::f64_grad());
  auto lin = [](const gb::variable_list& v) { return gb::linear(v[0], v[1], v[2]); };
  CHECK(gbtest::gradcheck1(lin, {a, w, bias}));
  CHECK(gbtest::gradcheck1(lin, {ba, w, bias}));
  CHECK(gbtest::gradcheck1(lin, {v4, w, bias}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::linear(v[0], v[1]); }, {ba, w}));
  auto self = gb::randn({3, 1}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::addmm(v[0], v[1], v[2], 0.5, -2); },
                           {self, a, b}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::dot(v[0], v[1]); }, {v4, gb::randn({4}, gbtest::f64_grad())}));
  auto v3 = gb::randn({3}, gbtest::f64_grad());
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::outer(v[0], v[1]); }, {v3, v4}));
}

TEST_CASE("second derivatives of mm, matmul and linear") {
  gb::manual_seed(6);
  auto a = gb::randn({3, 4}, gbtest::f64_grad());
  auto b = gb::randn({4, 2}, gbtest::f64_grad());
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::mm(v[0], v[1]); }, {a, b}));
  auto ba = gb::randn({2, 3, 4}, gbtest::f64_grad());
  auto bb = gb::randn({2, 4, 2}, gbtest::f64_grad());
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::matmul(v[0], v[1]); }, {ba, bb}));
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::matmul(v[0], v[1]); }, {ba, b}));
  auto w = gb::randn({5, 4}, gbtest::f64_grad());
  auto bias = gb::randn({5}, gbtest::f64_grad());
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::linear(v[0], v[1], v[2]); }, {a, w, bias}));
  // a nonlinear use of a product: d/da sum((a @ b)^2) depends on a, so the second derivative is not zero
  auto gg = gb::autograd::grad({(gb::mm(a, b) * gb::mm(a, b)).sum()}, {a}, {}, true, true)[0];
  CHECK(gg.requires_grad());
  CHECK(gradgradcheck1([](const gb::variable_list& v) { return gb::mm(v[0], v[1]) * gb::mm(v[0], v[1]); }, {a, b}));
}

TEST_CASE("gradients keep each input's dtype and flow through 16-bit products") {
  auto a = gb::randn({2, 3}).to(gb::kHalf).requires_grad_();
  auto b = gb::randn({3, 2}).to(gb::kHalf).requires_grad_();
  gb::mm(a, b).sum().backward();
  CHECK(a.grad().scalar_type() == gb::kHalf);
  CHECK(a.grad().sizes() == gb::IntArrayRef({2, 3}));
  check_close(a.grad(), gb::ones({2, 2}, gb::kFloat64).mm(b.detach().to(gb::kFloat64).t()), 1e-2, 1e-2);
}

TEST_CASE("a product's cuBLAS record keeps the copies it points into alive with it") {
  // cuda_gemm reads only sizes, strides and addresses, so the cpu shows what a cuda product is given: an operand no
  // BLAS layout fits is copied, and the launch record points into that copy, which must outlive the launch.
  gb::manual_seed(7);
  auto base = gb::randn({4, 10});
  auto a = base.slice(1, 0, 10, 2);  // (4, 5) with strides (10, 2): neither row- nor column-major
  auto b = gb::randn({5, 3});
  auto out = gb::empty({4, 3});
  gb::detail::CudaGemm g = gb::detail::cuda_gemm(out, a, b, 1.0, 0.0);
  REQUIRE(g.a_copy.defined());
  CHECK_FALSE(g.b_copy.defined());  // b is row-major: read as it is
  CHECK(g.launch.a == static_cast<const char*>(g.a_copy.data_ptr()));
  CHECK(g.launch.b == static_cast<const char*>(b.data_ptr()));
  CHECK(g.launch.lda == 5);
  CHECK_FALSE(g.launch.trans_a);
  // the copy is still owned after cuda_gemm returned, and holds a's values where the record points
  CHECK(g.a_copy.storage().use_count() >= 1);
  const float* p = reinterpret_cast<const float*>(g.launch.a);
  auto ac = a.contiguous();
  for (int64_t i = 0; i < 20; ++i) CHECK(p[i] == ac.data_ptr<float>()[i]);
  // a transposed operand is passed as it is, flagged transposed; nothing copied
  gb::detail::CudaGemm t = gb::detail::cuda_gemm(out, gb::randn({5, 4}).t(), b, 1.0, 0.0);
  CHECK_FALSE(t.a_copy.defined());
  CHECK(t.launch.trans_a);
}
