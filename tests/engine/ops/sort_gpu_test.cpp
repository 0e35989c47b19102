// GPU tier for sort, argsort and topk on cuda (engine/cuda/sort.cu): the cpu's values and indices — stable ties,
// NaN above +inf (first when descending), -0 and +0 equal, integers, every dim — and topk's sorted=false order and
// gradient.
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("gpu: sort, argsort and topk on cuda equal the cpu") {
  gb::manual_seed(101);
  const gb::Tensor special =
      gb::tensor(std::vector<float>{2, NAN, -0.f, 0, 1, 2, -INFINITY, INFINITY, NAN, 1, -3, 0}).view({2, 6});
  for (bool desc : {false, true}) {
    CAPTURE(desc);
    auto [vc, ic] = gb::sort(special, 1, desc);
    auto [vg, ig] = gb::sort(special.to(kGpu), 1, desc);
    gbtest::check_close(vg, vc, 0, 0);
    CHECK(gb::equal(ig.cpu(), ic));                                     // stable: the cpu's positions for ties
    const gb::Tensor r = gb::randint(0, 4, {5, 7, 3}).to(gb::kDouble);  // many ties
    for (int64_t d = 0; d < 3; ++d) {
      CHECK(gb::equal(gb::argsort(r.to(kGpu), d, desc).cpu(), gb::argsort(r, d, desc)));
      CHECK(gb::equal(std::get<0>(gb::sort(r.to(gb::kInt64).to(kGpu), d, desc)).cpu(),
                      std::get<0>(gb::sort(r.to(gb::kInt64), d, desc))));
    }
  }
  const gb::Tensor x = gb::randn({6, 50});
  for (bool largest : {true, false})
    for (bool sorted : {true, false}) {
      CAPTURE(largest);
      CAPTURE(sorted);
      auto [vc, ic] = gb::topk(x, 7, 1, largest, sorted);
      auto [vg, ig] = gb::topk(x.to(kGpu), 7, 1, largest, sorted);
      gbtest::check_close(vg, vc, 0, 0);
      CHECK(gb::equal(ig.cpu(), ic));
    }
  gb::Tensor a = x.clone().requires_grad_(true), b = x.to(kGpu).requires_grad_(true);
  (std::get<0>(gb::topk(a, 5, 1)) * 3).sum().backward();
  (std::get<0>(gb::topk(b, 5, 1)) * 3).sum().backward();
  gbtest::check_close(b.grad(), a.grad(), 0, 0);
}

TEST_CASE("gpu: one long line sorts on CUB's device-wide radix sort with the cpu's values and stable indices") {
  gb::manual_seed(102);
  // 10^6 keys from 64 values (many ties: the positions show stability), with NaN, infinities and both zeros
  gb::Tensor f = gb::randint(-32, 32, {1000000}).to(gb::kFloat) * 0.5;
  f.slice(0, 0, 1000000, 9973).fill_(NAN);
  f.slice(0, 5, 1000000, 7919).fill_(-0.0);
  f.slice(0, 7, 1000000, 10007).fill_(INFINITY);
  f.slice(0, 11, 1000000, 10009).fill_(-INFINITY);
  for (gb::ScalarType t : {gb::kFloat, gb::kDouble, gb::kHalf, gb::kInt64}) {
    const gb::Tensor k = t == gb::kInt64 ? gb::randint(-5, 5, {1000000}) : f.to(t);
    for (bool desc : {false, true}) {
      CAPTURE(gb::to_string(t));
      CAPTURE(desc);
      auto [vc, ic] = gb::sort(k, 0, desc);
      auto [vg, ig] = gb::sort(k.to(kGpu), 0, desc);
      gbtest::check_close(vg, vc, 0, 0);
      CHECK(gb::equal(ig.cpu(), ic));
    }
  }
  // a single row of a 2-D tensor, and topk over one line
  const gb::Tensor row = gb::randn({1, 300000});
  CHECK(gb::equal(gb::argsort(row.to(kGpu), 1).cpu(), gb::argsort(row, 1)));
  auto [tv, ti] = gb::topk(row.to(kGpu), 1000, 1);
  auto [cv, ci] = gb::topk(row, 1000, 1);
  gbtest::check_close(tv, cv, 0, 0);
  CHECK(gb::equal(ti.cpu(), ci));
}
