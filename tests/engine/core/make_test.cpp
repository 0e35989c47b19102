// tests/engine/core/make_test.cpp — the internal tensor-making helpers: strides, views, aliases, dim wrapping.
#include "core/make.h"
#include "support/check.h"

TEST_CASE("contiguous strides and numel") {
  CHECK(gb::detail::contiguous_strides({2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
  CHECK(gb::detail::contiguous_strides({2, 0, 4}) == std::vector<int64_t>{4, 4, 1});
  CHECK(gb::detail::contiguous_strides({}).empty());
  CHECK(gb::detail::numel_of({2, 0, 4}) == 0);
  CHECK(gb::detail::numel_of({}) == 1);
}

TEST_CASE("make_empty, make_view and shallow_alias") {
  auto t = gb::detail::make_empty({2, 3}, gb::kFloat64, gb::kCPU);
  CHECK(t.is_contiguous());
  CHECK(t.storage()->nbytes == 48);
  auto v = gb::detail::make_view(t, {3, 2}, {1, 3}, 0);
  CHECK(v.storage() == t.storage());
  CHECK(v.is_view());
  CHECK_FALSE(v.is_contiguous());
  CHECK_FALSE(v.requires_grad());
  auto w = gb::ones({2}, gb::requires_grad());
  auto a = gb::detail::shallow_alias(w);
  CHECK(a.storage() == w.storage());
  CHECK_FALSE(a.requires_grad());
  CHECK_THROWS_WITH_AS(gb::detail::make_empty({-2}, gb::kFloat, gb::kCPU), doctest::Contains("negative dimension -2"),
                       gb::Error);
  // found by fuzz/dataset_fuzz.cpp (an IDX header): sizes whose product overflows, even with a 0 among them
  CHECK_THROWS_WITH_AS(gb::detail::make_empty({0, int64_t(1) << 40, int64_t(1) << 40}, gb::kFloat, gb::kCPU),
                       doctest::Contains("the product of its sizes overflows int64"), gb::Error);
  CHECK(gb::detail::make_empty({0, int64_t(1) << 30}, gb::kFloat, gb::kCPU).numel() == 0);
}

TEST_CASE("wrap_dim and dim_mask speak PyTorch") {
  CHECK(gb::detail::wrap_dim(-1, 3) == 2);
  CHECK(gb::detail::wrap_dim(0, 0) == 0);  // a 0-dim tensor accepts 0 and -1
  CHECK(gb::detail::wrap_dim(-1, 0) == 0);
  CHECK_THROWS_WITH_AS(gb::detail::wrap_dim(3, 3, "sum"),
                       "sum: Dimension out of range (expected to be in range of [-3, 2], but got 3)", gb::IndexError);
  CHECK(gb::detail::dim_mask({}, 2, "op") == std::vector<bool>{true, true});
  CHECK(gb::detail::dim_mask({-1}, 3, "op") == std::vector<bool>{false, false, true});
  CHECK_THROWS_WITH_AS(gb::detail::dim_mask({0, -2}, 2, "op"), doctest::Contains("appears multiple times"), gb::Error);
  CHECK(gb::detail::shape_str({2, 3}) == "[2, 3]");
}
