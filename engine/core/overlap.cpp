// engine/core/overlap.cpp — memory overlap between tensors (see overlap.h): byte spans within a storage, from sizes,
// strides and offsets alone.
#include "core/overlap.h"

#include <algorithm>
#include <vector>

#include "glassbox/core/error.h"

namespace gb::detail {
namespace {

// [first, last) bytes of t's elements within its storage: from its lowest element's first byte to its highest
// element's last (negative strides included).
struct Span {
  int64_t first, last;
};
Span span_of(const Tensor& t) {
  int64_t lo = t.storage_offset(), hi = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t reach = (t.size(d) - 1) * t.stride(d);
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo * t.element_size(), (hi + 1) * t.element_size()};
}

bool same_storage(const Tensor& a, const Tensor& b) {
  return a.storage() && a.storage() == b.storage();
}

}  // namespace

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.numel() <= 1) return true;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t x, int64_t y) { return t.stride(x) < t.stride(y); });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

InternalOverlap internal_overlap(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return InternalOverlap::no;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) == 0) return InternalOverlap::yes;
  return InternalOverlap::too_hard;
}

Overlap overlap_status(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || !same_storage(a, b)) return Overlap::none;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return Overlap::too_hard;
  const Span x = span_of(a), y = span_of(b);
  if (x.first == y.first && x.last == y.last) return Overlap::full;
  if (x.first < y.last && y.first < x.last) return Overlap::partial;
  return Overlap::none;
}

bool spans_intersect(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || !same_storage(a, b)) return false;
  const Span x = span_of(a), y = span_of(b);
  return x.first < y.last && y.first < x.last;
}

void check_no_internal_overlap(const Tensor& t, const char* op) {
  GB_CHECK(internal_overlap(t) != InternalOverlap::yes, op,
           ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location (a tensor of shape ", t.sizes(), " with strides ", t.strides(),
           ", as expand() makes). Please clone() the tensor before performing the operation.");
}

void check_no_partial_overlap(const Tensor& written, const Tensor& read, const char* op) {
  GB_CHECK(overlap_status(written, read) != Overlap::partial, op,
           ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location (two views of one storage, at element offsets ", read.storage_offset(), " and ",
           written.storage_offset(), "). Please clone() the tensor before performing the operation.");
}

}  // namespace gb::detail
