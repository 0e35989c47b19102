// engine/cuda/index_ops.cpp — the CUDA halves of index.cpp's ops (cuda/ops.h): index_select and embedding, the
// accumulation their backward runs on, gather and scatter_add, on cuda/index.cu's kernels. The index tensor itself
// is read on the device (as int64) and each entry checked there: a bad one is the op's IndexError, raised at the next
// synchronization (cuda/device_error.h).
#include <algorithm>

#include "core/make.h"
#include "cuda/index_kernels.h"
#include "cuda/ops.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/factory.h"

namespace gb::cuda_ops {
namespace {

// The launch record of index.cu's row kernels for a tensor of `sizes` indexed along dim by index (flattened to int64
// into `dev_idx`, which must outlive the launch).
cuda_kernels::IndexRowsLaunch row_launch(IntArrayRef sizes, int64_t dim, const Tensor& index, ScalarType dtype,
                                         Tensor& dev_idx, const char* op) {
  dev_idx = detail::shallow_alias(index).reshape({-1}).to(kInt64).contiguous();
  cuda_kernels::IndexRowsLaunch l;
  l.device = int(index.device().index());
  l.dtype = dtype;
  l.outer = 1, l.size = sizes.empty() ? 1 : sizes[size_t(dim)], l.n = dev_idx.numel(), l.inner = 1;
  for (int64_t d = 0; d < dim; ++d) l.outer *= sizes[size_t(d)];
  for (int64_t d = dim + 1; d < int64_t(sizes.size()); ++d) l.inner *= sizes[size_t(d)];
  l.idx = dev_idx.data_ptr<int64_t>();
  l.op = op;
  l.dim = dim;
  return l;
}

// The launch record of gather_nd / scatter_add_nd: the index's shape (a 0-d index as one element), the contiguous
// strides of a tensor of `sizes` indexed along dim, the index as int64 in `dev_idx` (which must outlive the launch).
cuda_kernels::GatherLaunch gather_launch(IntArrayRef sizes, int64_t dim, const Tensor& index, ScalarType dtype,
                                         Tensor& dev_idx, const char* op) {
  dev_idx = detail::shallow_alias(index).to(kInt64).contiguous();
  cuda_kernels::GatherLaunch l;
  l.device = int(index.device().index());
  l.dtype = dtype;
  l.ndim = int(std::max<int64_t>(index.dim(), 1));
  GB_CHECK(l.ndim <= cuda_kernels::kMaxIndexDims, op, " on cuda: the index has ", index.dim(), " dims; at most ",
           cuda_kernels::kMaxIndexDims, " are supported");
  l.dim = int(index.dim() == 0 ? 0 : dim);
  l.op = op;
  l.dim_size = sizes.empty() ? 1 : sizes[size_t(dim)];
  l.numel = index.numel();
  const DimVector st = detail::contiguous_strides(sizes);
  for (int d = 0; d < l.ndim; ++d) {
    l.sizes[d] = index.dim() == 0 ? 1 : index.size(d);
    l.strides[d] = sizes.empty() ? 1 : st[size_t(d)];
  }
  l.idx = dev_idx.data_ptr<int64_t>();
  return l;
}

}  // namespace

void index_select(const Tensor& ac, int64_t dim, const Tensor& index, const Tensor& out, const char* op) {
  Tensor dev_idx;
  cuda_kernels::IndexRowsLaunch l =
      row_launch(ac.sizes(), ac.dim() == 0 ? 0 : dim, index, ac.scalar_type(), dev_idx, op);
  l.src = static_cast<const char*>(ac.data_ptr());
  l.dst = static_cast<char*>(out.data_ptr());
  cuda_kernels::index_select_rows(l);
}

Tensor index_add_zeros(const Tensor& g, int64_t dim, const Tensor& index, IntArrayRef sizes, int64_t skip,
                       const char* op) {
  NoGradGuard ng;  // atomic adds in float32 (float64 for float64), the 16-bit dtypes cast after
  const ScalarType ct = g.scalar_type() == kDouble ? kDouble : kFloat;
  Tensor acc = zeros(sizes, TensorOptions().dtype(ct).device(g.device()));
  Tensor gc = detail::shallow_alias(g).contiguous().to(ct);
  Tensor dev_idx;
  cuda_kernels::IndexRowsLaunch l = row_launch(sizes, dim, index, ct, dev_idx, op);
  l.src = static_cast<const char*>(gc.data_ptr());
  l.dst = static_cast<char*>(acc.data_ptr());
  l.skip = skip;
  cuda_kernels::index_add_rows(l);
  return acc.to(g.scalar_type());  // no copy when it is acc's dtype
}

void gather(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& out) {
  Tensor ac = detail::shallow_alias(a).contiguous(), dev_idx;
  cuda_kernels::GatherLaunch l = gather_launch(a.sizes(), dim, index, a.scalar_type(), dev_idx, "gather");
  l.src = static_cast<const char*>(ac.data_ptr());
  l.dst = static_cast<char*>(out.data_ptr());
  cuda_kernels::gather_nd(l);
}

void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  NoGradGuard ng;
  Tensor from = detail::shallow_alias(src).contiguous(), dev_idx;
  cuda_kernels::GatherLaunch l = gather_launch(out.sizes(), dim, index, out.scalar_type(), dev_idx, "scatter_add");
  l.src = static_cast<const char*>(from.data_ptr());
  l.dst = static_cast<char*>(out.data_ptr());
  cuda_kernels::scatter_add_nd(l);
}

void check_index_range(const Tensor& idx, int64_t size, int64_t dim, const char* op) {
  cuda_kernels::IndexRangeLaunch l;
  l.device = int(idx.device().index());
  l.idx = idx.data_ptr<int64_t>();
  l.n = idx.numel();
  l.size = size;
  l.dim = dim;
  l.op = op;
  cuda_kernels::check_index_range(l);
}

}  // namespace gb::cuda_ops
