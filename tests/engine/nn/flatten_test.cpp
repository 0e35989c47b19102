// tests/engine/nn/flatten_test.cpp — Flatten: default dims, custom dims, a view, repr.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"

TEST_CASE("Flatten merges start_dim..end_dim (default 1..-1) as a view") {
  gb::nn::Flatten flat;
  gb::Tensor x = gb::randn({2, 3, 4, 5});
  gb::Tensor y = flat(x);
  CHECK(y.sizes() == gb::IntArrayRef({2, 60}));
  CHECK(y.data_ptr() == x.data_ptr());
  gb::nn::Flatten mid(gb::nn::FlattenOptions().start_dim(1).end_dim(2));
  CHECK(mid(x).sizes() == gb::IntArrayRef({2, 12, 5}));
  gb::nn::Flatten all(gb::nn::FlattenOptions().start_dim(0));
  CHECK(all(x).sizes() == gb::IntArrayRef({120}));
  std::ostringstream os;
  flat->pretty_print(os);
  CHECK(os.str() == "Flatten(start_dim=1, end_dim=-1)");
}
