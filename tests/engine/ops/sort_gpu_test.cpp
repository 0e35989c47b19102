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
