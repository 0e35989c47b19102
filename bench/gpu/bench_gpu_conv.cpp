// bench/gpu/bench_gpu_conv.cpp — convolutions through gb::conv2d against cuDNN called directly, in the same run: a
// ResNet-50 stage's 3x3 convolutions (batch 32) in float16 and float32 (TF32 on, PyTorch's default for cuDNN),
// forward alone and forward + both gradients, with gb::backends::cudnn::benchmark on. The peer builds its
// descriptors once, times the same candidates with cudnnFind*AlgorithmEx and keeps the winners and one workspace:
// what glassbox's per-call cost (descriptors, the cache lookup, the workspace from the caching allocator) is
// measured against. Target: >= 95% of the peer's speed ("of_cudnn" = peer time / ours). JSON lines as
// bench/bench_common.h.
#include <cudnn.h>

#include <cstdio>
#include <string>

#include <glassbox/glassbox.h>

#include "bench_common.h"
#include "gpu/gpu_timing.h"

namespace {

#define CHECK_CUDNN(x)                                                       \
  do {                                                                       \
    cudnnStatus_t st_ = (x);                                                 \
    if (st_ != CUDNN_STATUS_SUCCESS) {                                       \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudnnGetErrorString(st_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

struct Shape {
  const char* name;
  int n, c, h, w, k;  // input (n, c, h, w), k output channels, 3x3, padding 1, stride 1
};

// cuDNN directly: descriptors once, the fastest algorithm per direction, one workspace for all three.
struct Peer {
  cudnnHandle_t h{};
  cudnnTensorDescriptor_t x{}, y{};
  cudnnFilterDescriptor_t w{};
  cudnnConvolutionDescriptor_t conv{};
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  gb::Tensor ws;
  size_t ws_bytes = 0;

  Peer(const Shape& s, cudnnDataType_t t, bool half, const gb::Tensor& xt, const gb::Tensor& wt, const gb::Tensor& yt,
       const gb::Tensor& gx, const gb::Tensor& gw) {
    CHECK_CUDNN(cudnnCreate(&h));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&x));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&y));
    CHECK_CUDNN(cudnnCreateFilterDescriptor(&w));
    CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&conv));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, t, s.n, s.c, s.h, s.w));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, t, s.n, s.k, s.h, s.w));
    CHECK_CUDNN(cudnnSetFilter4dDescriptor(w, t, CUDNN_TENSOR_NCHW, s.k, s.c, 3, 3));
    CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_CUDNN(cudnnSetConvolutionMathType(conv, half ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH));
    ws_bytes = size_t(1) << 30;  // a generous workspace for the search
    ws = gb::empty({int64_t(ws_bytes)}, gb::TensorOptions().dtype(gb::kUInt8).device(gb::kCUDA));
    int got = 0;
    cudnnConvolutionFwdAlgoPerf_t pf[16];
    CHECK_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(h, x, xt.data_ptr(), w, wt.data_ptr(), conv, y, yt.data_ptr(),
                                                       16, &got, pf, ws.data_ptr(), ws_bytes));
    fwd = pf[0].algo;
    cudnnConvolutionBwdDataAlgoPerf_t pd[16];
    CHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(h, w, wt.data_ptr(), y, yt.data_ptr(), conv, x,
                                                            gx.data_ptr(), 16, &got, pd, ws.data_ptr(), ws_bytes));
    bwd_data = pd[0].algo;
    cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
    CHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x, xt.data_ptr(), y, yt.data_ptr(), conv, w,
                                                              gw.data_ptr(), 16, &got, pw, ws.data_ptr(), ws_bytes));
    bwd_filter = pw[0].algo;
  }
  ~Peer() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroy(h);
  }
};

void convolution(const Shape& s, gb::ScalarType dtype) {
  const bool half = dtype == gb::kHalf;
  const cudnnDataType_t t = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const gb::TensorOptions o = gb::TensorOptions().device(gb::kCUDA).dtype(dtype);
  gb::Tensor x = gb::randn({s.n, s.c, s.h, s.w}, o), w = gb::randn({s.k, s.c, 3, 3}, o) * 0.05;
  gb::Tensor y = gb::empty({s.n, s.k, s.h, s.w}, o), gy = gb::randn({s.n, s.k, s.h, s.w}, o);
  gb::Tensor gx = gb::empty_like(x), gw = gb::empty_like(w);
  gb::backends::cudnn::benchmark = true;
  gb::backends::cudnn::allow_tf32 = true;
  Peer p(s, t, half, x, w, gy, gx, gw);
  const float one = 1, zero = 0;
  auto peer_forward = [&] {
    CHECK_CUDNN(cudnnConvolutionForward(p.h, &one, p.x, x.data_ptr(), p.w, w.data_ptr(), p.conv, p.fwd, p.ws.data_ptr(),
                                        p.ws_bytes, &zero, p.y, y.data_ptr()));
  };
  auto peer_backward = [&] {
    CHECK_CUDNN(cudnnConvolutionBackwardData(p.h, &one, p.w, w.data_ptr(), p.y, gy.data_ptr(), p.conv, p.bwd_data,
                                             p.ws.data_ptr(), p.ws_bytes, &zero, p.x, gx.data_ptr()));
    CHECK_CUDNN(cudnnConvolutionBackwardFilter(p.h, &one, p.x, x.data_ptr(), p.y, gy.data_ptr(), p.conv, p.bwd_filter,
                                               p.ws.data_ptr(), p.ws_bytes, &zero, p.w, gw.data_ptr()));
  };
  const double flops = 2.0 * s.n * s.k * s.h * s.w * s.c * 9;
  const std::string name = std::string(s.name) + (half ? "_f16" : "_tf32");
  {
    gb::NoGradGuard ng;
    const double ours = bench::median_ms([&] { (void)gb::conv2d(x, w, {}, 1, 1); }, 20);
    const double peer = bench::median_ms(peer_forward, 20);
    bench::emit_vs("gpu_conv", name + "_forward", ours, "ms", "cudnnConvolutionForward", peer,
                   "\"tflops\": " + std::to_string(flops / (ours * 1e-3) / 1e12) +
                       ", \"of_cudnn\": " + std::to_string(peer / ours));
  }
  gb::Tensor xr = x.detach().requires_grad_(), wr = w.detach().requires_grad_();
  const double ours = bench::median_ms([&] { gb::conv2d(xr, wr, {}, 1, 1).backward(gy); }, 20);
  const double peer = bench::median_ms(
      [&] {
        peer_forward();
        peer_backward();
      },
      20);
  bench::emit_vs("gpu_conv", name + "_forward_backward", ours, "ms", "cudnn forward + backward data + filter", peer,
                 "\"tflops\": " + std::to_string(3 * flops / (ours * 1e-3) / 1e12) +
                     ", \"of_cudnn\": " + std::to_string(peer / ours));
  gb::backends::cudnn::benchmark = false;
}

}  // namespace

int main() {
  if (!gb::cuda::is_available() || !gb::backends::cudnn::is_available()) {
    std::printf("{\"bench\": \"gpu_conv\", \"skipped\": \"%s\"}\n",
                gb::cuda::is_available() ? "this build has no cuDNN" : gb::cuda::unavailable_reason().c_str());
    return 0;
  }
  for (gb::ScalarType t : {gb::kHalf, gb::kFloat}) {
    convolution({"resnet_56x56_64", 32, 64, 56, 56, 64}, t);
    convolution({"resnet_14x14_256", 32, 256, 14, 14, 256}, t);
  }
  return 0;
}
