// GPU tier for cumsum on cuda (engine/cuda/cumsum.cu): the cpu's bits for float32/64 and integers along every dim,
// float16 within its rounding, and the gradient (a reversed running sum, through flip).
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("gpu: cumsum on cuda equals the cpu along every dim, with its gradient") {
  gb::manual_seed(91);
  const gb::Tensor x = gb::randn({3, 40, 5});
  for (int64_t d = 0; d < 3; ++d) {
    CAPTURE(d);
    CHECK(gb::equal(gb::cumsum(x.to(kGpu), d).cpu(), gb::cumsum(x, d)));
    CHECK(gb::equal(gb::cumsum(x.to(gb::kDouble).to(kGpu), d).cpu(), gb::cumsum(x.to(gb::kDouble), d)));
  }
  const gb::Tensor i = gb::randint(-5, 5, {7, 9});
  CHECK(gb::equal(gb::cumsum(i.to(kGpu), 1).cpu(), gb::cumsum(i, 1)));
  CHECK(gb::equal(gb::cumsum(i.to(gb::kInt32).to(kGpu), 0).cpu(), gb::cumsum(i.to(gb::kInt32), 0)));
  gbtest::check_close(gb::cumsum(x.to(gb::kHalf).to(kGpu), 1), gb::cumsum(x.to(gb::kHalf), 1), 1e-2, 1e-2);
  gb::Tensor a = x.clone().requires_grad_(true), b = x.to(kGpu).requires_grad_(true);
  (gb::cumsum(a, 1) * gb::cumsum(a, 1)).sum().backward();
  (gb::cumsum(b, 1) * gb::cumsum(b, 1)).sum().backward();
  gbtest::check_close(b.grad(), a.grad(), 1e-5, 1e-5);
}

TEST_CASE("gpu: a long line takes CUB's device-wide scan, long rows a block each; both the cpu's sums") {
  gb::manual_seed(92);
  // one line of 10^7: every float dtype within its rounding of the same float64 sums, integers exact
  const gb::Tensor x = gb::randn({10000000});
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kBFloat16}) {
    CAPTURE(gb::to_string(t));
    const gb::Tensor c = x.to(t);
    const gb::Tensor g = gb::cumsum(c.to(kGpu), 0);
    CHECK(g.scalar_type() == t);
    // the float64 partial sums differ from the cpu's in order only: float64 to the bit is not promised, the rounded
    // 16-bit values are the cpu's up to one unit of their last place
    const double rtol = t == gb::kDouble ? 1e-10 : t == gb::kFloat ? 1e-6 : t == gb::kHalf ? 1e-3 : 8e-3;
    gbtest::check_close(g, gb::cumsum(c, 0), rtol, t == gb::kDouble ? 1e-7 : t == gb::kFloat ? 1e-3 : 2.0);
  }
  const gb::Tensor i = gb::randint(-1000, 1000, {10000000});
  CHECK(gb::equal(gb::cumsum(i.to(kGpu), 0).cpu(), gb::cumsum(i, 0)));
  CHECK(gb::equal(gb::cumsum(i.to(gb::kInt32).to(kGpu), 0).cpu(), gb::cumsum(i.to(gb::kInt32), 0)));
  // rows of 5000 (a block each, tiles of 1024 with the carry), and rows of 600 (one partial tile past the first)
  for (int64_t n : {5000, 600}) {
    CAPTURE(n);
    const gb::Tensor r = gb::randn({70, n});
    gbtest::check_close(gb::cumsum(r.to(kGpu), 1), gb::cumsum(r, 1), 1e-6, 1e-4);
    gbtest::check_close(gb::cumsum(r.to(gb::kDouble).to(kGpu), 1), gb::cumsum(r.to(gb::kDouble), 1), 1e-12, 1e-9);
    const gb::Tensor ri = gb::randint(-9, 9, {70, n});
    CHECK(gb::equal(gb::cumsum(ri.to(kGpu), 1).cpu(), gb::cumsum(ri, 1)));
    CHECK(gb::equal(gb::cumsum(ri.to(gb::kInt8).to(kGpu), 1).cpu(), gb::cumsum(ri.to(gb::kInt8), 1)));  // wraps
  }
  // the gradient of a long line (flip + cumsum of the gradient: the device-wide scan again)
  gb::Tensor a = x.slice(0, 0, 1 << 20).clone().requires_grad_(true);
  gb::Tensor b = x.slice(0, 0, 1 << 20).to(kGpu).requires_grad_(true);
  gb::cumsum(a, 0).sum().backward();
  gb::cumsum(b, 0).sum().backward();
  gbtest::check_close(b.grad(), a.grad(), 1e-6, 1e-6);  // n - i: integers, exact in float
}

TEST_CASE("gpu: a few long lines across columns are transposed to rows, with the cpu's sums") {
  gb::manual_seed(93);
  const gb::Tensor x = gb::randn({100000, 3});  // 3 lines of 10^5 down dim 0
  gbtest::check_close(gb::cumsum(x.to(kGpu), 0), gb::cumsum(x, 0), 1e-6, 1e-3);
  const gb::Tensor y = gb::randn({4, 5000, 6}, gb::kDouble);  // 24 lines of 5000 down the middle dim
  gbtest::check_close(gb::cumsum(y.to(kGpu), 1), gb::cumsum(y, 1), 1e-12, 1e-9);
  const gb::Tensor i = gb::randint(-9, 9, {3000, 2});
  CHECK(gb::equal(gb::cumsum(i.to(kGpu), 0).cpu(), gb::cumsum(i, 0)));
}
