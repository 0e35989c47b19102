// tests/engine/ops/loss_test.cpp — nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, kl_div: hand-computed values for every option (weight,
// ignore_index, label_smoothing, reductions, probability targets, pos_weight, beta, delta, log_target, batchmean),
// gradients (gradcheck, gradgradcheck), and every error message.
#include <cstring>
#include <limits>

#include "core/cpu_isa.h"
#include "ops/vec_math.h"
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::gradgradcheck1;
using gbtest::idx;

namespace {
gb::Tensor lp3() {  // log-probabilities, (3, 3)
  return gb::tensor({{-1.0, -2.0, -3.0}, {-0.5, -1.5, -2.5}, {-0.1, -0.2, -0.3}});
}
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

namespace {
// x's gradient after backward(g) of loss(x): the raw bytes (NaN compared as bits), and the backward's peak of cpu
// bytes allocated above where it started
struct CeRun {
  std::vector<unsigned char> loss, grad;
  int64_t backward_peak = 0;
};
template <typename Loss>
CeRun run_ce(const gb::Tensor& x0, const gb::Tensor& gout, Loss loss) {
  auto x = x0.detach().clone().requires_grad_();
  gb::Tensor l = loss(x);
  CeRun r;
  auto bytes = [](const gb::Tensor& t) {
    gb::Tensor c = t.contiguous();
    auto* p = static_cast<const unsigned char*>(c.data_ptr());
    return std::vector<unsigned char>(p, p + c.nbytes());
  };
  r.loss = bytes(l);
  gb::memory::reset_peak_stats(gb::kCPU);
  const int64_t before = gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].current;
  l.backward(gout);
  r.backward_peak = gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].peak - before;
  r.grad = bytes(x.grad());
  return r;
}
}  // namespace

// cross_entropy on (N, C) cpu logits sends nll_loss's gradient to log_softmax's backward as the N target entries
// (engine/ops/log_softmax_onehot.h) instead of a dense N x C tensor: the same bits as nll_loss(log_softmax(x)), whose
// nodes pass the dense one, and a backward that allocates one N x C tensor instead of two.
// Under every instruction set this CPU has, with plain and with non-temporal stores (ops/vec_math.h's write_row).
TEST_CASE("cross_entropy's compact backward: the bits of nll_loss(log_softmax(x)), one N x C buffer fewer") {
  gb::manual_seed(3);
  struct Shape {
    int64_t n, c;
  };
  using gb::detail::CpuIsa;
  for (CpuIsa isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512})
    for (bool stream : {false, true}) {
      if (int(isa) > int(gb::detail::cpu_isa_supported())) continue;  // not on this CPU
      gb::detail::CpuIsaGuard guard(isa);
      int64_t& threshold = gb::detail::stream_output_threshold();
      const int64_t saved_threshold = threshold;
      threshold = stream ? 0 : std::numeric_limits<int64_t>::max();
      CAPTURE(gb::detail::cpu_isa_name(isa));
      CAPTURE(stream);
      for (gb::ScalarType dt : {gb::kFloat32, gb::kFloat64})
        for (Shape sh : {Shape{7, 5}, Shape{33, 1000}, Shape{40, 17}, Shape{64, 5000}})
          for (gb::Reduction red : {gb::kMean, gb::kSum, gb::kNone})
            for (bool weighted : {false, true}) {
              CAPTURE(std::string(gb::to_string(dt)));
              CAPTURE(sh.n);
              CAPTURE(sh.c);
              CAPTURE(int(red));
              CAPTURE(weighted);
              auto x = gb::randn({sh.n, sh.c}, gb::TensorOptions().dtype(dt)) * 4.0;
              auto t = gb::randint(0, sh.c, {sh.n});
              t.index_put_({0}, 1);  // row 0 is ignored (ignore_index 1 below); row 1 holds NaN, row 2 a -inf logit
              t.index_put_({3}, sh.c - 1);
              x.index_put_({1, 0}, std::nan(""));
              x.index_put_({2, sh.c - 1}, -INFINITY);
              gb::Tensor w = weighted ? gb::rand({sh.c}, gb::TensorOptions().dtype(dt)) + 0.5 : gb::Tensor();
              auto gout = red == gb::kNone ? gb::randn({sh.n}, gb::TensorOptions().dtype(dt)) : gb::Tensor();
              CeRun fused = run_ce(x, gout, [&](const gb::Tensor& v) { return gb::cross_entropy(v, t, w, red, 1); });
              CeRun dense = run_ce(
                  x, gout, [&](const gb::Tensor& v) { return gb::nll_loss(gb::log_softmax(v, 1), t, w, red, 1); });
              CHECK(fused.loss == dense.loss);
              CHECK(fused.grad == dense.grad);
              const int64_t nc = sh.n * sh.c * gb::element_size(dt);
              if (nc >= (1 << 16)) {  // small tensors round up to blocks of their own; the big ones show the buffer
                CHECK(fused.backward_peak < nc + nc / 2);
                CHECK(dense.backward_peak >= 2 * nc);
              }
            }
      threshold = saved_threshold;
    }
}

TEST_CASE("cross_entropy's compact backward: the graph is PyTorch's, and create_graph takes the dense path") {
  gb::manual_seed(4);
  auto x = gb::randn({6, 4}, gbtest::f64_grad());
  auto t = idx({0, 3, 3, 1, 2, 0});
  gb::Tensor l = gb::cross_entropy(x, t);
  REQUIRE(l.grad_fn()->name() == "NllLossBackward0");
  REQUIRE(l.grad_fn()->next_edges().size() == 1);
  CHECK(l.grad_fn()->next_edges()[0].function->name() == "LogSoftmaxBackward0");
  // second order through the compact pair: NllLossBackward0 sends the dense, differentiable gradient under create_graph
  CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::cross_entropy(v[0], t); }, {x}));
  CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::cross_entropy(v[0], t, {}, gb::kNone, 3); }, {x}));
  // backward twice over a retained graph gives the same gradient both times
  gb::Tensor l2 = gb::cross_entropy(x, t, {}, gb::kSum);
  auto g1 = gb::autograd::grad({l2}, {x}, {}, true)[0];
  auto g2 = gb::autograd::grad({l2}, {x})[0];
  CHECK(gb::equal(g1, g2));
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

TEST_CASE("smooth_l1_loss and huber_loss: values at and around the threshold") {
  auto x = gb::tensor({0.0, 0.5, 3.0, -2.0}, gbtest::f64_grad());
  auto t = gb::zeros({4}, gb::kFloat64);
  check_values(gb::smooth_l1_loss(x, t, gb::kNone), {0, 0.125, 2.5, 1.5});
  check_values(gb::smooth_l1_loss(x, t), {4.125 / 4});
  check_values(gb::smooth_l1_loss(x, t, gb::kSum, 0.5), {0 + 0.25 + 2.75 + 1.75});
  check_values(gb::smooth_l1_loss(x, t, gb::kNone, 0.0), {0, 0.5, 3, 2});  // beta 0 is l1_loss
  CHECK(gb::smooth_l1_loss(x, t, gb::kSum, 0.0).grad_fn()->name() == "L1LossBackward0");
  check_values(gb::huber_loss(x, t, gb::kNone), {0, 0.125, 2.5, 1.5});
  check_values(gb::huber_loss(x, t, gb::kNone, 2.0), {0, 0.125, 4, 2});
  check_values(gb::huber_loss(x, t, gb::kMean, 2.0), {6.125 / 4});
  auto y = gb::smooth_l1_loss(x, t, gb::kSum);
  CHECK(y.grad_fn()->name() == "SmoothL1LossBackward0");
  y.backward();
  check_values(x.grad(), {0, 0.5, 1, -1});
  x.mutable_grad() = gb::Tensor();
  auto h = gb::huber_loss(x, t, gb::kSum, 2.0);
  CHECK(h.grad_fn()->name() == "HuberLossBackward0");
  h.backward();
  check_values(x.grad(), {0, 0.5, 2, -2});
  // huber = delta * smooth_l1 with beta = delta
  gb::manual_seed(21);
  auto a = gb::randn({5, 3}, gb::kFloat64) * 2, b = gb::randn({5, 3}, gb::kFloat64);
  check_close(gb::huber_loss(a, b, gb::kNone, 1.5), gb::smooth_l1_loss(a, b, gb::kNone, 1.5) * 1.5, 1e-12, 1e-12);
}

TEST_CASE("smooth_l1_loss and huber_loss gradients, broadcasting and errors") {
  gb::manual_seed(22);
  auto a = (gb::randn({3, 4}, gb::kFloat64) * 2).requires_grad_(), b = gb::randn({3, 4}, gbtest::f64_grad());
  auto row = gb::randn({4}, gbtest::f64_grad());
  for (auto red : {gb::kNone, gb::kMean, gb::kSum}) {
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::smooth_l1_loss(v[0], v[1], red, 0.7); },
                             {a, b}));
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::huber_loss(v[0], v[1], red, 1.3); }, {a, b}));
    CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::smooth_l1_loss(v[0], v[1], red, 0.7); }, {a, b}));
    CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::huber_loss(v[0], v[1], red, 1.3); }, {a, b}));
  }
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::huber_loss(v[0], v[1]); }, {a, row}));
  CHECK(gb::smooth_l1_loss(a, row, gb::kNone).sizes() == gb::IntArrayRef({3, 4}));
  CHECK(gb::huber_loss(a.detach().to(gb::kFloat), b.detach().to(gb::kFloat)).scalar_type() == gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::smooth_l1_loss(a, b, gb::kMean, -1),
                       doctest::Contains("smooth_l1_loss does not support negative values for beta"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::huber_loss(a, b, gb::kMean, 0),
                       doctest::Contains("huber_loss does not support non-positive values for delta"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::huber_loss(gb::ones({3}), gb::ones({4})),
                       doctest::Contains("huber_loss: The size of tensor a (3)"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::smooth_l1_loss(gb::ones({3}), gb::ones({3}, gb::kInt64)),
                       doctest::Contains("expected floating-point input and target"), gb::Error);
}

TEST_CASE("binary_cross_entropy: values, weight, the -100 clamp") {
  auto x = gb::tensor({0.5, 0.9, 0.2}, gbtest::f64_grad());
  auto t = gb::tensor({1.0, 0.0, 0.25}, gbtest::f64_grad());
  check_values(gb::binary_cross_entropy(x, t, {}, gb::kNone), {0.6931471805599453, 2.302585092994046,
                                                               0.5697171415941824}, 1e-12);
  check_values(gb::binary_cross_entropy(x, t), {1.1884831383827246}, 1e-12);
  check_values(gb::binary_cross_entropy(x, t, gb::tensor({1.0, 2.0, 0.5}, gb::kFloat64)), {1.8610586457817095},
               1e-12);
  auto y = gb::binary_cross_entropy(x, t);
  CHECK(y.grad_fn()->name() == "BinaryCrossEntropyBackward0");
  y.backward();
  check_values(x.grad(), {-2.0 / 3, 10.0 / 3, -0.10416666666666663}, 1e-12);
  check_values(t.grad(), {0.0, -0.7324081924454066, 0.46209812037329684}, 1e-12);
  // log(0) is clamped to -100: a certain wrong answer costs 100, a certain right one 0
  check_values(gb::binary_cross_entropy(gb::tensor({0.0, 1.0, 1.0}), gb::tensor({1.0f, 1.0f, 0.0f}), {}, gb::kNone),
               {100, 0, 100});
  // weight (C) broadcasts over (N, C)
  auto w = gb::tensor({1.0f, 0.0f});
  check_values(gb::binary_cross_entropy(gb::full({3, 2}, 0.5), gb::ones({3, 2}), w, gb::kSum), {3 * std::log(2.0)});
}

TEST_CASE("binary_cross_entropy gradients and errors") {
  gb::manual_seed(23);
  auto x = (gb::rand({3, 4}, gb::kFloat64) * 0.8 + 0.1).requires_grad_();
  auto t = gb::rand({3, 4}, gbtest::f64_grad());
  auto w = gb::rand({4}, gb::kFloat64) + 0.5;
  for (auto red : {gb::kNone, gb::kMean, gb::kSum}) {
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::binary_cross_entropy(v[0], v[1], w, red); },
                             {x, t}));
    CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::binary_cross_entropy(v[0], v[1], {}, red); },
                         {x, t}));
  }
  CHECK_THROWS_WITH_AS(gb::binary_cross_entropy(gb::tensor({0.5f, 1.5f}), gb::ones({2})),
                       doctest::Contains("all elements of input should be between 0 and 1 (found 1.5). "
                                         "binary_cross_entropy takes probabilities: apply sigmoid first"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::binary_cross_entropy(gb::full({3}, 0.5), gb::ones({2})),
                       "Using a target size ([2]) that is different to the input size ([3]) is deprecated. Please "
                       "ensure they have the same size.",
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::binary_cross_entropy(gb::full({3}, 0.5), gb::ones({3}), gb::ones({2, 3})),
                       doctest::Contains("does not broadcast to the input's shape [3]"), gb::Error);
}

TEST_CASE("kl_div: values, log_target, zero targets, gradients") {
  auto lq = gb::tensor({0.25, 0.75}, gb::kFloat64).log().view({1, 2}).requires_grad_();
  auto p = gb::tensor({0.5, 0.5}, gb::kFloat64).view({1, 2});
  check_values(gb::kl_div(lq, p, gb::kSum), {0.14384103622589045}, 1e-12);
  check_values(gb::kl_div(lq, p), {0.14384103622589045 / 2}, 1e-12);
  check_values(gb::kl_div(lq, p.log(), gb::kSum, true), {0.14384103622589045}, 1e-12);
  // a zero target adds nothing (not NaN)
  check_values(gb::kl_div(lq, gb::tensor({1.0, 0.0}, gb::kFloat64).view({1, 2}), gb::kNone), {std::log(4.0), 0}, 1e-12);
  check_values(gb::kl_div(gb::tensor({-1.0, -2.0}), gb::tensor({-1.0, -2.0}), gb::kSum, true), {0.0});
  gb::kl_div(lq, p, gb::kSum).backward();
  check_values(lq.grad(), {-0.5, -0.5});
  gb::manual_seed(24);
  auto x = gb::randn({3, 4}, gbtest::f64_grad());
  auto t = (gb::rand({3, 4}, gb::kFloat64) + 0.1).requires_grad_();
  auto lt = gb::randn({3, 4}, gbtest::f64_grad());
  for (auto red : {gb::kNone, gb::kMean, gb::kSum}) {
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::kl_div(v[0], v[1], red); }, {x, t}));
    CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gb::kl_div(v[0], v[1], red, true); }, {x, lt}));
    CHECK(gradgradcheck1([&](const gb::variable_list& v) { return gb::kl_div(v[0], v[1], red); }, {x, t}));
  }
  CHECK_THROWS_WITH_AS(gb::kl_div(gb::ones({3}), gb::ones({4})), doctest::Contains("kl_div: The size of tensor a (3)"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::kl_div(gb::ones({3}), gb::ones({3}, gb::kInt64)),
                       doctest::Contains("expected floating-point input and target"), gb::Error);
}

TEST_CASE("functional losses: libtorch's option structs, kBatchMean, smooth_l1_loss's beta argument") {
  namespace F = gb::nn::functional;
  gb::manual_seed(25);
  auto x = gb::randn({4, 3}, gb::kFloat64), y = gb::randn({4, 3}, gb::kFloat64);
  check_close(F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions(gb::kSum).beta(0.5)),
              gb::smooth_l1_loss(x, y, gb::kSum, 0.5), 1e-12, 1e-12);
  check_close(F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions(gb::kNone), 0.3),
              gb::smooth_l1_loss(x, y, gb::kNone, 0.3), 1e-12, 1e-12);
  check_close(F::huber_loss(x, y, F::HuberLossFuncOptions().delta(0.4).reduction(gb::kSum)),
              gb::huber_loss(x, y, gb::kSum, 0.4), 1e-12, 1e-12);
  auto p = gb::rand({4, 3}, gb::kFloat64) * 0.8 + 0.1;
  auto two = gb::full({3}, 2.0, gb::kFloat64);
  check_close(F::binary_cross_entropy(p, p.round(), F::BinaryCrossEntropyFuncOptions().weight(two)),
              gb::binary_cross_entropy(p, p.round()) * 2, 1e-12, 1e-12);
  auto lq = x.log_softmax(1), t = y.softmax(1);
  check_close(F::kl_div(lq, t, F::KLDivFuncOptions(gb::kBatchMean)), gb::kl_div(lq, t, gb::kSum) / 4, 1e-12, 1e-12);
  check_close(F::kl_div(lq, t.log(), F::KLDivFuncOptions().reduction(gb::kBatchMean).log_target(true)),
              gb::kl_div(lq, t, gb::kSum) / 4, 1e-12, 1e-12);
  check_close(F::kl_div(lq, t), gb::kl_div(lq, t), 1e-12, 1e-12);
  CHECK(F::kl_div(lq, t, gb::kNone).sizes() == gb::IntArrayRef({4, 3}));
  check_close(F::l1_loss(x, y, gb::kSum), gb::l1_loss(x, y, gb::kSum), 1e-12, 1e-12);
}
