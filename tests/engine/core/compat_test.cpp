// tests/engine/core/compat_test.cpp — glassbox/core/compat.h: libtorch's vocabulary under gb:: behaves as libtorch's.
#include "glassbox/core/compat.h"

#include <doctest/doctest.h>

#include "glassbox/ops/factory.h"

#include <vector>

TEST_CASE("gb::optional, nullopt and make_optional are the standard ones") {
  gb::optional<int64_t> none = gb::nullopt;
  CHECK_FALSE(none.has_value());
  gb::optional<int64_t> five = gb::make_optional<int64_t>(5);
  CHECK(five.value() == 5);
  static_assert(std::is_same_v<gb::optional<double>, std::optional<double>>);
}

TEST_CASE("gb::str streams every argument into one string") {
  CHECK(gb::str("x has ", 3, " dims, scale ", 0.5) == "x has 3 dims, scale 0.5");
  CHECK(gb::str() == "");
  CHECK(gb::str(gb::IntArrayRef({2, 3})) == "[2, 3]");
}

TEST_CASE("gb::irange counts as c10::irange: [0, n), [a, b), empty when b <= a") {
  std::vector<int64_t> seen;
  for (const auto i : gb::irange(int64_t(4))) seen.push_back(i);
  CHECK(seen == std::vector<int64_t>{0, 1, 2, 3});
  seen.clear();
  for (const auto i : gb::irange(2, int64_t(5))) seen.push_back(i);
  CHECK(seen == std::vector<int64_t>{2, 3, 4});
  static_assert(std::is_same_v<decltype(*gb::irange(2, int64_t(5)).begin()), int64_t>);
  int n = 0;
  for ([[maybe_unused]] auto i : gb::irange(5, 2)) ++n;
  for ([[maybe_unused]] auto i : gb::irange(0)) ++n;
  CHECK(n == 0);
}

TEST_CASE("gb::autograd::tensor_list is a vector of tensors, as variable_list") {
  gb::autograd::tensor_list l = {gb::ones({2}), gb::zeros({3})};
  static_assert(std::is_same_v<gb::autograd::tensor_list, gb::autograd::variable_list>);
  CHECK(l.size() == 2);
  CHECK(l[1].numel() == 3);
}
