// engine/cuda/sort_ops.cpp — sort's and topk's CUDA half (cuda/ops.h): CUB's stable segmented sort (cuda/sort.cu)
// over the lines as contiguous rows.
#include <algorithm>
#include <limits>
#include <vector>

#include "core/make.h"
#include "cuda/ops.h"
#include "cuda/sort_kernels.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb::cuda_ops {
namespace {

// CUB's stable segmented sort over `segments` rows of n keys (contiguous, of a key dtype), carrying `values`.
void segmented_sort(const Tensor& keys, const Tensor& values, int64_t segments, int64_t n, bool descending,
                         Tensor& keys_out, Tensor& values_out) {
  const TensorOptions io = TensorOptions().dtype(kInt64).device(keys.device());
  const Tensor offsets = arange(segments + 1, io) * n;
  keys_out = empty_like(keys);
  values_out = empty({segments, n}, io);
  cuda_kernels::SegmentedSortLaunch l;
  l.device = int(keys.device().index());
  l.key_dtype = keys.scalar_type();
  l.segments = segments;
  l.n = n;
  l.keys_in = keys.data_ptr();
  l.keys_out = keys_out.data_ptr();
  l.values_in = values.data_ptr<int64_t>();
  l.values_out = values_out.data_ptr<int64_t>();
  l.offsets = offsets.data_ptr<int64_t>();
  l.descending = descending;
  l.temp_bytes = cuda_kernels::segmented_sort_temp_bytes(l);
  const Tensor temp = empty({int64_t(std::max<size_t>(l.temp_bytes, 1))}, TensorOptions().dtype(kUInt8).device(keys.device()));
  l.temp = temp.data_ptr();
  cuda_kernels::segmented_sort(l);
}

}  // namespace

// sort_kernel on cuda: the lines as contiguous rows (dim moved last), their keys canonicalized (NaN as one positive
// NaN, above +inf; -0 as +0: the cpu's comparisons see -0 == +0 and NaNs equal), stably sorted carrying their
// positions; then the first k (in position order for by_position) and the values gathered from the rows.
void sort(const Tensor& a, int64_t dim, int64_t k, bool descending, bool by_position, const Tensor& values,
          const Tensor& indices) {
  NoGradGuard ng;
  const int64_t last = a.dim() - 1, n = a.size(dim);
  const Tensor rows = a.transpose(dim, last).contiguous();
  const int64_t segments = rows.numel() / n;
  const Tensor lines = rows.view({segments, n});
  const ScalarType kt = a.scalar_type() == kDouble ? kDouble : a.is_floating_point() ? kFloat : kInt64;
  Tensor keys = lines.to(kt);
  if (a.is_floating_point()) keys = where(isnan(keys), std::numeric_limits<double>::quiet_NaN(), keys) + 0.0;
  keys = keys.contiguous();
  const TensorOptions io = TensorOptions().dtype(kInt64).device(a.device());
  Tensor sorted_keys, order;
  segmented_sort(keys, arange(n, io).repeat({segments}).contiguous(), segments, n, descending, sorted_keys,
                      order);
  Tensor top = order.narrow(1, 0, k).contiguous();
  if (by_position && k > 1) {
    Tensor by_pos, carried;
    segmented_sort(top, top, segments, k, false, by_pos, carried);
    top = carried;
  }
  std::vector<int64_t> shape = rows.sizes().vec();
  shape[size_t(last)] = k;
  detail::copy_into(values, lines.gather(1, top).view(shape).transpose(dim, last));
  detail::copy_into(indices, top.view(shape).transpose(dim, last));
}

}  // namespace gb::cuda_ops
