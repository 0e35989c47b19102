// engine/cuda/dropout_ops.cpp — dropout's CUDA half (cuda/ops.h): the keep-mask, or mask and output in one kernel
// (cuda/dropout.cu), drawn from the device's Philox generator (cuda/philox.h) — the mask a function of the seed, the
// call's offset and the element's index.
#include "core/make.h"
#include "cuda/kernels.h"
#include "cuda/ops.h"
#include "cuda/philox.h"

namespace gb::cuda_ops {
namespace {

// The kernel's launch for n elements of t's dtype on t's device, keeping with probability 1 - p; it takes the next
// numbers of the device's generator.
cuda_kernels::DropoutLaunch launch(const Tensor& t, int64_t n, double p) {
  cuda_kernels::DropoutLaunch l;
  l.device = int(t.device().index());
  l.dtype = t.scalar_type();
  l.n = n;
  l.keep = 1.0 - p;
  l.scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  const cuda_kernels::PhiloxSeed s = cuda_kernels::philox_reserve(l.device, cuda_kernels::kDropoutOffsetIncrement);
  l.seed = s.seed;
  l.offset = s.offset;
  return l;
}

}  // namespace

void dropout_mask(const Tensor& mask, double p) {
  cuda_kernels::DropoutLaunch l = launch(mask, mask.numel(), p);
  l.mask = static_cast<char*>(mask.data_ptr());
  cuda_kernels::dropout(l);
}

void dropout(const Tensor& x, double p, const Tensor& mask, const Tensor& out) {
  Tensor xc = detail::shallow_alias(x).contiguous();
  cuda_kernels::DropoutLaunch l = launch(x, x.numel(), p);
  l.x = static_cast<const char*>(xc.data_ptr());
  l.mask = static_cast<char*>(mask.data_ptr());
  l.out = static_cast<char*>(out.data_ptr());
  cuda_kernels::dropout(l);
}

}  // namespace gb::cuda_ops
