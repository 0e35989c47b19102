// tests/engine/cuda/pointwise_gpu_test.cpp — GPU tier (label gpu; skipped without a device, tests/support/
// gpu_main.cpp): the elementwise kernels of engine/cuda/pointwise.cu against the CPU ops on the same values, in every
// dtype, through broadcasting, strided and in-place operands; copies between host and device and on the device;
// factories on cuda.
#include <cmath>
#include <cstring>
#include <sstream>

#include "support/check.h"

using gbtest::kGpu;

namespace {

double rtol_for(gb::ScalarType t) {
  return t == gb::kDouble ? 1e-12 : t == gb::kFloat ? 2e-6 : t == gb::kHalf ? 1e-3 : 8e-3;
}

// [5, 7] values with the edges in them for floats (NaN, infinities, signed zeros, halves); integers for the rest.
gb::Tensor edges(gb::ScalarType t, uint64_t seed) {
  gb::manual_seed(seed);
  gb::Tensor x = (gb::randn({5, 7}, gb::kDouble) * 3).contiguous();
  double* p = x.data_ptr<double>();
  if (!gb::is_floating_point(t)) {
    for (int i = 0; i < 35; ++i) p[i] = std::round(p[i] * 10);
    return x.to(t);
  }
  p[0] = NAN;
  p[8] = INFINITY;
  p[16] = -INFINITY;
  p[24] = -0.0;
  p[32] = 2.5;
  return x.to(t);
}

// The same values with NaN and the infinities made finite (for integer conversions).
gb::Tensor finite(const gb::Tensor& x) {
  gb::Tensor f = gb::where(gb::isfinite(x), x, gb::zeros_like(x));
  return f;
}

void check_same(const gb::Tensor& gpu, const gb::Tensor& cpu) {
  CHECK(gpu.device() == kGpu);
  CHECK(gpu.scalar_type() == cpu.scalar_type());
  gbtest::check_close(gpu, cpu, rtol_for(cpu.scalar_type()), 1e-7);
}

}  // namespace

TEST_CASE("unary ops on cuda equal the cpu in every dtype") {
  using F = gb::Tensor (*)(const gb::Tensor&);
  const std::vector<std::pair<const char*, F>> floating = {
      {"exp", gb::exp},     {"log", gb::log},         {"sqrt", gb::sqrt}, {"rsqrt", gb::rsqrt},
      {"tanh", gb::tanh},   {"sigmoid", gb::sigmoid}, {"sin", gb::sin},   {"cos", gb::cos},
      {"log1p", gb::log1p}, {"silu", gb::silu},       {"reciprocal", gb::reciprocal}};
  const std::vector<std::pair<const char*, F>> numeric = {{"neg", gb::neg},     {"abs", gb::abs},
                                                          {"relu", gb::relu},   {"sign", gb::sign},
                                                          {"round", gb::round}, {"floor", gb::floor}};
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt64, gb::kInt32}) {
    gb::Tensor x = edges(t, 1);
    gb::Tensor xg = x.to(kGpu);
    for (const auto& [op_name, f] : numeric) {
      const char* name = op_name;
      CAPTURE(name);
      CAPTURE(gb::to_string(t));
      check_same(f(xg), f(x));
    }
    if (!gb::is_floating_point(t)) continue;
    for (const auto& [op_name, f] : floating) {
      const char* name = op_name;
      CAPTURE(name);
      CAPTURE(gb::to_string(t));
      check_same(f(xg), f(x));
    }
  }
  // an integer input to a floating op becomes the default float dtype, as on the cpu
  check_same(gb::exp(gb::arange(5).to(kGpu)), gb::exp(gb::arange(5)));
}

TEST_CASE("binary ops broadcast and promote on cuda as on the cpu") {
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt64}) {
    CAPTURE(gb::to_string(t));
    gb::Tensor a = edges(t, 2), b = edges(t, 3);
    gb::Tensor row = b.select(0, 1);             // [7], broadcast over rows
    gb::Tensor col = b.slice(1, 0, 1);           // [5, 1], broadcast over columns
    gb::Tensor at = edges(t, 4).t().contiguous().t();  // column-major storage
    gb::Tensor ag = a.to(kGpu), bg = b.to(kGpu);
    check_same(ag + bg, a + b);
    check_same(gb::add(ag, bg, 2), gb::add(a, b, 2));
    check_same(gb::sub(ag, row.to(kGpu), 3), gb::sub(a, row, 3));
    check_same(ag * col.to(kGpu), a * col);
    check_same(at.to(kGpu) * bg, at * b);
    check_same(gb::maximum(ag, bg), gb::maximum(a, b));
    check_same(gb::minimum(ag, row.to(kGpu)), gb::minimum(a, row));
    check_same(ag + 2, a + 2);
    check_same(ag - 3, a - 3);
    check_same(ag * 0.5, a * 0.5);
    check_same(gb::rsub(ag, 1, 2), gb::rsub(a, 1, 2));
    check_same(gb::pow(ag, 2), gb::pow(a, 2));
    check_same(gb::clamp(ag, gb::Scalar(-1), gb::Scalar(2)), gb::clamp(a, gb::Scalar(-1), gb::Scalar(2)));
    check_same(gb::clamp(ag, gb::Scalar(-1), std::nullopt), gb::clamp(a, gb::Scalar(-1), std::nullopt));
    if (gb::is_floating_point(t)) {
      check_same(ag / bg, a / b);
      check_same(ag / 4, a / 4);
      check_same(gb::pow(ag.abs(), bg), gb::pow(a.abs(), b));
      check_same(gb::pow(ag.abs(), 0.5), gb::pow(a.abs(), 0.5));
    }
    // mixed dtypes promote first
    check_same(ag + bg.to(gb::kDouble), a + b.to(gb::kDouble));
  }
}

TEST_CASE("in-place ops write through views on cuda") {
  gb::Tensor a = edges(gb::kFloat, 5), b = edges(gb::kFloat, 6);
  gb::Tensor ag = a.to(kGpu), bg = b.to(kGpu);
  gb::Tensor view = ag.slice(1, 2, 5);  // a strided window
  view.mul_(2).add_(bg.slice(1, 0, 3), 0.5);
  a.slice(1, 2, 5).mul_(2).add_(b.slice(1, 0, 3), 0.5);
  check_same(ag, a);
  ag.relu_();
  a.relu_();
  check_same(ag, a);
  ag.sub_(1).div_(3);
  a.sub_(1).div_(3);
  check_same(ag, a);
}

TEST_CASE("comparisons and where on cuda") {
  gb::Tensor a = edges(gb::kFloat, 7), b = edges(gb::kFloat, 8);
  gb::Tensor ag = a.to(kGpu), bg = b.to(kGpu);
  CHECK(gb::equal(gb::lt(ag, bg).cpu(), gb::lt(a, b)));
  CHECK(gb::equal(gb::ge(ag, 0.5).cpu(), gb::ge(a, 0.5)));
  CHECK(gb::equal(gb::eq(ag, ag).cpu(), gb::eq(a, a)));  // NaN != NaN
  gb::Tensor ai = finite(a).to(gb::kInt64);
  CHECK(gb::equal(gb::ne(ai.to(kGpu), 0).cpu(), gb::ne(ai, 0)));
  gb::Tensor m = gb::gt(a, 0);
  check_same(gb::where(m.to(kGpu), ag, bg), gb::where(m, a, b));
  check_same(gb::where(m.to(kGpu), ag, 0), gb::where(m, a, 0));
  // relu's backward on cuda (threshold_backward through where)
  gb::Tensor x = finite(a).requires_grad_(true);
  gb::Tensor xg = x.detach().to(kGpu).requires_grad_(true);
  gb::relu(x).sum().backward();
  gb::relu(xg).sum().backward();
  check_same(xg.grad(), x.grad());
}

TEST_CASE("copies: host to device and back, between dtypes, strided, pinned and non_blocking") {
  gb::Tensor x = edges(gb::kFloat, 9);
  gb::Tensor g = x.to(kGpu);
  CHECK(g.is_cuda());
  CHECK(g.device().index() == 0);
  CHECK(gb::equal(g.cpu(), x) == gb::equal(x, x));  // NaN: both false, the same way
  gbtest::check_close(g.cpu(), x, 0, 0);
  // "cuda" means the current device
  CHECK(x.to(gb::kCUDA).device() == kGpu);
  // a transposed (non-contiguous) source, and a strided destination
  gbtest::check_close(x.t().to(kGpu).cpu(), x.t(), 0, 0);
  gb::Tensor dst = gb::zeros({7, 10}, kGpu);
  dst.slice(1, 0, 5).copy_(x.t());
  gbtest::check_close(dst.slice(1, 0, 5).cpu(), x.t(), 0, 0);
  // device to device, casting on the device, every dtype pair through float
  for (gb::ScalarType t : {gb::kDouble, gb::kHalf, gb::kBFloat16, gb::kInt64, gb::kInt32, gb::kBool}) {
    CAPTURE(gb::to_string(t));
    gb::Tensor want = finite(x).to(t);
    gbtest::check_close(finite(x).to(kGpu).to(t).cpu(), want, 0, 0);
    gbtest::check_close(want.to(kGpu).to(gb::kFloat).cpu(), want.to(gb::kFloat), 0, 0);
  }
  gbtest::check_close(g.clone().cpu(), x, 0, 0);
  // pinned memory, non_blocking, then a synchronize before the host reads
  gb::Tensor pinned = gb::data::pin_memory(x);
  CHECK(gb::data::is_pinned(pinned));
  gb::Tensor async = pinned.to(kGpu, gb::kFloat, /*non_blocking=*/true);
  gb::cuda::synchronize();
  gbtest::check_close(async.cpu(), x, 0, 0);
  // item() and printing read the device's values
  CHECK(gb::ones({}, kGpu).mul(3).item().to_double() == 3.0);
  std::ostringstream os;
  os << gb::arange(3, gb::TensorOptions().device(kGpu));
  CHECK(os.str() == "tensor([0, 1, 2], device='cuda:0')");
}

TEST_CASE("factories on cuda") {
  gbtest::check_values(gb::zeros({2, 2}, kGpu), {0, 0, 0, 0});
  gbtest::check_values(gb::ones({3}, gb::TensorOptions().device(kGpu).dtype(gb::kHalf)), {1, 1, 1});
  gbtest::check_values(gb::full({2}, 7, gb::TensorOptions().device(kGpu)), {7, 7});
  gbtest::check_values(gb::arange(4, gb::TensorOptions().device(kGpu)), {0, 1, 2, 3});
  gbtest::check_values(gb::eye(2, gb::TensorOptions().device(kGpu)), {1, 0, 0, 1});
  gb::manual_seed(3);
  gb::Tensor r = gb::randn({1000}, gb::TensorOptions().device(kGpu));
  gb::manual_seed(3);
  gbtest::check_close(r, gb::randn({1000}), 0, 0);  // the cpu generator's numbers, on the device
  CHECK(gb::zeros_like(r).device() == kGpu);
  CHECK(gb::tensor({1.0, 2.0}, gb::TensorOptions().device(kGpu)).device() == kGpu);
}

TEST_CASE("an op without a CUDA kernel refuses a cuda tensor with the next step") {
  gb::Tensor x = gb::ones({4}, kGpu);
  try {
    (void)gb::cumsum(x, 0);
    FAIL_CHECK("no error");
  } catch (const gb::Error& e) {
    CHECK(std::string(e.what()).find("no CUDA kernel in this build yet") != std::string::npos);
  }
}

// Contiguous aligned operands of one dtype take the 16-byte-word kernel (pw_vector_launch); the same values laid out
// otherwise (a transposed copy: two dims; a view one element in: off the 16-byte boundary) take the per-element
// kernel. Both must give the same bits, at sizes with and without a tail after the last whole word.
TEST_CASE("the word-at-a-time kernel gives the per-element kernel's bits") {
  gb::manual_seed(71);
  for (gb::ScalarType t : {gb::kFloat, gb::kHalf, gb::kBFloat16, gb::kDouble, gb::kInt32})
    for (int64_t n : {1, 3, 8, 17, 1000, 65537}) {
      CAPTURE(std::string(gb::to_string(t)));
      CAPTURE(n);
      const bool fp = gb::is_floating_point(t);
      gb::Tensor x = fp ? (gb::randn({n + 1}) * 3).to(t) : gb::randint(-50, 50, {n + 1}).to(t);
      gb::Tensor y = fp ? (gb::randn({n + 1}) * 3).to(t) : gb::randint(1, 50, {n + 1}).to(t);
      x.index_put_({0}, 0);
      gb::Tensor xg = x.to(kGpu), yg = y.to(kGpu);
      gb::Tensor xa = xg.narrow(0, 0, n), ya = yg.narrow(0, 0, n);  // aligned, contiguous: the word kernel
      gb::Tensor xs = xg.narrow(0, 1, n), ys = yg.narrow(0, 1, n);  // one element in: the per-element kernel
      auto same = [](const gb::Tensor& a, const gb::Tensor& b) {
        gb::Tensor ac = a.cpu().contiguous(), bc = b.cpu().contiguous();
        return std::memcmp(ac.data_ptr(), bc.data_ptr(), size_t(ac.nbytes())) == 0;
      };
      // shifted inputs into aligned outputs vs the same values copied aligned first
      gb::Tensor xs_a = xs.clone(), ys_a = ys.clone();
      CHECK(same(xs + ys, xs_a + ys_a));
      CHECK(same(xs * ys, xs_a * ys_a));
      CHECK(same(gb::relu(xs), gb::relu(xs_a)));
      CHECK(same(xs.add(ys, 2), xs_a.add(ys_a, 2)));
      CHECK(same(xa - ya, (x.narrow(0, 0, n) - y.narrow(0, 0, n)).to(kGpu)));  // and the cpu's values
      if (fp) {
        CHECK(same(gb::exp(xs), gb::exp(xs_a)));
        CHECK(same(gb::sigmoid(xs), gb::sigmoid(xs_a)));
        CHECK(same(xs / ys, xs_a / ys_a));
      }
      // two dims (a transposed copy) against one
      if (n == 1000) {
        gb::Tensor m = xa.view({40, 25}), mt = m.t().contiguous().t();
        CHECK(same(m * 2, mt * 2));
      }
      gb::Tensor f = gb::empty({n}, gb::TensorOptions().dtype(t).device(kGpu));
      f.fill_(3);
      CHECK(same(f, gb::full({n}, 3, gb::TensorOptions().dtype(t))));
    }
}
