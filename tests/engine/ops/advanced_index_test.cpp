// tests/engine/ops/advanced_index_test.cpp — indexing with tensors (engine/ops/advanced_index.cpp): the values and
// shapes PyTorch gives, writes through index_put_ into views, gradients by gradcheck, and every refusal named.
// (Forward and backward against libtorch: tests/oracle/ops_oracle_test.cpp.)
#include "support/check.h"

using gbtest::check_values;
using namespace gb::indexing;

namespace {
gb::Tensor longs(std::vector<int64_t> v) { return gb::tensor(gb::ArrayRef<int64_t>(v), gb::kLong); }
}  // namespace

TEST_CASE("index tensors and masks pick values in PyTorch's shapes") {
  auto x = gb::arange(12).view({3, 4});  // [[0..3], [4..7], [8..11]]
  check_values(x.index({longs({2, 0})}), {8, 9, 10, 11, 0, 1, 2, 3});
  CHECK(x.index({longs({2, 0})}).sizes() == gb::IntArrayRef({2, 4}));
  check_values(x.index({Slice(), longs({-1})}), {3, 7, 11});  // negative: from the end
  check_values(x.index({longs({0, 2}), longs({1, 3})}), {1, 11});  // pairs
  CHECK(x.index({longs({0, 2}).view({2, 1}), longs({1, 3})}).sizes() == gb::IntArrayRef({2, 2}));  // broadcast
  check_values(x.index({x > 8}), {9, 10, 11});
  check_values(x.index({gb::tensor(std::vector<bool>{true, false, true})}), {0, 1, 2, 3, 8, 9, 10, 11});
  check_values(x.index({(x > 8).to(gb::kUInt8)}), {9, 10, 11});  // a uint8 mask, as PyTorch still accepts
  CHECK(x.index({x > 100}).sizes() == gb::IntArrayRef({0}));
  CHECK(x.index({gb::tensor(2, gb::kLong)}).sizes() == gb::IntArrayRef({4}));  // a 0-dim index drops the dim
  CHECK(x.index({gb::scalar_tensor(1, gb::kBool)}).sizes() == gb::IntArrayRef({1, 3, 4}));  // x[True]
  auto y = gb::arange(24).view({2, 3, 4});
  CHECK(y.index({longs({0, 1}), Slice(), longs({3, 0})}).sizes() == gb::IntArrayRef({2, 3}));  // apart: first
  CHECK(y.index({Slice(), longs({0, 2, 1}), longs({3, 0, 1})}).sizes() == gb::IntArrayRef({2, 3}));  // in place
  CHECK(y.index({Slice(), longs({0, 2, 1}).view({3, 1}), longs({3, 0})}).sizes() == gb::IntArrayRef({2, 3, 2}));
  check_values(x[gb::tensor(1, gb::kLong)], {4, 5, 6, 7});  // x[0-dim tensor] is x[1]
  CHECK(x.index({longs({1})}).data_ptr() != x.data_ptr());  // a copy, not a view
}

TEST_CASE("index_put_ writes into the positions, through views, last value wins or accumulates") {
  auto x = gb::zeros({3, 4});
  x.index_put_({x.sum(1) == 0}, 1.0);  // a row mask and a number
  check_values(x.sum(1), {4, 4, 4});
  x.index_put_({longs({0, 2}), longs({1, 3})}, gb::tensor({5.0f, 7.0f}));
  CHECK(x[0][1].item<float>() == 5);
  CHECK(x[2][3].item<float>() == 7);
  x.index_put_({Slice(), longs({0})}, gb::tensor({-1.0f}));  // values broadcast
  check_values(x.index({Slice(), 0}), {-1, -1, -1});
  auto row = x[1];  // a view: writes reach x
  row.index_put_({row > 0}, 9.0);
  check_values(x[1], {-1, 9, 9, 9});
  auto acc = gb::zeros({4});
  acc.index_put_({longs({1, 1, 3, 1})}, gb::tensor({1.0f, 2.0f, 3.0f, 4.0f}), /*accumulate=*/true);
  check_values(acc, {0, 7, 0, 3});
  auto last = gb::zeros({4});
  last.index_put_({longs({2, 2, 2})}, gb::tensor({1.0f, 2.0f, 3.0f}));
  check_values(last, {0, 0, 3, 0});
  auto ints = gb::zeros({4}, gb::kInt64);  // values converted to self's dtype
  ints.index_put_({longs({0, 3})}, gb::tensor({1.9, 2.9}, gb::kDouble));
  check_values(ints, {1, 0, 0, 2});
  auto flags = gb::zeros({3}, gb::kBool);
  flags.index_put_({longs({1})}, true);
  check_values(flags, {0, 1, 0});
}

TEST_CASE("index and index_put_ are differentiable (gradcheck)") {
  gb::manual_seed(5);
  auto idx = longs({2, 0, 2});
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return v[0].index({Slice(), idx}); },
                          {gb::randn({3, 4}, gbtest::f64_grad())}));
  CHECK(gbtest::gradcheck1(
      [&](const gb::variable_list& v) {
        gb::Tensor y = v[0] * 1.0;
        y.index_put_({longs({0, 2})}, v[1]);
        return y * y;
      },
      {gb::randn({3, 4}, gbtest::f64_grad()), gb::randn({2, 4}, gbtest::f64_grad())}));
  auto leaf = gb::zeros({3}, gb::requires_grad());
  CHECK_THROWS_WITH_AS(leaf.index_put_({longs({0})}, 1.0), doctest::Contains("leaf"), gb::Error);
}

TEST_CASE("refusals name the index and the fix") {
  auto x = gb::zeros({3, 4});
  CHECK_THROWS_WITH_AS(x.index({longs({3})}), "index 3 is out of bounds for dimension 0 with size 3", gb::IndexError);
  CHECK_THROWS_WITH_AS(x.index({Slice(), longs({-5})}), "index -5 is out of bounds for dimension 1 with size 4",
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(x.index({gb::ones({4}) > 0}), doctest::Contains("The shape of the mask [4] at index 0 does "
                                                                        "not match the shape of the indexed tensor"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(x.index({gb::ones({2})}), doctest::Contains("must be long, int, byte or bool"), gb::IndexError);
  CHECK_THROWS_WITH_AS(x.index({longs({0, 1}), longs({0, 1, 2})}),
                       doctest::Contains("shape mismatch: indexing tensors could not be broadcast together with "
                                         "shapes [2], [3]"),
                       gb::IndexError);
  CHECK_THROWS_WITH_AS(x.index({0, 0, longs({0})}), doctest::Contains("too many indices"), gb::IndexError);
  CHECK_THROWS_WITH_AS(x.index_put_({longs({0, 1})}, gb::ones({3, 4})),
                       doctest::Contains("shape mismatch: value tensor of shape [3, 4] cannot be broadcast to "
                                         "indexing result of shape [2, 4]"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(x[gb::tensor({1, 2}, gb::kLong)], doctest::Contains("x.index({t})"), gb::IndexError);
  CHECK_THROWS_WITH_AS(gb::zeros({2}, gb::kMeta).index({gb::zeros({2}, gb::kMeta) > 0}), doctest::Contains("meta"),
                       gb::Error);
}
