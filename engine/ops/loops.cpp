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
  std::vector<int64_t> shape = out.sizes().vec();
  std::array<std::vector<int64_t>, kMaxOperands> st;
  st[0].resize(size_t(nd));
  for (int64_t d = 0; d < nd; ++d) st[0][d] = out.stride(d) * out.element_size();
  data_[0] = static_cast<char*>(out.data_ptr());
  int t = 1;
  for (const Tensor* in : inputs) {
    GB_CHECK(in->device() == out.device(), "Expected all tensors to be on the same device, but found at least two ",
             "devices, ", out.device().str(), " and ", in->device().str(), "!");
    st[t].assign(size_t(nd), 0);
    int64_t lead = nd - in->dim();
    GB_ASSERT(lead >= 0, "input has more dims than the output: ", in->sizes(), " vs ", out.sizes());
    for (int64_t d = 0; d < in->dim(); ++d) {
      int64_t s = in->size(d);
      GB_ASSERT(s == shape[lead + d] || s == 1, "input ", in->sizes(), " does not broadcast to ", out.sizes());
      st[t][lead + d] = s == 1 ? 0 : in->stride(d) * in->element_size();
    }
    data_[t] = static_cast<char*>(in->data_ptr());
    ++t;
  }
  // Drop size-1 dims, then merge dim d into d+1 when (for every operand) stride[d] == stride[d+1] * size[d+1].
  std::vector<int64_t> ms;
  std::array<std::vector<int64_t>, kMaxOperands> mst;
  for (int64_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    if (!ms.empty()) {
      bool mergeable = true;
      for (int k = 0; k < nt_; ++k)
        if (mst[k].back() != st[k][d] * shape[d]) mergeable = false;
      if (mergeable) {
        ms.back() *= shape[d];
        for (int k = 0; k < nt_; ++k) mst[k].back() = st[k][d];
        continue;
      }
    }
    ms.push_back(shape[d]);
    for (int k = 0; k < nt_; ++k) mst[k].push_back(st[k][d]);
  }
  shape_ = std::move(ms);
  for (int k = 0; k < nt_; ++k) strides_[k] = std::move(mst[k]);
  if (skip_kernel(out)) numel_ = 0;  // meta: no elements to visit (the op has made its tensors already)
  if (numel_ == 0) shape_ = {0};
  if (numel_ == 0)
    for (int k = 0; k < nt_; ++k) strides_[k] = {0};
}

}  // namespace gb::detail
