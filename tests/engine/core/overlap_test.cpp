// tests/engine/core/overlap_test.cpp — engine/core/overlap.h: density, a tensor's own overlap, how two views of one
// storage overlap (PyTorch's answers, including too_hard), and the byte spans the copies read through a temporary
// for, on cpu and meta tensors alike (offsets and strides only, no data read).
#include "core/overlap.h"
#include "support/check.h"

using gb::detail::InternalOverlap;
using gb::detail::Overlap;

TEST_CASE("dense means packed up to a permutation of dims, size-1 dims aside") {
  for (gb::Device d : {gb::Device(gb::kCPU), gb::Device(gb::kMeta)}) {
    CAPTURE(d.str());
    auto x = gb::empty({4, 6}, gb::TensorOptions().device(d));
    CHECK(gb::detail::is_non_overlapping_and_dense(x));
    CHECK(gb::detail::is_non_overlapping_and_dense(x.t()));           // column-major
    CHECK(gb::detail::is_non_overlapping_and_dense(x.narrow(0, 1, 2)));  // whole rows at an offset
    CHECK_FALSE(gb::detail::is_non_overlapping_and_dense(x.narrow(1, 1, 2)));  // a gap after each row
    CHECK_FALSE(gb::detail::is_non_overlapping_and_dense(x.slice(1, 0, 6, 2)));
    CHECK(gb::detail::is_non_overlapping_and_dense(x[1].unsqueeze(0)));  // size-1 dims have any stride
  }
}

TEST_CASE("a tensor's own overlap: expanded dims overlap, dense tensors do not, other strided ones are too hard") {
  auto x = gb::empty({3});
  CHECK(gb::detail::internal_overlap(x) == InternalOverlap::no);
  CHECK(gb::detail::internal_overlap(x.expand({2, 3})) == InternalOverlap::yes);
  CHECK(gb::detail::internal_overlap(x.unsqueeze(0).expand({1, 3})) == InternalOverlap::no);  // expanded to size 1
  CHECK(gb::detail::internal_overlap(gb::empty({4, 4}).slice(1, 0, 4, 2)) == InternalOverlap::too_hard);
  CHECK_THROWS_WITH_AS(gb::detail::check_no_internal_overlap(x.expand({2, 3}), "copy_"),
                       doctest::Contains("more than one element of the written-to tensor refers to a single memory"),
                       gb::Error);
  gb::detail::check_no_internal_overlap(x, "copy_");
}

TEST_CASE("two views of one storage: none, full, partial or too hard, as PyTorch's get_overlap_status") {
  for (gb::Device d : {gb::Device(gb::kCPU), gb::Device(gb::kMeta)}) {
    CAPTURE(d.str());
    auto x = gb::empty({6}, gb::TensorOptions().device(d));
    CHECK(gb::detail::overlap_status(x.slice(0, 1, 6), x.slice(0, 0, 5)) == Overlap::partial);
    CHECK(gb::detail::overlap_status(x.slice(0, 0, 3), x.slice(0, 3, 6)) == Overlap::none);  // adjacent, disjoint
    CHECK(gb::detail::overlap_status(x, x.view({2, 3})) == Overlap::full);
    CHECK(gb::detail::overlap_status(x, gb::empty({6}, gb::TensorOptions().device(d))) == Overlap::none);
    CHECK(gb::detail::overlap_status(x.slice(0, 0, 6, 2), x.slice(0, 1, 6, 2)) == Overlap::too_hard);
    CHECK(gb::detail::overlap_status(x.slice(0, 0, 0), x) == Overlap::none);  // empty
    // the spans: interleaved views meet though no element is shared; disjoint halves do not
    CHECK(gb::detail::spans_intersect(x.slice(0, 0, 6, 2), x.slice(0, 1, 6, 2)));
    CHECK_FALSE(gb::detail::spans_intersect(x.slice(0, 0, 3), x.slice(0, 3, 6)));
    CHECK_FALSE(gb::detail::spans_intersect(x, gb::empty({6}, gb::TensorOptions().device(d))));
  }
  // bytes, not elements: a float view and a double view of one storage
  auto bytes = gb::empty({16}, gb::kUInt8);
  CHECK(gb::detail::overlap_status(bytes.slice(0, 0, 8), bytes.slice(0, 4, 12)) == Overlap::partial);
  auto x = gb::empty({6});
  CHECK_THROWS_WITH_AS(gb::detail::check_no_partial_overlap(x.slice(0, 1, 6), x.slice(0, 0, 5), "copy_"),
                       doctest::Contains("copy_: unsupported operation: some elements of the input tensor and the "
                                         "written-to tensor refer to a single memory location"),
                       gb::Error);
  gb::detail::check_no_partial_overlap(x, x.view({6}), "copy_");  // full overlap is allowed
}
