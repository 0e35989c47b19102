// engine/core/overlap.h — whether two tensors (or one tensor's own elements) share memory: PyTorch's
// has_internal_overlap / get_overlap_status (ATen/MemoryOverlap.h), on storages and offsets only, so they answer on
// every device (meta included) without reading data.
//
// copy_ refuses what PyTorch's refuses (a written-to tensor whose elements share memory; a source that partly
// overlaps the destination); copy_into (the ops' own copies, every device) reads an overlapping source into a
// temporary first, so a device's element-parallel copy gives what the cpu's memmove gives.
#pragma once

#include "glassbox/core/tensor.h"

namespace gb::detail {

// t's elements each at their own address and, sorted by stride, packed with no gap (contiguous up to a permutation
// of dims; size-1 dims ignored): what the overlap questions can answer exactly.
bool is_non_overlapping_and_dense(const Tensor& t);

// yes: some two elements of t are one memory location (a stride-0 dim of size > 1, as expand makes); no: none are;
// too_hard: t is not dense and has no stride 0, so this does not decide (PyTorch's answer then as well).
enum class InternalOverlap { no, yes, too_hard };
InternalOverlap internal_overlap(const Tensor& t);

// How a's and b's memory relate: none (other storage, or disjoint bytes), full (the same bytes, both dense), partial
// (both dense, some bytes shared and some not), too_hard (one is not dense: the exact answer would need its layout).
enum class Overlap { none, full, partial, too_hard };
Overlap overlap_status(const Tensor& a, const Tensor& b);

// Whether a and b are on one storage and the byte spans from their lowest to their highest element meet (dense or
// not): a copy between them may read a byte it has already written.
bool spans_intersect(const Tensor& a, const Tensor& b);

// Throw PyTorch's "unsupported operation" errors (naming op) when t's elements overlap / when a and b partly do.
void check_no_internal_overlap(const Tensor& t, const char* op);
void check_no_partial_overlap(const Tensor& written, const Tensor& read, const char* op);

}  // namespace gb::detail
