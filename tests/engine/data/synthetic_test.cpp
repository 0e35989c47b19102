// tests/engine/data/synthetic_test.cpp — engine/data/synthetic.cpp: determinism, shapes, balanced classes.
#include <doctest/doctest.h>

#include "data_test_util.h"

using namespace gb::data::datasets;

TEST_CASE("point sets: sizes, classes, the same data from the same seed") {
  Spirals s(300, 3, 0.1, 4);
  CHECK(s.size() == 300);
  CHECK(s.get(4).data.sizes() == gb::IntArrayRef({2}));
  CHECK(s.get(4).target.item<int64_t>() == 1);
  CHECK(gbtest::bytes(Spirals(300, 3, 0.1, 4).get(123).data) == gbtest::bytes(s.get(123).data));
  CHECK(gbtest::bytes(Spirals(300, 3, 0.1, 5).get(123).data) != gbtest::bytes(s.get(123).data));
  Blobs b(100, 4, 5, 0.5, 1);
  CHECK(b.get(7).data.sizes() == gb::IntArrayRef({5}));
  CHECK(b.get(7).target.item<int64_t>() == 3);
}

TEST_CASE("rendered shapes and digits: (1,S,S) in [0,1], reproducible per index, ink where expected") {
  Shapes shapes(100, 16, 3);
  for (int64_t i = 0; i < 8; ++i) {
    auto e = shapes.get(i);
    CHECK(e.data.sizes() == gb::IntArrayRef({1, 16, 16}));
    CHECK(e.target.item<int64_t>() == i % 4);
    CHECK(e.data.min().item<float>() >= 0.0f);
    CHECK(e.data.max().item<float>() <= 1.0f);
    CHECK(e.data.gt(0.5).sum().item<int64_t>() > 10);  // the shape is drawn
    CHECK(gbtest::bytes(e.data) == gbtest::bytes(Shapes(100, 16, 3).get(i).data));
  }
  CHECK(gbtest::bytes(shapes.get(0).data) != gbtest::bytes(shapes.get(4).data));  // two circles differ
  Digits digits(50, 16, 0);
  CHECK(digits.get(13).target.item<int64_t>() == 3);
  CHECK(digits.get(8).data.gt(0.5).sum().item<int64_t>() > digits.get(1).data.gt(0.5).sum().item<int64_t>());
  CHECK_THROWS_WITH(shapes.get(100), gbtest::contains("index 100 is out of range for 100 samples"));
}
