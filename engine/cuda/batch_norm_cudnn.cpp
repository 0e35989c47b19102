// engine/cuda/batch_norm_cudnn.cpp — batch_norm on cuDNN (see batch_norm_cudnn.h): cudnnBatchNormalizationForward
// Training / ForwardInference / Backward, the calls PyTorch's cudnn_batch_norm makes. Without cuDNN the entries throw
// an error that says what to install.
#include "cuda/batch_norm_cudnn.h"

#include "glassbox/core/error.h"

#if GLASSBOX_WITH_CUDNN
#include <climits>

#include "cuda/cudnn_util.h"
#endif

namespace gb::detail {

#if !GLASSBOX_WITH_CUDNN

namespace {
[[noreturn]] void throw_no_cudnn() {
  throw Error(
      "batch_norm on cuda: this build of glassbox has no cuDNN (CMake did not find cudnn.h and libcudnn.so next to "
      "the CUDA toolkit, or GLASSBOX_CUDNN was OFF). Install cuDNN 9 for this CUDA version (NVIDIA's cudnn9-cuda "
      "package) and rebuild; `glassbox env` shows what is found.");
}
}  // namespace

void cudnn_batch_norm_forward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                              bool, double, double, const Tensor&, const Tensor&) {
  throw_no_cudnn();
}
void cudnn_batch_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, double,
                               const Tensor&, const Tensor&, const Tensor&) {
  throw_no_cudnn();
}

#else

namespace {

using cuda_kernels::CudnnTensorDesc;

constexpr const char* kOp = "batch_norm";

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// x (N, C, *) as cuDNN's (N, C, S, 1) and the parameters' (1, C, 1, 1).
struct Descs {
  CudnnTensorDesc x, p;
  explicit Descs(const Tensor& t)
      : x(cuda_kernels::cudnn_type(t.scalar_type(), kOp), t.size(0), t.size(1),
          t.size(0) != 0 && t.size(1) != 0 ? t.numel() / (t.size(0) * t.size(1)) : 0, 1, kOp, "the input"),
        p(t.scalar_type() == ScalarType::Double ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, 1, t.size(1), 1, 1, kOp,
          "the weight") {}
};

// cuDNN indexes a tensor with 32-bit integers. PyTorch sends an input of 2^31 - 1 elements or more to its own CUDA
// kernel instead (use_cudnn requires input.numel() < INT32_MAX in _batch_norm_impl_index); glassbox has no other
// batch_norm kernel on cuda, and the batch cannot be split (the statistics are over all of it), so it is refused.
const Tensor& check_32bit(const Tensor& x) {
  GB_CHECK(x.numel() < INT_MAX, "batch_norm on cuda: the input ", x.sizes(), " has ", x.numel(),
           " elements, more than the 2^31 - 2 cuDNN's batch normalization indexes. Compute it from its formula on "
           "cuda, (x - x.mean({0, 2, 3}, true)) / gb::sqrt(x.var({0, 2, 3}, false, true) + eps) * w + b (shapes "
           "(1, C, 1, 1)), or normalize a smaller input");
  return x;
}

// What both directions set up: x's device current, the thread's handle on its current stream, the descriptors.
struct Call {
  cuda_kernels::DeviceGuard guard;
  cudnnHandle_t h;
  Descs d;
  ScalarType t;
  explicit Call(const Tensor& x)
      : guard(int(check_32bit(x).device().index())),
        h(cuda_kernels::cudnn_handle(int(x.device().index()), kOp)),
        d(x),
        t(x.scalar_type()) {}
};

}  // namespace

void cudnn_batch_norm_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                              const Tensor& running_mean, const Tensor& running_var, bool training, double momentum,
                              double eps, const Tensor& save_mean, const Tensor& save_rstd) {
  if (x.numel() == 0) return;
  Call c(x);
  const cudnnHandle_t h = c.h;
  const Descs& d = c.d;
  const ScalarType t = c.t;
  if (training)
    GB_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
        h, CUDNN_BATCHNORM_SPATIAL, cuda_kernels::cudnn_scalar(t, 1), cuda_kernels::cudnn_scalar(t, 0), d.x.d,
        x.data_ptr(), d.x.d, y.data_ptr(), d.p.d, w.data_ptr(), b.data_ptr(), momentum, ptr(running_mean),
        ptr(running_var), eps, save_mean.data_ptr(), save_rstd.data_ptr()));
  else
    GB_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, cuda_kernels::cudnn_scalar(t, 1),
                                                           cuda_kernels::cudnn_scalar(t, 0), d.x.d, x.data_ptr(), d.x.d,
                                                           y.data_ptr(), d.p.d, w.data_ptr(), b.data_ptr(),
                                                           running_mean.data_ptr(), running_var.data_ptr(), eps));
}

void cudnn_batch_norm_backward(const Tensor& x, const Tensor& gy, const Tensor& w, const Tensor& save_mean,
                               const Tensor& save_rstd, double eps, const Tensor& gx, const Tensor& gw,
                               const Tensor& gb) {
  if (x.numel() == 0) return;
  Call c(x);
  const cudnnHandle_t h = c.h;
  const Descs& d = c.d;
  const ScalarType t = c.t;
  const void* one = cuda_kernels::cudnn_scalar(t, 1);
  const void* zero = cuda_kernels::cudnn_scalar(t, 0);
  GB_CUDNN_CHECK(cudnnBatchNormalizationBackward(
      h, CUDNN_BATCHNORM_SPATIAL, one, zero, one, zero, d.x.d, x.data_ptr(), d.x.d, gy.data_ptr(), d.x.d, gx.data_ptr(),
      d.p.d, w.data_ptr(), gw.data_ptr(), gb.data_ptr(), eps, save_mean.data_ptr(), save_rstd.data_ptr()));
}

#endif

}  // namespace gb::detail
