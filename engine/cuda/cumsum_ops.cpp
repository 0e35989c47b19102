// engine/cuda/cumsum_ops.cpp — cumsum's CUDA half (cuda/ops.h): a device-wide scan, a block or a thread per line
// (cuda/cumsum.cu), its scratch from the caching allocator.
#include "core/make.h"
#include "cuda/cumsum_kernels.h"
#include "cuda/ops.h"
#include "glassbox/ops/shape.h"
#include "ops/inplace.h"

namespace gb::cuda_ops {
namespace {

// dst = running sums of src along the middle dim of (outer, n, inner), both contiguous of dst's dtype.
void scan(const Tensor& src, const Tensor& dst, int64_t outer, int64_t n, int64_t inner) {
  cuda_kernels::CumsumLaunch l;
  l.device = int(dst.device().index());
  l.dtype = dst.scalar_type();
  l.outer = outer, l.n = n, l.inner = inner;
  l.src = src.data_ptr();
  l.dst = dst.data_ptr();
  l.temp_bytes = cuda_kernels::cumsum_temp_bytes(l);  // CUB's scratch for a single line, from the caching allocator
  Tensor temp = l.temp_bytes ? detail::make_empty({int64_t(l.temp_bytes)}, kUInt8, dst.device()) : Tensor();
  l.temp = l.temp_bytes ? temp.data_ptr() : nullptr;
  cuda_kernels::cumsum(l);
}

}  // namespace

void cumsum(const Tensor& src, const Tensor& out, int64_t outer, int64_t n, int64_t inner) {
  if (inner > 1 && outer * inner < 1024 && n >= 2048) {
    // Few long lines across columns: a thread each would walk n elements alone. Transposed they are rows, a
    // block-wide scan each, and the sums are transposed back.
    Tensor rows = detail::shallow_alias(src).view({outer, n, inner}).transpose(1, 2).contiguous();
    Tensor sums = detail::make_empty(rows.sizes(), out.scalar_type(), out.device());
    scan(rows, sums, outer * inner, n, 1);
    detail::copy_into(detail::shallow_alias(out).view({outer, n, inner}), sums.transpose(1, 2));
    return;
  }
  scan(src, out, outer, n, inner);
}

}  // namespace gb::cuda_ops
