// tests/engine/cuda/pointwise_ops_test.cpp — the arithmetic every elementwise CUDA kernel runs, run on the host
// through the same run_element/convert the kernels call: each op code against the CPU op it stands in for, in every
// dtype it serves, on values that find the edges (halves, signed zeros, NaN, infinities, large and tiny values).
#include "cuda/pointwise_ops.h"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "cuda/launch.h"
#include "support/check.h"

namespace ck = gb::cuda_kernels;
using ck::Pw;

namespace {

const std::vector<double> kEdges = {-3.5, -2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.5, 2.5, 3.0, 7.75, 1e-3, -1e4,
                                    NAN, INFINITY, -INFINITY};
const std::vector<double> kOthers = {2.0, -1.5, 0.5, -0.0, 3.0, -2.5, 4.0, 0.25, -8.0, 1.0, 2.5, -0.75, 3.0, 1e-2,
                                     1.0, NAN, 2.0};
const std::vector<double> kInts = {-7, -3, -1, 0, 0, 1, 2, 3, 5, 6, 9, 12, 100, -100, 42, 7, -5};
const std::vector<double> kIntOthers = {2, 3, -1, 5, 0, 4, 2, 1, 3, -2, 3, 5, 2, 7, -6, 1, 2};

// out = op(ins...) computed element by element on the host exactly as the kernel computes it: contiguous operands,
// element i of each at i * its element size, run_element<T> with T the values' dtype.
gb::Tensor run_host(ck::PwArgs a, gb::ScalarType values, gb::ScalarType out_dtype, const std::vector<gb::Tensor>& ins) {
  gb::Tensor out = gb::empty(ins.empty() ? std::vector<int64_t>{4} : ins[0].sizes().vec(),
                             gb::TensorOptions().dtype(out_dtype));
  std::vector<gb::Tensor> c;
  for (const auto& t : ins) c.push_back(t.contiguous());
  gb::detail::dispatch_all(values, "run_host", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < out.numel(); ++i) {
      char* ptr[ck::kMaxOperands] = {};
      ptr[0] = static_cast<char*>(out.data_ptr()) + i * out.element_size();
      for (size_t k = 0; k < c.size(); ++k)
        ptr[k + 1] = static_cast<char*>(c[k].data_ptr()) + i * c[k].element_size();
      ck::run_element<T>(a, ptr);
    }
  });
  return out;
}

gb::Tensor tensor_of(const std::vector<double>& v, gb::ScalarType t) {
  return gb::tensor(v, gb::TensorOptions().dtype(gb::kDouble)).to(t);
}

// Tolerance per dtype: the CPU kernels may vectorize exp/log/tanh (ops/vec_math.h) with a few ulps of difference.
double rtol_for(gb::ScalarType t) {
  return t == gb::kDouble ? 1e-12 : t == gb::kFloat ? 2e-6 : t == gb::kHalf ? 1e-3 : 8e-3;
}

struct Unary {
  const char* name;
  std::function<gb::Tensor(const gb::Tensor&)> cpu;
  bool floating_only;
};

}  // namespace

TEST_CASE("every unary code computes what its CPU op computes, in every dtype it serves") {
  const std::vector<Unary> ops = {
      {"neg", [](const gb::Tensor& x) { return gb::neg(x); }, false},
      {"abs", [](const gb::Tensor& x) { return gb::abs(x); }, false},
      {"sign", [](const gb::Tensor& x) { return gb::sign(x); }, false},
      {"relu", [](const gb::Tensor& x) { return gb::relu(x); }, false},
      {"round", [](const gb::Tensor& x) { return gb::round(x); }, false},
      {"floor", [](const gb::Tensor& x) { return gb::floor(x); }, false},
      {"ceil", [](const gb::Tensor& x) { return gb::ceil(x); }, false},
      {"trunc", [](const gb::Tensor& x) { return gb::trunc(x); }, false},
      {"exp", [](const gb::Tensor& x) { return gb::exp(x); }, true},
      {"log", [](const gb::Tensor& x) { return gb::log(x); }, true},
      {"sqrt", [](const gb::Tensor& x) { return gb::sqrt(x); }, true},
      {"rsqrt", [](const gb::Tensor& x) { return gb::rsqrt(x); }, true},
      {"reciprocal", [](const gb::Tensor& x) { return gb::reciprocal(x); }, true},
      {"sigmoid", [](const gb::Tensor& x) { return gb::sigmoid(x); }, true},
      {"tanh", [](const gb::Tensor& x) { return gb::tanh(x); }, true},
      {"sin", [](const gb::Tensor& x) { return gb::sin(x); }, true},
      {"cos", [](const gb::Tensor& x) { return gb::cos(x); }, true},
      {"log1p", [](const gb::Tensor& x) { return gb::log1p(x); }, true},
      {"silu", [](const gb::Tensor& x) { return gb::silu(x); }, true},
  };
  for (const Unary& u : ops) {
    const Pw code = gb::detail::pw_for_name(u.name);
    REQUIRE_MESSAGE(code != Pw::none, u.name);
    CHECK(ck::pw_inputs(code) == 1);
    for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt64, gb::kInt32}) {
      if (u.floating_only && !gb::is_floating_point(t)) continue;
      CAPTURE(u.name);
      CAPTURE(gb::to_string(t));
      gb::Tensor x = gb::is_floating_point(t) ? tensor_of(kEdges, t) : tensor_of(kInts, t);
      gb::Tensor want = u.cpu(x);
      gb::Tensor got = run_host({code}, t, t, {x});
      gbtest::check_close(got, want, rtol_for(t), 0);
    }
  }
  // the in-place names compute the same op
  CHECK(gb::detail::pw_for_name("relu_") == Pw::relu);
  CHECK(gb::detail::pw_for_name("exp_") == Pw::exp);
  // ops with parameters (or variants under one name, such as gelu's tanh form) have no kernel by name
  for (const char* name : {"add", "sub", "gelu", "leaky_relu", "softplus", "clamp", "logsumexp"})
    CHECK_MESSAGE(gb::detail::pw_for_name(name) == Pw::none, name);
}

TEST_CASE("binary codes: arithmetic with alpha, extrema with NaN, pow, in floats and integers") {
  struct Binary {
    Pw code;
    double p0;
    std::function<gb::Tensor(const gb::Tensor&, const gb::Tensor&)> cpu;
    bool floating_only;
  };
  const std::vector<Binary> ops = {
      {Pw::add, 1.0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::add(x, y); }, false},
      {Pw::add, -2.0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::add(x, y, -2); }, false},
      {Pw::sub, 3.0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::sub(x, y, 3); }, false},
      {Pw::mul, 0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::mul(x, y); }, false},
      {Pw::div, 0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::div(x, y); }, true},
      {Pw::maximum, 0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::maximum(x, y); }, false},
      {Pw::minimum, 0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::minimum(x, y); }, false},
      {Pw::pow, 0, [](const gb::Tensor& x, const gb::Tensor& y) { return gb::pow(x, y); }, true},
  };
  for (const Binary& b : ops) {
    for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt64}) {
      if (b.floating_only && !gb::is_floating_point(t)) continue;
      CAPTURE(int(b.code));
      CAPTURE(gb::to_string(t));
      const bool fp = gb::is_floating_point(t);
      gb::Tensor x = tensor_of(fp ? kEdges : kInts, t), y = tensor_of(fp ? kOthers : kIntOthers, t);
      gbtest::check_close(run_host({b.code, b.p0}, t, t, {x, y}), b.cpu(x, y), rtol_for(t), 0);
    }
  }
  // integer pow by repeated multiplication, as the CPU (non-negative exponents)
  gb::Tensor xi = tensor_of({2, -3, 5, 0}, gb::kInt64), yi = tensor_of({10, 3, 0, 2}, gb::kInt64);
  gbtest::check_values(run_host({Pw::pow}, gb::kInt64, gb::kInt64, {xi, yi}), {1024, -27, 1, 0});
}

TEST_CASE("scalar codes take the scalar as p0, as the op entries pass it") {
  gb::Tensor x = tensor_of(kEdges, gb::kFloat);
  gbtest::check_close(run_host({Pw::add_scalar, 2.5}, gb::kFloat, gb::kFloat, {x}), x + 2.5, 0, 0);
  gbtest::check_close(run_host({Pw::sub_scalar, 2.5}, gb::kFloat, gb::kFloat, {x}), x - 2.5, 0, 0);
  gbtest::check_close(run_host({Pw::mul_scalar, -3.0}, gb::kFloat, gb::kFloat, {x}), x * -3.0, 0, 0);
  gbtest::check_close(run_host({Pw::div_scalar, 4.0}, gb::kFloat, gb::kFloat, {x}), x / 4.0, 0, 0);
  gbtest::check_close(run_host({Pw::rsub_scalar, 1.0, 2.0}, gb::kFloat, gb::kFloat, {x}), gb::rsub(x, 1.0, 2.0), 0, 0);
  gbtest::check_close(run_host({Pw::pow_scalar, 2.0}, gb::kFloat, gb::kFloat, {x}), gb::pow(x, 2), 0, 0);
  gbtest::check_close(run_host({Pw::pow_scalar, 0.5}, gb::kDouble, gb::kDouble, {x.to(gb::kDouble)}),
                      gb::pow(x.to(gb::kDouble), 0.5), 1e-12, 0);
  gbtest::check_close(run_host({Pw::clamp, -1.0, 2.0}, gb::kFloat, gb::kFloat, {x}), gb::clamp(x, gb::Scalar(-1.0), gb::Scalar(2.0)), 0, 0);
  gb::Tensor xi = tensor_of(kInts, gb::kInt64);
  gbtest::check_values(run_host({Pw::add_scalar, 3}, gb::kInt64, gb::kInt64, {xi}), gbtest::values(xi + 3));
  gbtest::check_values(run_host({Pw::pow_scalar, 3}, gb::kInt64, gb::kInt64, {xi}), gbtest::values(gb::pow(xi, 3)));
  // the 16-bit floats compute in float and round once, as the CPU
  gb::Tensor h = tensor_of(kEdges, gb::kHalf);
  gbtest::check_close(run_host({Pw::mul_scalar, 0.1}, gb::kHalf, gb::kHalf, {h}), h * 0.1, 0, 0);
  gb::Tensor bf = tensor_of(kEdges, gb::kBFloat16);
  gbtest::check_close(run_host({Pw::add_scalar, 1.0 / 3}, gb::kBFloat16, gb::kBFloat16, {bf}), bf + 1.0 / 3, 0, 0);
}

TEST_CASE("comparisons write bool, NaN compares unequal, and where picks by a bool mask") {
  const std::vector<std::pair<const char*, std::function<gb::Tensor(const gb::Tensor&, const gb::Tensor&)>>> cmps = {
      {"eq", [](const gb::Tensor& x, const gb::Tensor& y) { return gb::eq(x, y); }},
      {"ne", [](const gb::Tensor& x, const gb::Tensor& y) { return gb::ne(x, y); }},
      {"lt", [](const gb::Tensor& x, const gb::Tensor& y) { return gb::lt(x, y); }},
      {"le", [](const gb::Tensor& x, const gb::Tensor& y) { return gb::le(x, y); }},
      {"gt", [](const gb::Tensor& x, const gb::Tensor& y) { return gb::gt(x, y); }},
      {"ge", [](const gb::Tensor& x, const gb::Tensor& y) { return gb::ge(x, y); }},
  };
  for (const auto& [cmp_name, cpu] : cmps)
    for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kInt64, gb::kInt32}) {
      const char* name = cmp_name;
      CAPTURE(name);
      CAPTURE(gb::to_string(t));
      const bool fp = gb::is_floating_point(t);
      std::vector<double> reversed(fp ? kEdges.rbegin() : kInts.rbegin(), fp ? kEdges.rend() : kInts.rend());
      gb::Tensor x = tensor_of(fp ? kEdges : kInts, t), y = tensor_of(reversed, t);
      gb::Tensor got = run_host({gb::detail::pw_for_name(cmp_name)}, t, gb::kBool, {x, y});
      CHECK(got.scalar_type() == gb::kBool);
      CHECK(gb::equal(got, cpu(x, y)));
    }
  // bool == bool and bool != bool
  gb::Tensor p = gb::tensor(std::vector<bool>{true, false, true, false}), q = gb::tensor(std::vector<bool>{true, true, false, false});
  CHECK(gb::equal(run_host({Pw::eq}, gb::kBool, gb::kBool, {p, q}), gb::eq(p, q)));
  CHECK(gb::equal(run_host({Pw::ne}, gb::kBool, gb::kBool, {p, q}), gb::ne(p, q)));
  // where: float values and bool values
  gb::Tensor x = tensor_of({1, 2, 3, 4}, gb::kFloat), y = tensor_of({-1, -2, -3, -4}, gb::kFloat);
  CHECK(gb::equal(run_host({Pw::where}, gb::kFloat, gb::kFloat, {p, x, y}), gb::where(p, x, y)));
  CHECK(gb::equal(run_host({Pw::where}, gb::kBool, gb::kBool, {p, q, p}), gb::where(p, q, p)));
}

TEST_CASE("fill writes p0 in every dtype; bool fill is nonzero") {
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt64, gb::kInt32})
    gbtest::check_values(run_host({Pw::fill, 2.5 * (gb::is_floating_point(t) ? 1 : 0) + 3}, t, t, {}),
                         std::vector<double>(4, gb::is_floating_point(t) ? 5.5 : 3.0));
  CHECK(gb::equal(run_host({Pw::fill, 1}, gb::kBool, gb::kBool, {}), gb::ones({4}, gb::kBool)));
}

TEST_CASE("convert does what Tensor::to does between every pair of dtypes") {
  const std::vector<gb::ScalarType> all = {gb::kBool, gb::kInt32, gb::kInt64, gb::kHalf, gb::kBFloat16, gb::kFloat,
                                           gb::kDouble};
  // within float16's range: an infinity converted to an integer is undefined behaviour (UBSan stops there)
  const std::vector<double> v = {-3.75, -1.0, -0.0, 0.0, 0.5, 1.0, 2.5, 65504.0, 1.0 / 3};
  for (gb::ScalarType from : all)
    for (gb::ScalarType to : all) {
      CAPTURE(gb::to_string(from));
      CAPTURE(gb::to_string(to));
      gb::Tensor src = tensor_of(v, from);
      gb::Tensor want = src.to(to);
      gb::Tensor got = gb::empty({int64_t(v.size())}, gb::TensorOptions().dtype(to));
      gb::detail::dispatch_all(to, "convert", [&](auto dtag) {
        gb::detail::dispatch_all(from, "convert", [&](auto stag) {
          using D = typename decltype(dtag)::type;
          using S = typename decltype(stag)::type;
          for (int64_t i = 0; i < src.numel(); ++i) ck::convert(got.data_ptr<D>() + i, src.data_ptr<S>() + i);
        });
      });
      CHECK(gb::equal(got, want));
    }
}

// The kernel's fast path (cuda/pointwise.cu's pointwise_vec_kernel): a 16-byte word per thread through run_vector
// must give, for every code it serves, the bits run_element gives element by element.
TEST_CASE("run_vector: every vectorizable code, a word at a time, equals run_element element by element") {
  const std::vector<double> small_ints = {-3, -2, -1, 0, 1, 2, 3, 1, -2, 0, 2, 3, -1, 1, 0, 2, -3};
  const std::vector<double> small_others = {2, 0, 1, 3, 1, 2, 0, 1, 3, 2, 1, 0, 2, 3, 1, 2, 1};
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt32, gb::kInt64})
    for (int code = int(Pw::neg); code <= int(Pw::fill); ++code) {
      const Pw op = Pw(code);
      if (!ck::pw_vectorizable(op) || (ck::pw_floating_only(op) && !gb::is_floating_point(t))) continue;
      CAPTURE(std::string(gb::to_string(t)));
      CAPTURE(code);
      const bool fp = gb::is_floating_point(t);
      // three words' worth and then some: the values cycle through the edges
      const int64_t n = 3 * (16 / gb::element_size(t));
      std::vector<double> xs, ys;
      for (int64_t i = 0; i < n; ++i) {
        xs.push_back((fp ? kEdges : small_ints)[size_t(i) % kEdges.size()]);
        ys.push_back((fp ? kOthers : small_others)[size_t(i + 3) % kOthers.size()]);
      }
      const std::vector<gb::Tensor> ins = {tensor_of(xs, t), tensor_of(ys, t)};
      ck::PwArgs a{op, op == Pw::clamp ? -1.0 : fp ? 1.5 : 2.0, op == Pw::clamp ? 2.0 : 0.5};
      const int nin = ck::pw_inputs(op);
      gb::Tensor by_element = gb::empty({n}, gb::TensorOptions().dtype(t));
      gb::Tensor by_word = gb::empty({n}, gb::TensorOptions().dtype(t));
      char* data[ck::kMaxOperands] = {static_cast<char*>(by_word.data_ptr()), nullptr, nullptr, nullptr};
      for (int k = 0; k < nin; ++k) data[k + 1] = static_cast<char*>(ins[size_t(k)].data_ptr());
      gb::detail::dispatch_all(t, "run_vector", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
          for (int64_t w = 0; w < n / ck::PwVec<T>::kSize; ++w) ck::run_vector<T>(a, data, w);
          for (int64_t i = 0; i < n; ++i) {
            char* ptr[ck::kMaxOperands] = {static_cast<char*>(by_element.data_ptr()) + i * int64_t(sizeof(T))};
            for (int k = 0; k < nin; ++k) ptr[k + 1] = data[k + 1] + i * int64_t(sizeof(T));
            ck::run_element<T>(a, ptr);
          }
        }
      });
      CHECK(std::memcmp(by_word.data_ptr(), by_element.data_ptr(), size_t(by_word.nbytes())) == 0);
    }
}

TEST_CASE("pw_vector_launch: contiguous, aligned operands of one numeric dtype only") {
  alignas(16) static char buf[3][64];
  char* data[ck::kMaxOperands] = {buf[0], buf[1], buf[2], nullptr};
  const int64_t contiguous[ck::kMaxOperands] = {4, 4, 4, 0};
  CHECK(ck::pw_vector_launch(Pw::add, false, 4, 1, 3, contiguous, data));
  CHECK(ck::pw_vector_launch(Pw::relu, false, 4, 1, 2, contiguous, data));
  CHECK(ck::pw_vector_launch(Pw::fill, false, 4, 1, 1, contiguous, data));
  CHECK_FALSE(ck::pw_vector_launch(Pw::add, true, 1, 1, 3, contiguous, data));     // bool
  CHECK_FALSE(ck::pw_vector_launch(Pw::eq, false, 4, 1, 3, contiguous, data));     // bool output
  CHECK_FALSE(ck::pw_vector_launch(Pw::where, false, 4, 1, 4, contiguous, data));  // bool condition
  CHECK_FALSE(ck::pw_vector_launch(Pw::add, false, 4, 2, 3, contiguous, data));    // not one dim
  CHECK_FALSE(ck::pw_vector_launch(Pw::add, false, 8, 1, 3, contiguous, data));    // strides of another dtype
  const int64_t broadcast[ck::kMaxOperands] = {4, 4, 0, 0};
  CHECK_FALSE(ck::pw_vector_launch(Pw::add, false, 4, 1, 3, broadcast, data));  // a broadcast input
  char* shifted[ck::kMaxOperands] = {buf[0], buf[1] + 4, buf[2], nullptr};
  CHECK_FALSE(ck::pw_vector_launch(Pw::add, false, 4, 1, 3, contiguous, shifted));  // a view off a 16-byte boundary
}
