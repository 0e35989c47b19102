// tests/engine/ops/loss_test.cpp — nll_loss, cross_entropy, mse_loss, l1_loss, binary_cross_entropy_with_logits:
// hand-computed values for every option (weight, ignore_index, label_smoothing, reductions, probability targets,
// pos_weight), gradients (gradcheck, gradgradcheck), and every error message.
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;

namespace {
bool gradgradcheck1(const std::function<gb::Tensor(const gb::variable_list&)>& f, const gb::variable_list& in) {
  return gb::autograd::gradgradcheck([&](const gb::variable_list& v) { return gb::variable_list{f(v)}; }, in);
}
gb::Tensor lp3() {  // log-probabilities, (3, 3)
  return gb::tensor({{-1.0, -2.0, -3.0}, {-0.5, -1.5, -2.5}, {-0.1, -0.2, -0.3}});
}
gb::Tensor idx(std::initializer_list<int64_t> v) { return gb::tensor(v); }
}  // namespace

TEST_CASE("nll_loss: reductions, weight, ignore_index") {
  auto x = lp3();
  auto t = idx({0, 2, 1});
  check_values(gb::nll_loss(x, t, {}, gb::kNone), {1, 2.5, 0.2});
  check_values(gb::nll_loss(x, t, {}, gb::kSum), {3.7});
  check_values(gb::nll_loss(x, t), {3.7 / 3});
  auto w = gb::tensor({1.0, 2.0, 3.0});
  check_values(gb::nll_loss(x, t, w), {8.9 / 6});  // mean divides by the weights of the targets
  check_values(gb::nll_loss(x, t, w, gb::kSum), {8.9});
  check_values(gb::nll_loss(x, t, {}, gb::kMean, 2), {0.6});
  check_values(gb::nll_loss(x, t, w, gb::kMean, 2), {1.4 / 3});
  check_values(gb::nll_loss(x, t, w, gb::kNone, 2), {1, 0, 0.4});
  CHECK(std::isnan(gb::nll_loss(x, idx({1, 1, 1}), {}, gb::kMean, 1).item<double>()));  // everything ignored
  // (C) input with a 0-dim target, and (N, C, d) input
  CHECK(gb::nll_loss(gb::tensor({-1.0, -2.0, -3.0}), gb::tensor(int64_t(1))).item<double>() == doctest::Approx(2));
  auto xd = gb::tensor({-1.0, -2.0, -3.0, -4.0}).view({1, 2, 2});
  auto td = idx({1, 0}).view({1, 2});
  check_values(gb::nll_loss(xd, td, {}, gb::kNone), {3, 2});
  check_values(gb::nll_loss(xd, td), {2.5});
}

TEST_CASE("nll_loss gradients") {
  auto x = lp3().to(gb::kFloat64).requires_grad_();
  auto t = idx({0, 2, 1});
  auto w = gb::tensor({1.0, 2.0, 3.0}, gb::kFloat64);
  auto y = gb::nll_loss(x, t, w);
  CHECK(y.grad_fn()->name() == "NllLossBackward0");
  y.backward();
  check_values(x.grad(), {-1.0 / 6, 0, 0, 0, 0, -3.0 / 6, 0, -2.0 / 6, 0});
  gb::manual_seed(13);
  auto xr = gb::randn({4, 5}, gbtest::f64_grad());
  auto tr = idx({4, 0, 2, 2});
  for (auto red : {gb::kNone, gb::kMean, gb::kSum}) {
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::nll_loss(v[0], tr, {}, red, 2); }, {xr}));
    CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::nll_loss(v[0], tr, {}, red); }, {xr}));
  }
  auto wr = gb::rand({5}, gb::kFloat64) + 0.5;
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::nll_loss(v[0], tr, wr, gb::kMean, 0); }, {xr}));
  auto x4 = gb::randn({2, 3, 2, 2}, gbtest::f64_grad());
  auto t4 = gb::randint(3, {2, 2, 2});
  CHECK(gb::nll_loss(x4, t4).grad_fn()->name() == "NllLoss2DBackward0");
  CHECK(
      gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::nll_loss(v[0], t4, wr.narrow(0, 0, 3)); }, {x4}));
}

TEST_CASE("nll_loss errors") {
  auto x = lp3();
  CHECK_THROWS_WITH_AS(gb::nll_loss(x, idx({0, 7, 1})), "Target 7 is out of bounds.", gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::nll_loss(x, idx({0, -1, 1})), "Target -1 is out of bounds.", gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::nll_loss(x, gb::tensor({0.0, 1.0, 1.0})),
                       doctest::Contains("expected target of scalar type Long (int64 class indices) but found Float"),
                       gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::nll_loss(x, idx({0, 1})), "Expected input batch_size (3) to match target batch_size (2).",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::nll_loss(x, idx({0, 1, 2}), gb::ones({2})),
                       "weight tensor should be defined either for all 3 classes or no classes but got weight tensor "
                       "of shape: [2]",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::nll_loss(gb::zeros({2, 3, 5}), gb::zeros({2, 4}, gb::kInt64)),
                       "Expected target size [2, 5], got [2, 4]", gb::Error);
  CHECK_THROWS_WITH_AS(gb::nll_loss(x, gb::zeros({3, 3}, gb::kInt64)),
                       doctest::Contains("0D or 1D target tensor expected, multi-target not supported"), gb::Error);
}

TEST_CASE("cross_entropy with class indices: weight, ignore_index, label_smoothing, reductions") {
  auto L = gb::tensor({{0.0, 0.0, 0.0}, {1.0, 2.0, 3.0}, {0.5, -1.0, 2.0}}, gb::kFloat64);
  auto T = idx({0, 2, 1});
  auto W = gb::tensor({1.0, 2.0, 0.5}, gb::kFloat64);
  const double tol = 1e-9;
  check_values(gb::cross_entropy(L, T), {1.582509849923216}, tol);
  check_values(gb::cross_entropy(L, T, {}, gb::kMean, -100, 0.1), {1.5658431832565494}, tol);
  check_values(gb::cross_entropy(L, T, W, gb::kMean, -100, 0.2), {2.114986815136174}, tol);
  check_values(gb::cross_entropy(L, T, W, gb::kMean, 2, 0.2), {2.2925455807206117}, tol);
  // without weights the smoothing term's mean counts ignored targets too (PyTorch's formula)
  check_values(gb::cross_entropy(L, T, {}, gb::kMean, 2, 0.2), {1.9252976731517912}, tol);
  check_values(gb::cross_entropy(L, T, W, gb::kSum, 1, 0.3), {1.8388670782125816}, tol);
  check_values(gb::cross_entropy(L, T, W, gb::kNone, 1, 0.3), {1.1535429031015152, 0.6853241751110664, 0.0}, tol);
  // (C) logits with a 0-dim target; (N, C, d) logits agree with the (N*d, C) form
  CHECK(gb::cross_entropy(L[1], gb::tensor(int64_t(2))).item<double>() ==
        doctest::Approx(0.40760596444438).epsilon(1e-9));
  gb::manual_seed(14);
  auto L3 = gb::randn({2, 4, 3}, gb::kFloat64);
  auto T3 = gb::randint(4, {2, 3});
  auto flat = gb::cross_entropy(L3.transpose(1, 2).reshape({6, 4}), T3.reshape({6}), {}, gb::kMean, -100, 0.1);
  check_close(gb::cross_entropy(L3, T3, {}, gb::kMean, -100, 0.1), flat, 1e-10, 1e-10);
  auto W4 = gb::tensor({1.0, 2.0, 0.5, 3.0}, gb::kFloat64);
  check_close(gb::cross_entropy(L3, T3, W4, gb::kNone, 1, 0.2).reshape({6}),
              gb::cross_entropy(L3.transpose(1, 2).reshape({6, 4}), T3.reshape({6}), W4, gb::kNone, 1, 0.2), 1e-10,
              1e-10);
}

TEST_CASE("cross_entropy with class probabilities") {
  auto L = gb::tensor({{0.0, 0.0, 0.0}, {1.0, 2.0, 3.0}, {0.5, -1.0, 2.0}}, gb::kFloat64);
  auto P = gb::tensor({{0.2, 0.3, 0.5}, {1.0, 0.0, 0.0}, {0.0, 0.5, 0.5}}, gb::kFloat64);
  auto W = gb::tensor({1.0, 2.0, 0.5}, gb::kFloat64);
  check_values(gb::cross_entropy(L, P), {1.7491765165898825}, 1e-9);
  check_values(gb::cross_entropy(L, P, W, gb::kMean, -100, 0.1), {2.2545736567790224}, 1e-9);
  check_values(gb::cross_entropy(L, P, {}, gb::kNone), {1.0986122886681098, 2.4076059644443806, 1.7413112966571571},
               1e-9);
  check_values(gb::cross_entropy(L, P, {}, gb::kSum), {1.0986122886681098 + 2.4076059644443806 + 1.7413112966571571},
               1e-9);
  CHECK_THROWS_WITH_AS(gb::cross_entropy(L, P, {}, gb::kMean, 1),
                       "ignore_index is not supported for floating point target", gb::Error);
}

TEST_CASE("cross_entropy gradients") {
  gb::manual_seed(15);
  auto x = gb::randn({4, 5}, gbtest::f64_grad());
  auto t = idx({4, 0, 2, 2});
  auto w = gb::rand({5}, gb::kFloat64) + 0.5;
  CHECK(gb::cross_entropy(x, t).grad_fn()->name() == "NllLossBackward0");
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::cross_entropy(v[0], t); }, {x}));
  CHECK(gbtest::gradcheck1(
      [&](const gb::variable_list& v) { return gb::cross_entropy(v[0], t, w, gb::kMean, 2, 0.15); }, {x}));
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::cross_entropy(v[0], t, w, gb::kNone, 0, 0.3); },
                           {x}));
  auto p = gb::rand({4, 5}, gb::kFloat64);
  CHECK(gbtest::gradcheck1(
      [&](const gb::variable_list& v) { return gb::cross_entropy(v[0], p, w, gb::kSum, -100, 0.1); }, {x}));
  CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::cross_entropy(v[0], t, {}, gb::kMean, -100, 0.1); },
                       {x}));
  // (N, C) mean cross entropy: grad = (softmax - onehot) / N
  auto x2 = gb::tensor({{0.0, 0.0}, {0.0, 0.0}}, gb::kFloat64).requires_grad_();
  gb::cross_entropy(x2, idx({0, 1})).backward();
  check_values(x2.grad(), {-0.25, 0.25, 0.25, -0.25});
}

TEST_CASE("cross_entropy errors") {
  auto L = gb::zeros({3, 3});
  CHECK_THROWS_WITH_AS(gb::cross_entropy(L, idx({0, 7, 1})), "Target 7 is out of bounds.", gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::cross_entropy(L, gb::tensor({0.0, 1.0, 2.0})),
                       doctest::Contains("expected target of scalar type Long"), gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::cross_entropy(L, gb::zeros({3, 3}, gb::kInt64)),
                       "Expected floating point type for target with class probabilities, got Long", gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::cross_entropy(L, idx({0, 1, 2}), {}, gb::kMean, -100, 1.5),
                       "label_smoothing must be between 0.0 and 1.0. Got: 1.5", gb::Error);
  CHECK_THROWS_WITH_AS(gb::cross_entropy(L, idx({0, 1, 2}), gb::ones({4})),
                       doctest::Contains("weight tensor should be defined either for all 3 classes"), gb::Error);
}

TEST_CASE("mse_loss and l1_loss") {
  auto x = gb::tensor({1.0, 2.0, 3.0}, gbtest::f64_grad());
  auto t = gb::tensor({1.0, 0.0, 0.0}, gb::kFloat64);
  check_values(gb::mse_loss(x, t), {13.0 / 3});
  check_values(gb::mse_loss(x, t, gb::kSum), {13});
  check_values(gb::mse_loss(x, t, gb::kNone), {0, 4, 9});
  check_values(gb::l1_loss(x, t), {5.0 / 3});
  check_values(gb::l1_loss(x, t, gb::kSum), {5});
  check_values(gb::l1_loss(x, t, gb::kNone), {0, 2, 3});
  auto y = gb::mse_loss(x, t);
  CHECK(y.grad_fn()->name() == "MseLossBackward0");
  y.backward();
  check_values(x.grad(), {0, 4.0 / 3, 2});
  x.mutable_grad() = gb::Tensor();
  gb::l1_loss(x, t).backward();
  check_values(x.grad(), {0, 1.0 / 3, 1.0 / 3});
  gb::manual_seed(16);
  auto a = gb::randn({3, 4}, gbtest::f64_grad()), b = gb::randn({3, 4}, gbtest::f64_grad());
  auto row = gb::randn({4}, gbtest::f64_grad());
  for (auto red : {gb::kNone, gb::kMean, gb::kSum}) {
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::mse_loss(v[0], v[1], red); }, {a, b}));
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::l1_loss(v[0], v[1], red); }, {a, b}));
    CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::mse_loss(v[0], v[1], red); }, {a, b}));
  }
  CHECK(
      gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::mse_loss(v[0], v[1]); }, {a, row}));  // broadcast
  CHECK(gb::mse_loss(a.detach().to(gb::kFloat), b.detach().to(gb::kFloat)).scalar_type() == gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::mse_loss(gb::ones({3}), gb::ones({4})),
                       doctest::Contains("mse_loss: The size of tensor a (3)"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::l1_loss(gb::ones({3}), gb::ones({3}, gb::kInt64)),
                       doctest::Contains("expected floating-point input and target"), gb::Error);
}

TEST_CASE("binary_cross_entropy_with_logits: pos_weight, weight, stability") {
  auto x = gb::tensor({0.0, 2.0, -1.0}, gb::kFloat64);
  auto t = gb::tensor({0.0, 1.0, 1.0}, gb::kFloat64);
  check_values(gb::binary_cross_entropy_with_logits(x, t, {}, {}, gb::kNone),
               {0.6931471805599453, 0.1269280110429725, 1.3132616875182228}, 1e-12);
  auto pw = gb::tensor({2.0, 3.0, 0.5}, gb::kFloat64);
  auto w = gb::tensor({1.0, 0.5, 2.0}, gb::kFloat64);
  check_values(gb::binary_cross_entropy_with_logits(x, t, {}, pw, gb::kNone),
               {0.6931471805599453, 0.3807840331289175, 0.6566308437591114}, 1e-12);
  check_values(gb::binary_cross_entropy_with_logits(x, t, w, pw), {0.7322669615475422}, 1e-12);
  check_values(gb::binary_cross_entropy_with_logits(x, t, w, pw, gb::kSum), {3 * 0.7322669615475422}, 1e-12);
  // large logits stay finite
  check_values(
      gb::binary_cross_entropy_with_logits(gb::tensor({100.0, -100.0}), gb::tensor({0.0, 1.0}), {}, {}, gb::kNone),
      {100, 100}, 1e-4);
  // pos_weight (C) broadcasts over (N, C)
  auto x2 = gb::zeros({2, 3});
  CHECK(gb::binary_cross_entropy_with_logits(x2, gb::ones({2, 3}), {}, gb::tensor({1.0f, 2.0f, 3.0f})).item<double>() ==
        doctest::Approx(2 * std::log(2.0)));
}

TEST_CASE("binary_cross_entropy_with_logits gradients") {
  gb::manual_seed(17);
  auto x = gb::randn({3, 4}, gbtest::f64_grad());
  auto t = gb::rand({3, 4}, gbtest::f64_grad());
  auto w = (gb::rand({4}, gb::kFloat64) + 0.5).requires_grad_();
  auto pw = (gb::rand({4}, gb::kFloat64) + 0.5).requires_grad_();
  auto f = [](const gb::variable_list& v) { return gb::binary_cross_entropy_with_logits(v[0], v[1], v[2], v[3]); };
  CHECK(f({x, t, w, pw}).grad_fn()->name() == "BinaryCrossEntropyWithLogitsBackward0");
  CHECK(gbtest::gradcheck1(f, {x, t, w, pw}));
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) { return gb::binary_cross_entropy_with_logits(v[0], v[1], {}, {}, gb::kNone); },
      {x, t}));
  CHECK(gradgradcheck1(
      [](const gb::variable_list& v) { return gb::binary_cross_entropy_with_logits(v[0], v[1], {}, {}, gb::kSum); },
      {x, t}));
  CHECK_THROWS_WITH_AS(gb::binary_cross_entropy_with_logits(gb::ones({3}), gb::ones({2})),
                       "Target size ([2]) must be the same as input size ([3])", gb::Error);
}
