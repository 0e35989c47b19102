// tests/support/check.h — helpers for asserting on tensors in doctest cases.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <glassbox/glassbox.h>

namespace gbtest {

// The elements of t (any dtype, any strides, any device) as doubles, in row-major order.
inline std::vector<double> values(const gb::Tensor& t) {
  gb::Tensor c = t.detach().to(gb::kCPU).to(gb::kDouble).contiguous();  // a cuda tensor's values come to the host
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// Fails the current test, naming the first differing element, unless a and b have the same shape and
// |a - b| <= atol + rtol * |b| everywhere (NaNs must match).
inline void check_close(const gb::Tensor& a, const gb::Tensor& b, double rtol = 1e-5, double atol = 1e-6) {
  REQUIRE(a.defined());
  REQUIRE(b.defined());
  REQUIRE_MESSAGE(a.sizes() == b.sizes(), "shape " << a.sizes() << " vs " << b.sizes());
  auto x = values(a), y = values(b);
  for (size_t i = 0; i < x.size(); ++i) {
    bool ok = (std::isnan(x[i]) && std::isnan(y[i])) || std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]) ||
              (std::isinf(x[i]) && x[i] == y[i]);
    if (!ok) {
      FAIL_CHECK("element " << i << ": " << x[i] << " vs " << y[i] << " (rtol " << rtol << ", atol " << atol << ")");
      return;
    }
  }
}

inline void check_values(const gb::Tensor& a, const std::vector<double>& expected, double tol = 1e-6) {
  auto x = values(a);
  REQUIRE(x.size() == expected.size());
  for (size_t i = 0; i < x.size(); ++i) CHECK_MESSAGE(std::fabs(x[i] - expected[i]) <= tol, "element " << i << ": " << x[i] << " vs " << expected[i]);
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Compares t elementwise with expected, laid out in t's shape (NaN matches NaN, inf matches the same inf).
inline void expect(const gb::Tensor& t, std::vector<double> expected, double rtol = 1e-6, double atol = 1e-6) {
  check_close(t, gb::tensor(gb::ArrayRef<double>(expected), gb::kFloat64).view(t.sizes()), rtol, atol);
}

inline gb::TensorOptions f64_grad() { return gb::TensorOptions().dtype(gb::kFloat64).requires_grad(true); }

// Runs gradcheck on a one-output function of the inputs.
template <typename F>
bool gradcheck1(F f, const gb::variable_list& inputs) {
  return gb::autograd::gradcheck([&](const gb::variable_list& in) { return gb::variable_list{f(in)}; }, inputs);
}

// Runs gradgradcheck on a one-output function of the inputs.
inline bool gradgradcheck1(const std::function<gb::Tensor(const gb::variable_list&)>& f,
                           const gb::variable_list& inputs) {
  return gb::autograd::gradgradcheck([&](const gb::variable_list& in) { return gb::variable_list{f(in)}; }, inputs);
}

// An int64 index tensor of these values.
inline gb::Tensor idx(std::initializer_list<int64_t> v) { return gb::tensor(v); }

// The GPU tier's device (*_gpu_test.cpp).
inline const gb::Device kGpu("cuda:0");

}  // namespace gbtest
