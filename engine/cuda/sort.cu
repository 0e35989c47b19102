// engine/cuda/sort.cu — the segmented stable sort of sort/argsort/topk on cuda (cuda/sort_kernels.h): CUB's
// DeviceSegmentedSort::StableSortPairs(Descending), one segment per line, the positions carried as values; a single
// line on DeviceRadixSort::SortPairs(Descending), which spreads one sequence over the whole device (the segmented
// sort gives a segment one block), stable as well ("DeviceRadixSort is stable", device_radix_sort.cuh), and whose
// bit transformation orders the canonical keys as the cpu's sort does (-0 is already +0, NaN one positive NaN above
// +inf; a descending radix sort keeps equal keys in input order, as the stable descending segmented sort does).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <cstdint>

#include "cuda/check.h"
#include "cuda/sort_kernels.h"

namespace gb::cuda_kernels {
namespace {

// CUB's call for key type K: the size query when temp is null, else the sort.
template <typename K>
cudaError_t run(const SegmentedSortLaunch& l, void* temp, size_t& bytes, cudaStream_t s) {
  const K* in = static_cast<const K*>(l.keys_in);
  K* out = static_cast<K*>(l.keys_out);
  const int64_t total = l.segments * l.n;
  if (l.segments == 1) {  // one line: the device-wide radix sort (stable too), not one segment on one block
    if (l.descending)
      return cub::DeviceRadixSort::SortPairsDescending(temp, bytes, in, out, l.values_in, l.values_out, total, 0,
                                                       int(sizeof(K) * 8), s);
    return cub::DeviceRadixSort::SortPairs(temp, bytes, in, out, l.values_in, l.values_out, total, 0,
                                           int(sizeof(K) * 8), s);
  }
  if (l.descending)
    return cub::DeviceSegmentedSort::StableSortPairsDescending(temp, bytes, in, out, l.values_in, l.values_out, total,
                                                               l.segments, l.offsets, l.offsets + 1, s);
  return cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, in, out, l.values_in, l.values_out, total, l.segments,
                                                   l.offsets, l.offsets + 1, s);
}

cudaError_t dispatch(const SegmentedSortLaunch& l, void* temp, size_t& bytes, cudaStream_t s) {
  switch (l.key_dtype) {
    case ScalarType::Float:
      return run<float>(l, temp, bytes, s);
    case ScalarType::Double:
      return run<double>(l, temp, bytes, s);
    case ScalarType::Int64:
      return run<int64_t>(l, temp, bytes, s);
    default:
      throw Error(detail::str_cat("sort on cuda: keys of ", to_string(l.key_dtype),
                                  " (the op converts to float32, float64 or int64 first)"));
  }
}

}  // namespace

size_t segmented_sort_temp_bytes(const SegmentedSortLaunch& l) {
  DeviceGuard guard(l.device);
  size_t bytes = 0;
  GB_CUDA_CHECK(dispatch(l, nullptr, bytes, current_stream(l.device)));
  return bytes;
}

void segmented_sort(const SegmentedSortLaunch& l) {
  if (l.segments * l.n == 0) return;
  DeviceGuard guard(l.device);
  size_t bytes = l.temp_bytes;
  GB_CUDA_CHECK(dispatch(l, l.temp, bytes, current_stream(l.device)));
}

}  // namespace gb::cuda_kernels
