// tests/engine/ops/softmax_test.cpp — softmax and log_softmax: hand-computed values, stability at large and
// infinite inputs, any dim (rows and columns kernels, non-contiguous inputs) against a naive loop, 16-bit
// inputs, the dtype argument, errors, and first and second derivatives; the row kernels under every instruction set
// this CPU has (the baseline included).
#include <limits>

#include "core/cpu_isa.h"
#include "engine/ops/row_kernel_checks.h"
#include "support/check.h"

using gbtest::check_close;
using gbtest::check_values;
using gbtest::kInf;

namespace {

// softmax over the last dim of a contiguous 2-D tensor, in double.
std::vector<double> naive_softmax_rows(const gb::Tensor& x, bool log) {
  auto v = gbtest::values(x);
  int64_t R = x.size(0), C = x.size(1);
  std::vector<double> out(v.size());
  for (int64_t r = 0; r < R; ++r) {
    double mx = -kInf, s = 0;
    for (int64_t c = 0; c < C; ++c) mx = std::max(mx, v[size_t(r * C + c)]);
    for (int64_t c = 0; c < C; ++c) s += std::exp(v[size_t(r * C + c)] - mx);
    for (int64_t c = 0; c < C; ++c) {
      double z = v[size_t(r * C + c)] - mx;
      out[size_t(r * C + c)] = log ? z - std::log(s) : std::exp(z) / s;
    }
  }
  return out;
}
// softmax and log_softmax along dim 1 and their gradients for g, as values (row_kernel_checks.h compares them).
gbtest::Values softmax_values(const gb::Tensor& x, const gb::Tensor& g) {
  auto y = x.softmax(1), ly = x.log_softmax(1);
  return {gbtest::values(y), gbtest::values(ly), gbtest::values(gb::autograd::grad({y}, {x}, {g})[0]),
          gbtest::values(gb::autograd::grad({ly}, {x}, {g})[0])};
}
}  // namespace

TEST_CASE("softmax and log_softmax of a vector") {
  auto x = gb::tensor({1.0, 2.0, 3.0});
  double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  check_values(gb::softmax(x, 0), {std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s});
  check_values(x.log_softmax(-1), {1 - std::log(s), 2 - std::log(s), 3 - std::log(s)}, 1e-5);
  CHECK(gb::softmax(x, 0).scalar_type() == gb::kFloat);
  check_values(gb::softmax(x, 0).sum(), {1.0});
}

TEST_CASE("softmax along each dim of a matrix") {
  // x = [[0, ln 3], [ln 2, ln 2]]
  auto x = gb::tensor({{0.0, std::log(3.0)}, {std::log(2.0), std::log(2.0)}});
  check_values(x.softmax(1), {0.25, 0.75, 0.5, 0.5});
  check_values(x.softmax(-1), {0.25, 0.75, 0.5, 0.5});
  check_values(x.softmax(0), {1.0 / 3, 0.6, 2.0 / 3, 0.4});
  check_values(x.log_softmax(0), {std::log(1.0 / 3), std::log(0.6), std::log(2.0 / 3), std::log(0.4)}, 1e-5);
  check_values(x.t().softmax(1), {1.0 / 3, 2.0 / 3, 0.6, 0.4});  // non-contiguous
  auto y = gb::arange(24).view({2, 3, 4}).to(gb::kFloat64);
  auto s1 = y.softmax(1);  // a middle dim: the columns kernel
  CHECK(s1.sizes() == gb::IntArrayRef({2, 3, 4}));
  check_close(s1.sum({1}), gb::ones({2, 4}, gb::kFloat64));
  double e4 = std::exp(4.0), den = 1 + e4 + e4 * e4;
  check_values(s1.select(0, 1).select(1, 2), {1 / den, e4 / den, e4 * e4 / den}, 1e-12);
}

TEST_CASE("softmax is stable at large and infinite inputs") {
  check_values(gb::softmax(gb::tensor({1000.0, 1000.0}), 0), {0.5, 0.5});
  check_values(gb::softmax(gb::tensor({-1000.0, -1001.0}), 0), {1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(1.0))});
  check_values(gb::log_softmax(gb::tensor({1000.0, 1000.0}), 0), {-std::log(2.0), -std::log(2.0)});
  check_values(gb::softmax(gb::tensor({-kInf, 0.0}), 0), {0, 1});
  auto ls = gbtest::values(gb::log_softmax(gb::tensor({-kInf, 0.0}), 0));
  CHECK(ls[0] == -kInf);
  CHECK(ls[1] == 0.0);
  // a row of -inf has no finite maximum: NaN, as in PyTorch
  CHECK(std::isnan(gb::softmax(gb::tensor({-kInf, -kInf}), 0)[0].item<double>()));
  CHECK(std::isnan(gb::softmax(gb::tensor({1.0, std::nan("")}), 0)[0].item<double>()));
}

TEST_CASE("softmax of 0-dim, empty and 16-bit inputs, and the dtype argument") {
  check_values(gb::softmax(gb::tensor(3.0), 0), {1});
  check_values(gb::log_softmax(gb::tensor(3.0), -1), {0});
  CHECK(gb::softmax(gb::tensor(3.0), 0).dim() == 0);
  CHECK(gb::softmax(gb::zeros({0, 3}), 1).sizes() == gb::IntArrayRef({0, 3}));
  CHECK(gb::softmax(gb::zeros({3, 0}), 1).sizes() == gb::IntArrayRef({3, 0}));
  auto h = gb::tensor({1.0, 2.0, 3.0}, gb::kHalf);
  auto sh = gb::softmax(h, 0);
  CHECK(sh.scalar_type() == gb::kHalf);
  check_values(sh, {0.0900306, 0.2447285, 0.6652410}, 1e-3);
  auto b = gb::log_softmax(gb::tensor({1.0, 2.0, 3.0}, gb::kBFloat16), 0);
  CHECK(b.scalar_type() == gb::kBFloat16);
  check_values(b, {-2.4076, -1.4076, -0.4076}, 2e-2);
  auto i = gb::softmax(gb::tensor({0, 0}), 0, gb::kFloat);
  CHECK(i.scalar_type() == gb::kFloat);
  check_values(i, {0.5, 0.5});
  CHECK(gb::softmax(gb::tensor({1.0, 2.0}), 0, gb::kFloat64).scalar_type() == gb::kFloat64);
  CHECK(gb::log_softmax(gb::tensor({1.0, 2.0}, gb::kHalf), 0, gb::kFloat).scalar_type() == gb::kFloat);
}

TEST_CASE("softmax errors name the op, the dtype and the dims") {
  CHECK_THROWS_WITH_AS(gb::softmax(gb::arange(3), 0),
                       doctest::Contains("softmax: expected a floating point input, got Long"), gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::log_softmax(gb::arange(3), 0), doctest::Contains("pass dtype=gb::kFloat"), gb::TypeError);
  CHECK_THROWS_WITH_AS(
      gb::softmax(gb::ones({2, 3}), 2),
      doctest::Contains("softmax: Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
      gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::log_softmax(gb::ones({2}), -2), doctest::Contains("log_softmax: Dimension out of range"),
                       gb::IndexError);
}

TEST_CASE("large inputs: rows, columns and strided views agree with a naive loop") {
  gb::manual_seed(5);
  auto x = gb::randn({300, 129}, gb::kFloat64) * 4.0;
  auto ref = naive_softmax_rows(x, false);
  auto ref_log = naive_softmax_rows(x, true);
  check_values(x.softmax(1), ref, 1e-12);  // rows, split across threads
  check_values(x.log_softmax(-1), ref_log, 1e-12);
  auto xt = x.t().contiguous();                              // (129, 300): the same data, softmax over dim 0
  check_values(xt.softmax(0).t().contiguous(), ref, 1e-12);  // columns
  check_values(xt.log_softmax(0).t().contiguous(), ref_log, 1e-12);
  check_values(xt.t().softmax(1), ref, 1e-12);  // a non-contiguous view
  auto f = x.to(gb::kFloat);
  check_values(f.softmax(1), ref, 1e-6);
  check_values(f.t().contiguous().log_softmax(0).t().contiguous(), ref_log, 1e-5);
  auto x3 = gb::randn({4, 5, 70}, gb::kFloat64);
  check_close(x3.softmax(1), x3.transpose(1, 2).contiguous().softmax(2).transpose(1, 2), 1e-12, 1e-14);
}

TEST_CASE("softmax gradients: hand-computed, names and the dtype cast") {
  auto x = gb::zeros({2}, gbtest::f64_grad());
  auto y = gb::softmax(x, 0);
  CHECK(y.grad_fn()->name() == "SoftmaxBackward0");
  y[0].backward();
  check_values(x.grad(), {0.25, -0.25});
  auto z = gb::zeros({2}, gbtest::f64_grad());
  auto l = gb::log_softmax(z, 0);
  CHECK(l.grad_fn()->name() == "LogSoftmaxBackward0");
  l[0].backward();
  check_values(z.grad(), {0.5, -0.5});
  auto f = gb::ones({3}, gb::TensorOptions().dtype(gb::kFloat).requires_grad(true));
  (gb::softmax(f, 0, gb::kFloat64) * gb::tensor({1.0, 2.0, 3.0}, gb::kFloat64)).sum().backward();
  CHECK(f.grad().scalar_type() == gb::kFloat);
  check_values(f.grad(), {-1.0 / 3, 0, 1.0 / 3}, 1e-6);
}

TEST_CASE("softmax and log_softmax gradients match finite differences, twice") {
  gb::manual_seed(9);
  auto x = gb::randn({3, 4, 5}, gbtest::f64_grad());
  auto nc = gb::randn({5, 4, 3}, gbtest::f64_grad());
  auto s = gb::randn({}, gbtest::f64_grad());
  for (int64_t d : {0, 1, 2, -1}) {
    CAPTURE(d);
    for (bool log : {false, true}) {
      CAPTURE(log);
      auto f = [d, log](const gb::Tensor& a) { return log ? a.log_softmax(d) : a.softmax(d); };
      auto one = [&](const gb::Tensor& in, auto g) {
        return gbtest::gradcheck1([&](const gb::variable_list& v) { return g(v[0]); }, {in});
      };
      auto two = [&](const gb::Tensor& in, auto g) {
        return gb::autograd::gradgradcheck([&](const gb::variable_list& v) { return gb::variable_list{g(v[0])}; },
                                           {in});
      };
      CHECK(one(x, f));
      CHECK(one(nc, [&](const gb::Tensor& a) { return f(a.permute({2, 1, 0})); }));
      CHECK(two(x, f));
      CHECK(two(nc, [&](const gb::Tensor& a) { return f(a.transpose(0, 2)); }));
    }
  }
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0].softmax(0); }, {s}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return v[0].log_softmax(-1); }, {s}));
}

TEST_CASE("the row kernels agree with float64 under every instruction set this CPU has, tails and NaN rows included") {
  using gb::detail::CpuIsa;
  gb::manual_seed(9);
  // C = 1, 7, 8, 33 and 1000: below a vector, one vector, vectors and a tail; row 1 holds a NaN, row 2 a -inf
  for (int64_t C : {1, 7, 8, 33, 1000}) {
    auto x64 = gb::randn({5, C}, gb::kFloat64) * 3.0;
    auto g64 = gb::randn({5, C}, gb::kFloat64);
    if (C > 1) {
      x64[1][C / 2].fill_(std::numeric_limits<double>::quiet_NaN());
      x64[2][0].fill_(-kInf);
    }
    const auto ref = naive_softmax_rows(x64, false), ref_log = naive_softmax_rows(x64, true);
    for (CpuIsa isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512}) {
      if (static_cast<int>(isa) > static_cast<int>(gb::detail::cpu_isa_supported())) {
        MESSAGE("this CPU has no " << gb::detail::cpu_isa_name(isa) << ": that path is not run here");
        continue;
      }
      gb::detail::CpuIsaGuard guard(isa);
      CAPTURE(gb::detail::cpu_isa_name(isa));
      CAPTURE(C);
      auto x = x64.to(gb::kFloat).requires_grad_();
      auto g = g64.to(gb::kFloat);
      auto y = x.softmax(1), ly = x.log_softmax(1);
      auto got = gbtest::values(y), got_log = gbtest::values(ly);
      for (size_t i = 0; i < ref.size(); ++i) {
        if (std::isnan(ref[i])) {
          CHECK(std::isnan(got[i]));
          CHECK(std::isnan(got_log[i]));
          continue;
        }
        CHECK(got[i] == doctest::Approx(ref[i]).epsilon(1e-5));
        if (std::isfinite(ref_log[i]))
          CHECK(got_log[i] == doctest::Approx(ref_log[i]).epsilon(1e-5).scale(1));
        else
          CHECK(got_log[i] == ref_log[i]);
      }
      // backward against the formulas in float64 on the float64 outputs (rows without NaN or -inf)
      gb::Tensor dx = gb::autograd::grad({y}, {x}, {g})[0];
      gb::Tensor dlx = gb::autograd::grad({ly}, {x}, {g})[0];
      auto y64 = x64.softmax(1);
      auto want = gbtest::values(y64 * (g64 - (g64 * y64).sum({1}, true)));
      auto want_log = gbtest::values(g64 - y64 * g64.sum({1}, true));
      auto got_dx = gbtest::values(dx), got_dlx = gbtest::values(dlx);
      for (int64_t r : {int64_t(0), int64_t(3), int64_t(4)})
        for (int64_t c = 0; c < C; ++c) {
          const size_t i = size_t(r * C + c);
          CHECK(got_dx[i] == doctest::Approx(want[i]).epsilon(1e-4).scale(1e-3));
          CHECK(got_dlx[i] == doctest::Approx(want_log[i]).epsilon(1e-4).scale(1e-3));
        }
    }
  }
}

// The float rows run on 16-lane vectors written out (ops/vec_math.h), so the compiler cannot reorder a sum: every
// instruction set gives the baseline's bits, forward and backward, with and without a tail after the last vector.
TEST_CASE("float softmax and log_softmax, forward and backward, give the same bits under every instruction set") {
  gb::manual_seed(21);
  for (int64_t C : {5, 16, 33, 1000, 1024}) {
    CAPTURE(C);
    auto x = (gb::randn({9, C}) * 4.0).requires_grad_();
    auto g = gb::randn({9, C});
    gbtest::check_same_bits_on_every_isa([&] { return softmax_values(x, g); });
  }
}

// Outputs far bigger than the cache go out through non-temporal stores (ops/vec_math.h's write_row): the same bits
// as plain stores, rows that start off a 16-byte boundary (C = 1001) and rows longer than softmax's scratch row
// (4097) included. The threshold is set to 0 so that small tensors take that path.
TEST_CASE("float softmax and log_softmax through streaming stores give the plain stores' bits") {
  gb::manual_seed(23);
  for (int64_t C : {7, 33, 1000, 1001, 4097}) {
    CAPTURE(C);
    auto x = (gb::randn({6, C}) * 4.0).requires_grad_();
    auto g = gb::randn({6, C});
    gbtest::check_streamed_equals_plain([&] { return softmax_values(x, g); });
  }
}
