// Tests engine/ops/vec_libm.cpp: every op on every instruction set this CPU has, against the function evaluated in
// double: within 4 ulp where the float formula has no cancellation (GELU's 1 + erf(x) for x << 0 has, as in the
// scalar kernel: there an absolute bound of a few float epsilons times |x|), NaN, +-Inf and +-0 as the scalar
// kernels give them, partial vectors and in-place arrays; and the ops (exp, tanh, gelu, ...) route float32
// contiguous tensors through it and strided ones through their scalar loops.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu_isa.h"
#include "ops/vec_libm.h"

using gb::detail::CpuIsa;
using gb::detail::VecOp;

namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();

struct Op {
  const char* name;
  VecOp op;
  double (*ref)(double);  // the function, in double
  float (*scalar)(float);  // the scalar kernel's float formula (for the special values)
  bool cancels;            // 1 + f(x) cancels for x << 0: an absolute bound as well
  double lo, hi;           // the sweep
};

const Op kOps[] = {
    {"exp", VecOp::exp, [](double x) { return std::exp(x); }, [](float x) { return std::exp(x); }, false, -110, 88.7},
    {"expm1", VecOp::expm1, [](double x) { return std::expm1(x); }, [](float x) { return std::expm1(x); }, false, -20,
     20},
    {"log", VecOp::log, [](double x) { return std::log(x); }, [](float x) { return std::log(x); }, false, 1e-30, 1e4},
    {"log1p", VecOp::log1p, [](double x) { return std::log1p(x); }, [](float x) { return std::log1p(x); }, false,
     -0.999, 1e4},
    {"sin", VecOp::sin, [](double x) { return std::sin(x); }, [](float x) { return std::sin(x); }, false, -1e4, 1e4},
    {"cos", VecOp::cos, [](double x) { return std::cos(x); }, [](float x) { return std::cos(x); }, false, -1e4, 1e4},
    {"tanh", VecOp::tanh, [](double x) { return std::tanh(x); }, [](float x) { return std::tanh(x); }, false, -12, 12},
    {"erf", VecOp::erf, [](double x) { return std::erf(x); }, [](float x) { return std::erf(x); }, false, -6, 6},
    {"sqrt", VecOp::sqrt, [](double x) { return std::sqrt(x); }, [](float x) { return std::sqrt(x); }, false, 0, 1e6},
    {"rsqrt", VecOp::rsqrt, [](double x) { return 1 / std::sqrt(x); }, [](float x) { return 1.0f / std::sqrt(x); },
     false, 1e-6, 1e6},
    {"sigmoid", VecOp::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); },
     [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, false, -80, 80},
    {"silu", VecOp::silu, [](double x) { return x / (1 + std::exp(-x)); },
     [](float x) { return x / (1.0f + std::exp(-x)); }, false, -80, 80},
    {"gelu", VecOp::gelu, [](double x) { return 0.5 * x * (1 + std::erf(x * M_SQRT1_2)); },
     [](float x) { return 0.5f * x * (1.0f + std::erf(x * float(M_SQRT1_2))); }, true, -10, 10},
    {"gelu_tanh", VecOp::gelu_tanh,
     [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); },
     [](float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }, true, -10,
     10},
};

double ulp_of(double v) {
  const float f = std::fabs(float(v));
  if (f == 0) return std::numeric_limits<float>::denorm_min();
  if (!std::isfinite(f)) return std::numeric_limits<float>::max();
  return double(std::nextafter(f, kInfF)) - double(f);
}

std::vector<CpuIsa> isas() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512})
    if (static_cast<int>(isa) <= static_cast<int>(gb::detail::cpu_isa_supported())) out.push_back(isa);
  return out;
}

// Equal as the special values go: both NaN, or the same value (infinities and signed zeros included).
bool same_special(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

}  // namespace

TEST_CASE("this build has libmvec (the engine's float32 transcendental ops are vectorized)") {
  CHECK(gb::detail::vec_available());
  CHECK_FALSE(gb::detail::vec_apply(VecOp::none, nullptr, nullptr, 0));
}

TEST_CASE("every op within 4 ulp of the double result on every instruction set, specials as the scalar kernels") {
  for (const Op& op : kOps) {
    for (CpuIsa isa : isas()) {
      const std::string name = op.name, isa_name = gb::detail::cpu_isa_name(isa);
      CAPTURE(name);
      CAPTURE(isa_name);
      gb::detail::CpuIsaGuard guard(isa);
      // a dense sweep (a length that is no multiple of 4, 8 or 16: the tail goes through the padded copy)
      const int64_t n = 100003;
      std::vector<float> x(n), y(n);
      for (int64_t i = 0; i < n; ++i) x[i] = float(op.lo + (op.hi - op.lo) * double(i) / double(n - 1));
      REQUIRE(gb::detail::vec_apply(op.op, x.data(), y.data(), n));
      double worst_ulps = 0;
      float worst_x = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double r = op.ref(double(x[i]));
        const double err = std::fabs(double(y[i]) - r);
        const double bound = 4 * ulp_of(r) + (op.cancels ? 4 * 1.2e-7 * std::fabs(double(x[i])) : 0);
        if (err > bound && err / ulp_of(r) > worst_ulps) {
          worst_ulps = err / ulp_of(r);
          worst_x = x[i];
        }
      }
      CAPTURE(worst_x);
      CHECK(worst_ulps == 0);
      // the special values
      const std::vector<float> sp = {0.0f, -0.0f, kInfF, -kInfF, kNaNF, 1e-40f, -1e-40f, 1e30f, -1e30f, 88.8f, -104.0f};
      std::vector<float> ys(sp.size());
      REQUIRE(gb::detail::vec_apply(op.op, sp.data(), ys.data(), int64_t(sp.size())));
      for (size_t i = 0; i < sp.size(); ++i) {
        CAPTURE(sp[i]);
        const float want = op.scalar(sp[i]);
        if (std::isnan(want) || std::isinf(want) || want == 0 || std::fabs(sp[i]) >= 1e30f || sp[i] == 0)
          CHECK(same_special(ys[i], want));
        else
          CHECK(std::fabs(double(ys[i]) - double(want)) <= 8 * ulp_of(want) + 1e-44);
      }
      // in place equals out of place, and every partial-vector length
      for (int64_t len = 1; len <= 33; ++len) {
        std::vector<float> a(x.begin() + 1000, x.begin() + 1000 + len), b(len);
        REQUIRE(gb::detail::vec_apply(op.op, a.data(), b.data(), len));
        REQUIRE(gb::detail::vec_apply(op.op, a.data(), a.data(), len));
        for (int64_t i = 0; i < len; ++i) CHECK(std::bit_cast<uint32_t>(a[i]) == std::bit_cast<uint32_t>(b[i]));
      }
    }
  }
}

TEST_CASE("the ops run float32 contiguous tensors through the vector path, strided ones through the scalar loop") {
  gb::manual_seed(0);
  gb::Tensor x = gb::randn({67, 33}) * 3;
  struct Case {
    VecOp op;
    gb::Tensor (*run)(const gb::Tensor&);
  };
  const Case cases[] = {
      {VecOp::exp, [](const gb::Tensor& t) { return gb::exp(t); }},
      {VecOp::tanh, [](const gb::Tensor& t) { return gb::tanh(t); }},
      {VecOp::sigmoid, [](const gb::Tensor& t) { return gb::sigmoid(t); }},
      {VecOp::erf, [](const gb::Tensor& t) { return gb::erf(t); }},
      {VecOp::gelu, [](const gb::Tensor& t) { return gb::gelu(t); }},
      {VecOp::gelu_tanh, [](const gb::Tensor& t) { return gb::gelu(t, "tanh"); }},
      {VecOp::silu, [](const gb::Tensor& t) { return gb::silu(t); }},
  };
  for (const Case& c : cases) {
    gb::Tensor y = c.run(x);
    gb::Tensor want = gb::empty_like(x);
    gb::detail::vec_apply(c.op, x.data_ptr<float>(), want.data_ptr<float>(), x.numel());
    CHECK(gb::equal(y, want));  // bit for bit: the op went through vec_apply
    gb::Tensor strided = c.run(x.t());  // not contiguous: the scalar loop, within a few ulp of the vector path
    CHECK(gb::allclose(strided, want.t(), 1e-6, 1e-6));
    gb::Tensor x64 = x.to(gb::kDouble);  // double keeps the scalar loop
    CHECK(gb::allclose(c.run(x64).to(gb::kFloat), want, 1e-6, 1e-6));
  }
  // in place
  gb::Tensor z = x.clone();
  z.exp_();
  CHECK(gb::equal(z, gb::exp(x)));
  z = x.clone();
  z.tanh_();
  CHECK(gb::equal(z, gb::tanh(x)));
  // a large tensor the pool splits equals one call over the whole array
  gb::Tensor big = gb::randn({300007});
  gb::Tensor want = gb::empty_like(big);
  gb::detail::vec_apply(VecOp::tanh, big.data_ptr<float>(), want.data_ptr<float>(), big.numel());
  CHECK(gb::equal(gb::tanh(big), want));
}

TEST_CASE("GELU's gradients through libmvec: near the double derivative on every ISA, and what gelu's backward runs") {
  struct Grad {
    const char* name;
    gb::detail::VecOp2 op;
    double (*ref)(double);  // d gelu / dx in double
    const char* approximate;
  };
  const Grad grads[] = {
      {"gelu_backward", gb::detail::VecOp2::gelu_backward,
       [](double x) { return 0.5 * (1 + std::erf(x * M_SQRT1_2)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); },
       "none"},
      {"gelu_tanh_backward", gb::detail::VecOp2::gelu_tanh_backward,
       [](double x) {
         const double b = 0.7978845608028654, k = 0.044715, t = std::tanh(b * (x + k * x * x * x));
         return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * b * (1 + 3 * k * x * x);
       },
       "tanh"},
  };
  for (const Grad& gr : grads) {
    for (CpuIsa isa : isas()) {
      const std::string name = gr.name, isa_name = gb::detail::cpu_isa_name(isa);
      CAPTURE(name);
      CAPTURE(isa_name);
      gb::detail::CpuIsaGuard guard(isa);
      const int64_t n = 20001;
      std::vector<float> x(n), g(n), y(n);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = float(-10 + 20 * double(i) / double(n - 1));
        g[i] = float(0.5 + double(i % 7) / 7);
      }
      REQUIRE(gb::detail::vec_apply2(gr.op, g.data(), x.data(), y.data(), n));
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double r = double(g[i]) * gr.ref(double(x[i]));
        // 1 + erf and 1 - t*t cancel where |x| is large, as in the scalar kernel: an absolute bound too
        if (std::fabs(double(y[i]) - r) > 8 * ulp_of(r) + 8 * 1.2e-7 * (1 + std::fabs(double(x[i])))) ++bad;
      }
      CHECK(bad == 0);
      // NaN stays NaN, +-Inf inputs give the limits the scalar formula gives (1 and 0; NaN where it has inf * 0)
      const float sx[] = {kNaNF, 0.0f, 1.0f};
      const float sg[] = {1.0f, 2.0f, kNaNF};
      float sy[3];
      REQUIRE(gb::detail::vec_apply2(gr.op, sg, sx, sy, 3));
      CHECK(std::isnan(sy[0]));
      CHECK(sy[1] == 1.0f);  // 2 * gelu'(0) = 2 * 0.5
      CHECK(std::isnan(sy[2]));
    }
    // gelu's backward on a float32 contiguous input runs it (bit for bit), a strided one the scalar loop (close)
    gb::manual_seed(5);
    gb::Tensor x = (gb::randn({61, 37}) * 3).requires_grad_();
    gb::Tensor g = gb::randn({61, 37});
    gb::gelu(x, gr.approximate).backward(g);
    gb::Tensor want = gb::empty_like(g);
    gb::detail::vec_apply2(gr.op, g.data_ptr<float>(), x.detach().data_ptr<float>(), want.data_ptr<float>(), g.numel());
    CHECK(gb::equal(x.grad(), want));
    gb::Tensor xt = x.detach().t().requires_grad_();
    gb::gelu(xt, gr.approximate).backward(g.t());
    // (the terms cancel for |x| of a few: a float ulp of 1 + t there is ~1e-6 of the result's scale)
    CHECK(gb::allclose(xt.grad(), want.t(), 1e-5, 1e-5));
  }
}
