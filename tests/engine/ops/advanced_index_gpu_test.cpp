// tests/engine/ops/advanced_index_gpu_test.cpp — GPU tier: indexing with tensors on cuda
// (engine/ops/advanced_index.cpp, a composition of index_select, scatter_add, cat and copies that run on the device)
// against the cpu: integer and mask indices, slices between them, negative indices, index_put_ with values, a number
// and accumulate (repeated positions), and the gradient through index().
#include "support/check.h"

using gbtest::kGpu;
using namespace gb::indexing;

TEST_CASE("x.index({...}) with tensors on cuda equals the cpu, with its gradient") {
  gb::manual_seed(61);
  gb::Tensor x = gb::randn({4, 5, 6}, gb::kDouble);
  gb::Tensor rows = gb::tensor(std::vector<int64_t>{3, -1, 0, 3});
  gb::Tensor cols = gb::tensor(std::vector<int64_t>{1, 4, 4, 0});
  gb::Tensor mask = gb::gt(gb::randn({4, 5}), 0);
  auto same = [&](std::vector<TensorIndex> on_cpu, std::vector<TensorIndex> on_gpu) {
    gbtest::check_close(x.to(kGpu).index(on_gpu), x.index(on_cpu), 0, 0);
  };
  same({rows}, {rows.to(kGpu)});
  same({Slice(), cols}, {Slice(), cols.to(kGpu)});
  same({rows, Slice(), cols}, {rows.to(kGpu), Slice(), cols.to(kGpu)});  // apart: the indexed dim first
  same({rows, cols}, {rows.to(kGpu), cols.to(kGpu)});
  same({mask}, {mask.to(kGpu)});
  gb::Tensor xc = x.clone().requires_grad_(true), xg = x.to(kGpu).requires_grad_(true);
  (xc.index({rows, Slice(), cols}) * 2).sum().backward();
  (xg.index({rows.to(kGpu), Slice(), cols.to(kGpu)}) * 2).sum().backward();
  gbtest::check_close(xg.grad(), xc.grad(), 0, 0);  // rows 3 twice: its gradient adds up
}

TEST_CASE("index_put_ with tensors on cuda equals the cpu: values, a number, accumulate") {
  gb::manual_seed(62);
  gb::Tensor x = gb::randn({5, 4});
  gb::Tensor rows = gb::tensor(std::vector<int64_t>{0, 2, 2, 4});
  gb::Tensor v = gb::randn({4, 4});
  gb::Tensor c = x.clone(), g = x.to(kGpu);
  c.index_put_({rows}, v);
  g.index_put_({rows.to(kGpu)}, v.to(kGpu));
  gbtest::check_close(g, c, 0, 0);  // row 2 written twice: the last value, as on the cpu
  gb::Tensor m = gb::lt(x, 0);
  c = x.clone();
  g = x.to(kGpu);
  c.index_put_({m}, 0.5);
  g.index_put_({m.to(kGpu)}, 0.5);
  gbtest::check_close(g, c, 0, 0);
  c = x.clone();
  g = x.to(kGpu);
  c.index_put_({rows}, v, /*accumulate=*/true);
  g.index_put_({rows.to(kGpu)}, v.to(kGpu), true);
  gbtest::check_close(g, c, 1e-6, 1e-6);  // atomic adds in another order
}

TEST_CASE("x.index({...}) on cuda: integer indices checked on the device, raised at the next synchronization") {
  gb::Tensor x = gb::randn({4, 5}).to(kGpu);
  gb::Tensor bad = x.index({Slice(), gb::tensor(std::vector<int64_t>{0, 7}).to(kGpu)});  // returns at once
  CHECK_THROWS_WITH(bad.cpu(), doctest::Contains("index() on cuda:0: index 7 is out of bounds for dimension 1 "
                                                 "with size 5"));
  CHECK(gb::equal(x.index({gb::tensor(std::vector<int64_t>{-1}).to(kGpu)}).cpu(), x.cpu().index({-1}).unsqueeze(0)));
}
