// engine/ops/loops.cpp — building a StridedLoop: broadcast strides, then merge dims contiguous for every operand.
#include "ops/loops.h"

#include "core/make.h"

namespace gb::detail {

StridedLoop::StridedLoop(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  GB_ASSERT(int(inputs.size()) + 1 <= kMaxOperands, "too many operands");
  nt_ = int(inputs.size()) + 1;
  // Op entries with a CUDA kernel never get here with cuda tensors; one without refuses them at its device check.
  // This is the net under both: a CPU loop must not dereference device memory.
  GB_CHECK(!out.is_cuda(), "this op has no CUDA kernel yet (its CPU loop was reached with a tensor on ",
           out.device().str(), "); compute it on the cpu with .cpu() and move the result back with .to(gb::kCUDA)");
  const int64_t nd = out.dim();
  numel_ = out.numel();
  const IntArrayRef shape = out.sizes();
  data_[0] = static_cast<char*>(out.data_ptr());
  int t = 1;
  for (const Tensor* in : inputs) {
    GB_CHECK(in->device() == out.device(), "Expected all tensors to be on the same device, but found at least two ",
             "devices, ", out.device().str(), " and ", in->device().str(), "!");
    GB_ASSERT(in->dim() <= nd, "input has more dims than the output: ", in->sizes(), " vs ", out.sizes());
    for (int64_t d = 0; d < in->dim(); ++d)
      GB_ASSERT(in->size(d) == shape[nd - in->dim() + d] || in->size(d) == 1, "input ", in->sizes(),
                " does not broadcast to ", out.sizes());
    data_[t++] = static_cast<char*>(in->data_ptr());
  }
  // Operand k's byte stride along out's dim d (0 where it broadcasts).
  const Tensor* ops[kMaxOperands] = {&out};
  t = 1;
  for (const Tensor* in : inputs) ops[t++] = in;
  auto stride_of = [&](int k, int64_t d) -> int64_t {
    const Tensor& x = *ops[k];
    const int64_t dx = d - (nd - x.dim());
    if (dx < 0 || x.size(dx) == 1) return 0;
    return x.stride(dx) * x.element_size();
  };
  // Drop size-1 dims, then merge dim d into the previous kept one when (for every operand) that one's stride equals
  // stride[d] * size[d].
  nd_ = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    int64_t st[kMaxOperands];
    for (int k = 0; k < nt_; ++k) st[k] = stride_of(k, d);
    if (nd_ > 0) {
      bool mergeable = true;
      for (int k = 0; k < nt_; ++k)
        if (strides_[k][nd_ - 1] != st[k] * shape[d]) mergeable = false;
      if (mergeable) {
        shape_[nd_ - 1] *= shape[d];
        for (int k = 0; k < nt_; ++k) strides_[k][nd_ - 1] = st[k];
        continue;
      }
    }
    GB_CHECK(nd_ < kMaxLoopDims, "elementwise ops take tensors of at most ", kMaxLoopDims,
             " dimensions that cannot be merged, but got an output of size ", out.sizes(),
             "; reshape the operands to fewer dimensions first");
    shape_[nd_] = shape[d];
    for (int k = 0; k < nt_; ++k) strides_[k][nd_] = st[k];
    ++nd_;
  }
  if (skip_kernel(out)) numel_ = 0;  // meta: no elements to visit (the op has made its tensors already)
  if (numel_ == 0) {
    nd_ = 1;
    shape_[0] = 0;
    for (int k = 0; k < nt_; ++k) strides_[k][0] = 0;
  }
}

}  // namespace gb::detail
