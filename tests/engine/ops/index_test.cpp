// tests/engine/ops/index_test.cpp — index_select, gather, scatter_add, embedding, one_hot: values, duplicate
// indices, non-contiguous inputs, bounds errors (gb::IndexError naming the op, the index and the dim's size),
// gradcheck in f64 and double backward through the accumulate op.
#include "support/check.h"

using gbtest::check_values;
using gbtest::gradgradcheck1;
using gbtest::idx;

TEST_CASE("index_select picks rows or columns") {
  auto x = gb::arange(12).view({3, 4});
  auto r = gb::index_select(x, 0, idx({2, 0, 2}));
  CHECK(r.sizes() == gb::IntArrayRef({3, 4}));
  check_values(r, {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  auto c = x.index_select(1, idx({3, 1}).to(gb::kInt32));
  CHECK(c.sizes() == gb::IntArrayRef({3, 2}));
  check_values(c, {3, 1, 7, 5, 11, 9});
  check_values(x.index_select(-1, idx({0})), {0, 4, 8});
  // non-contiguous input and index
  check_values(x.t().index_select(0, idx({1, 3})), {1, 5, 9, 3, 7, 11});
  check_values(x.index_select(0, gb::tensor({0, 9, 1, 9, 2}).slice(0, 0, 5, 2)), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // empty index, float data, 0-dim index
  CHECK(x.index_select(0, gb::empty({0}, gb::kInt64)).sizes() == gb::IntArrayRef({0, 4}));
  check_values(gb::index_select(x.to(gb::kFloat64), 1, gb::tensor(int64_t(2))), {2, 6, 10});
}

TEST_CASE("index errors name the op, the index and the dim's size") {
  auto x = gb::ones({5, 2}, gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::index_select(x, 0, idx({1, 7})),
                       doctest::Contains("index_select(): index 7 is out of bounds for dimension 0 with size 5"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::index_select(x, 1, idx({-1})),
                       doctest::Contains("index_select(): index -1 is out of bounds for dimension 1 with size 2"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::index_select(x, 0, gb::tensor({0.0})), doctest::Contains("Expected dtype int64 or int32"),
                       gb::TypeError);
  CHECK_THROWS_WITH_AS(gb::index_select(x, 0, gb::zeros({1, 1}, gb::kInt64)),
                       doctest::Contains("Index is supposed to be a vector"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::index_select(x, 2, idx({0})), doctest::Contains("Dimension out of range"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::gather(x, 0, gb::tensor({0, 5}).view({1, 2})),
                       doctest::Contains("gather(): index 5 is out of bounds for dimension 0 with size 5"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::gather(x, 1, gb::zeros({6, 1}, gb::kInt64)),
                       doctest::Contains("Size does not match at dimension 0 expected index [6, 1] to be smaller than "
                                         "self [5, 2] apart from dimension 1"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::gather(x, 1, gb::zeros({2}, gb::kInt64)),
                       doctest::Contains("Index tensor must have the same number of dimensions as input tensor"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::scatter_add(x, 1, gb::tensor({2}).view({1, 1}), gb::ones({1, 1}, gb::kFloat)),
                       doctest::Contains("scatter_add(): index 2 is out of bounds for dimension 1 with size 2"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::scatter_add(x, 0, gb::zeros({2, 2}, gb::kInt64), gb::ones({1, 2}, gb::kFloat)),
                       doctest::Contains("to be smaller size than src [1, 2]"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::scatter_add(x, 0, gb::zeros({1, 2}, gb::kInt64), gb::ones({1, 2}, gb::kFloat64)),
                       doctest::Contains("Expected self.dtype to be equal to src.dtype"), gb::TypeError);
  auto w = gb::ones({4, 3}, gb::kFloat);
  CHECK_THROWS_WITH_AS(gb::embedding(w, idx({0, 4})),
                       doctest::Contains("embedding(): index 4 is out of bounds for dimension 0 with size 4"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::embedding(gb::ones({4}, gb::kFloat), idx({0})), doctest::Contains("'weight' must be 2-D"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::one_hot(idx({1, 5}), 3),
                       doctest::Contains("one_hot(): index 5 is out of bounds for dimension -1 with size 3"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::one_hot(idx({-2})), doctest::Contains("Class values must be non-negative, got index -2"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::one_hot(gb::empty({0}, gb::kInt64)), doctest::Contains("Can not infer total number of classes"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::one_hot(gb::tensor({1.0})), doctest::Contains("one_hot is only applicable to index tensor"),
                       gb::TypeError);
}

TEST_CASE("gather and scatter_add along each dim") {
  auto x = gb::tensor({{1.0, 2.0}, {3.0, 4.0}});
  auto i = gb::tensor({0, 0, 1, 0}).view({2, 2});
  auto g1 = gb::gather(x, 1, i);
  check_values(g1, {1, 1, 4, 3});
  check_values(x.gather(0, i), {1, 2, 3, 2});
  // index smaller than self in the other dim, and a transposed input
  check_values(x.gather(1, gb::tensor({1}).view({1, 1})), {2});
  check_values(x.t().gather(0, i), {1, 3, 2, 3});
  check_values(gb::arange(5).gather(0, idx({4, 4, 0})), {4, 4, 0});
  // scatter_add accumulates duplicates
  auto z = gb::zeros({2, 3}, gb::kFloat);
  auto src = gb::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  auto si = gb::tensor({0, 2, 0, 1, 1, 1}).view({2, 3});
  auto s = z.scatter_add(1, si, src);
  check_values(s, {4, 0, 2, 0, 15, 0});
  check_values(z, {0, 0, 0, 0, 0, 0});  // out of place
  auto s0 = gb::scatter_add(gb::ones({3, 2}, gb::kFloat), 0, gb::tensor({2, 2}).view({1, 2}), src);
  check_values(s0, {1, 1, 1, 1, 2, 3});  // src larger than index: only its [0:1, 0:2] block is used
  check_values(gb::scatter_add(gb::zeros({3}, gb::kInt64), 0, idx({1, 1, 2}), gb::arange(3)), {0, 1, 2});
}

TEST_CASE("embedding looks rows up and accumulates gradients") {
  auto w = gb::arange(8, gb::TensorOptions().dtype(gb::kFloat64)).view({4, 2});
  auto ids = gb::tensor({3, 0, 3, 1, 2, 3}).view({2, 3});
  auto e = gb::embedding(w, ids);
  CHECK(e.sizes() == gb::IntArrayRef({2, 3, 2}));
  check_values(e, {6, 7, 0, 1, 6, 7, 2, 3, 4, 5, 6, 7});
  auto wg = w.clone().requires_grad_();
  auto out = gb::embedding(wg, ids);
  CHECK(out.grad_fn()->name() == "EmbeddingBackward0");
  out.sum().backward();
  check_values(wg.grad(), {1, 1, 1, 1, 1, 1, 3, 3});  // row 3 appears three times
  auto wp = w.clone().requires_grad_();
  gb::embedding(wp, ids, /*padding_idx=*/3).sum().backward();
  check_values(wp.grad(), {1, 1, 1, 1, 1, 1, 0, 0});  // the padding row gets nothing
  check_values(gb::embedding(w, ids.to(gb::kInt32), 3), {6, 7, 0, 1, 6, 7, 2, 3, 4, 5, 6, 7});  // forward unchanged
}

TEST_CASE("one_hot") {
  auto o = gb::one_hot(idx({0, 2, 1}));
  CHECK(o.scalar_type() == gb::kInt64);
  CHECK(o.sizes() == gb::IntArrayRef({3, 3}));
  check_values(o, {1, 0, 0, 0, 0, 1, 0, 1, 0});
  auto o2 = gb::one_hot(gb::tensor({1, 0}).view({2, 1}), 4);
  CHECK(o2.sizes() == gb::IntArrayRef({2, 1, 4}));
  check_values(o2, {0, 1, 0, 0, 1, 0, 0, 0});
  CHECK(gb::one_hot(gb::empty({0}, gb::kInt64), 5).sizes() == gb::IntArrayRef({0, 5}));
}

TEST_CASE("gradients of the index ops match finite differences") {
  gb::manual_seed(8);
  auto x = gb::randn({4, 3}, gbtest::f64_grad());
  auto rows = idx({2, 0, 2, 3});
  auto sel = [rows](const gb::variable_list& v) { return gb::index_select(v[0], 0, rows); };
  auto out = sel({x});
  CHECK(out.grad_fn()->name() == "IndexSelectBackward0");
  CHECK(gbtest::gradcheck1(sel, {x}));
  CHECK(gbtest::gradcheck1([](const gb::variable_list& v) { return gb::index_select(v[0].t(), 1, idx({1, 1})); }, {x}));
  CHECK(gradgradcheck1([rows](const gb::variable_list& v) { return gb::index_select(v[0], 0, rows) * v[0].sum(); },
                       {x}));
  // index_select's gradient accumulates duplicates
  auto xs = gb::zeros({4, 3}, gbtest::f64_grad());
  gb::index_select(xs, 0, rows).sum().backward();
  check_values(xs.grad().select(1, 0), {1, 0, 2, 1});

  auto gi = gb::tensor({0, 3, 3, 1, 2, 2}).view({3, 2});
  auto gat = [gi](const gb::variable_list& v) { return gb::gather(v[0], 0, gi); };
  CHECK(gat({x}).grad_fn()->name() == "GatherBackward0");
  CHECK(gbtest::gradcheck1(gat, {x}));
  CHECK(gradgradcheck1([gi](const gb::variable_list& v) { return gb::gather(v[0], 0, gi) * gb::gather(v[0], 0, gi); },
                       {x}));

  auto self = gb::randn({3, 4}, gbtest::f64_grad());
  auto src = gb::randn({2, 5}, gbtest::f64_grad());
  auto si = gb::tensor({0, 3, 3, 1, 2, 0, 0, 3}).view({2, 4});
  auto sa = [si](const gb::variable_list& v) { return gb::scatter_add(v[0], 1, si, v[1]); };
  CHECK(sa({self, src}).grad_fn()->name() == "ScatterAddBackward0");
  CHECK(gbtest::gradcheck1(sa, {self, src}));  // src (2,5) is larger than index (2,4): its last column gets 0

  auto w = gb::randn({5, 3}, gbtest::f64_grad());
  auto ids = gb::tensor({4, 0, 4, 2}).view({2, 2});
  CHECK(gbtest::gradcheck1([ids](const gb::variable_list& v) { return gb::embedding(v[0], ids); }, {w}));
  CHECK(gradgradcheck1([ids](const gb::variable_list& v) { return gb::embedding(v[0], ids) * v[0].sum(); }, {w}));
  // with padding the backward is not the forward's true derivative (by design), so only the grad_output path is
  // checked: the padding row must stay masked in the backward of the backward too
  CHECK(gradgradcheck1([ids](const gb::variable_list& v) { return gb::embedding(v[0], ids, 4) * 2.0; }, {w}));
}
