// tests/engine/cuda/offset_calc_test.cpp — the CUDA kernels' element addressing, run on the host: merged dims give
// the same byte offsets as walking the strides, for contiguous, transposed, sliced and broadcast operands.
#include "cuda/offset_calc.h"

#include <vector>

#include "support/check.h"

namespace ck = gb::cuda_kernels;

namespace {

// Offsets of element i by the definition: row-major index -> sum of index * stride, for each operand.
std::vector<int64_t> walk(const std::vector<int64_t>& sizes, const std::vector<std::vector<int64_t>>& strides, int64_t i) {
  std::vector<int64_t> off(strides.size(), 0);
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    const int64_t idx = i % sizes[size_t(d)];
    i /= sizes[size_t(d)];
    for (size_t k = 0; k < strides.size(); ++k) off[k] += idx * strides[k][size_t(d)];
  }
  return off;
}

ck::OffsetCalc make(const std::vector<int64_t>& sizes, const std::vector<std::vector<int64_t>>& strides) {
  std::vector<const int64_t*> ptrs;
  for (const auto& s : strides) ptrs.push_back(s.data());
  ck::OffsetCalc c;
  REQUIRE(ck::make_offset_calc(c, int(sizes.size()), sizes.data(), ptrs.data(), int(ptrs.size())));
  return c;
}

void check_all(const std::vector<int64_t>& sizes, const std::vector<std::vector<int64_t>>& strides) {
  ck::OffsetCalc c = make(sizes, strides);
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  for (int64_t i = 0; i < numel; ++i) {
    int64_t off[ck::kMaxOperands];
    c.get(i, off);
    const auto want = walk(sizes, strides, i);
    for (size_t k = 0; k < strides.size(); ++k) REQUIRE_MESSAGE(off[k] == want[k], "element " << i << " operand " << k);
  }
}

}  // namespace

TEST_CASE("contiguous operands merge into one dim") {
  // out float [2,3,4] contiguous, input double [2,3,4] contiguous: strides in bytes
  ck::OffsetCalc c = make({2, 3, 4}, {{48, 16, 4}, {96, 32, 8}});
  CHECK(c.ndim == 1);
  CHECK(c.sizes[0] == 24);
  CHECK(c.strides[0][0] == 4);
  CHECK(c.strides[0][1] == 8);
  check_all({2, 3, 4}, {{48, 16, 4}, {96, 32, 8}});
}

TEST_CASE("size-1 dims are dropped and a scalar has no dims") {
  ck::OffsetCalc c = make({1, 5, 1}, {{20, 4, 4}, {0, 4, 0}});
  CHECK(c.ndim == 1);
  CHECK(c.sizes[0] == 5);
  ck::OffsetCalc s = make({}, {{}, {}});
  CHECK(s.ndim == 0);
  int64_t off[ck::kMaxOperands] = {7, 7};
  s.get(0, off);
  CHECK(off[0] == 0);
  CHECK(off[1] == 0);
}

TEST_CASE("a transposed input keeps two dims, and every element is found") {
  // out [3,4] contiguous float; input is the transpose of a [4,3] contiguous float
  ck::OffsetCalc c = make({3, 4}, {{16, 4}, {4, 12}});
  CHECK(c.ndim == 2);
  check_all({3, 4}, {{16, 4}, {4, 12}});
}

TEST_CASE("broadcast inputs (stride 0) along leading, middle and trailing dims") {
  // out [2,3,4]; a bias [4] broadcast; a column [2,3,1] broadcast along the last dim; a bool mask [1,3,1]
  check_all({2, 3, 4}, {{48, 16, 4}, {0, 0, 4}, {12, 4, 0}, {0, 1, 0}});
  // out [5,1,6] with an input [1,1,6]: leading broadcast merges with nothing
  check_all({5, 1, 6}, {{24, 24, 4}, {0, 0, 4}});
}

TEST_CASE("slices (a column block of a wider matrix) stay exact") {
  // out [4,3] contiguous; input is x[:, 2:5] of a [4,8] float matrix
  check_all({4, 3}, {{12, 4}, {32, 4}});
  // a 4-d permuted, sliced input
  check_all({2, 3, 2, 5}, {{120, 40, 20, 4}, {8, 400, 4000, 80}});
}

TEST_CASE("too many dims that cannot merge are refused, so the caller copies first") {
  std::vector<int64_t> sizes(20, 2), s0(20), s1(20);
  for (int d = 0; d < 20; ++d) {
    s0[size_t(d)] = int64_t(1) << (20 - d);       // contiguous: would merge on its own
    s1[size_t(d)] = int64_t(1) << (2 * (20 - d));  // every other element: never merges
  }
  const int64_t* ptrs[2] = {s0.data(), s1.data()};
  ck::OffsetCalc c;
  CHECK_FALSE(ck::make_offset_calc(c, 20, sizes.data(), ptrs, 2));
}
