// engine/cuda/conv_cudnn.cpp — conv2d's cuda kernels on cuDNN (see conv_cudnn.h), and torch.backends.cudnn's
// is_available / version (glassbox/core/cudnn.h).
//
// cuDNN's convolution API of descriptors and algorithms (cudnnConvolutionForward / BackwardData / BackwardFilter,
// the "legacy" API cuDNN 9 keeps and PyTorch's convolutions still call): host code only, compiled by the C++
// compiler; handles and checks from cuda/cudnn_util.h.
#include "cuda/conv_cudnn.h"

#include "glassbox/core/cuda.h"
#include "glassbox/core/cudnn.h"
#include "glassbox/core/error.h"

#if GLASSBOX_WITH_CUDNN
#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/cudnn_util.h"
#include "glassbox/memory/memory.h"
#include "glassbox/memory/oom.h"
#endif

namespace gb {

namespace backends::cudnn {

bool is_available() { return detail::cudnn_built() && gb::cuda::is_available(); }

int64_t version() {
#if GLASSBOX_WITH_CUDNN
  return int64_t(cudnnGetVersion());
#else
  return 0;
#endif
}

}  // namespace backends::cudnn

namespace detail {

#if !GLASSBOX_WITH_CUDNN

bool cudnn_built() { return false; }

namespace {
[[noreturn]] void throw_no_cudnn(const char* what) {
  throw Error(str_cat(what,
                      " on cuda: this build of glassbox has no cuDNN (CMake did not find cudnn.h and libcudnn.so next "
                      "to the CUDA toolkit, or GLASSBOX_CUDNN was OFF). Install cuDNN 9 for this CUDA version "
                      "(NVIDIA's cudnn9-cuda package) and rebuild; `glassbox env` shows what is found."));
}
}  // namespace

void cudnn_conv_forward(const ConvGeom&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  throw_no_cudnn("conv2d");
}
void cudnn_conv_backward(const ConvGeom&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  throw_no_cudnn("conv2d's backward");
}
CudnnCacheStats cudnn_cache_stats() { return {}; }

#else

bool cudnn_built() { return true; }

namespace {

using cuda_kernels::cudnn_handle;
using cuda_kernels::cudnn_scalar;
using cuda_kernels::cudnn_type;
using TensorDesc = cuda_kernels::CudnnTensorDesc;

cudnnDataType_t data_type(ScalarType t) { return cudnn_type(t, "conv2d"); }

// cuDNN's convolutions index a tensor with 32-bit integers. A batch whose input or output has more than 2^31 - 1
// elements runs as parts of the batch that each fit, one call per part (PyTorch's split_batch_dim_to_32bit_out in
// its Conv_v7.cpp); f(part's geometry, first sample, samples) runs each part. One sample too large is refused.
template <class F>
void split_batch(const ConvGeom& g, F&& f) {
  const int64_t in = g.N * g.C * g.H * g.W, out = g.N * g.O * g.Ho * g.Wo;
  if (std::max(in, out) <= INT_MAX) return f(g, int64_t(0), g.N);
  const int64_t per_sample = std::max(g.C * g.H * g.W, g.O * g.Ho * g.Wo);
  GB_CHECK(per_sample <= INT_MAX, "conv2d on cuda: one sample of the ", in >= out ? "input" : "output", " (",
           in >= out ? g.C : g.O, ", ", in >= out ? g.H : g.Ho, ", ", in >= out ? g.W : g.Wo, ") has ", per_sample,
           " elements, more than the 2^31 - 1 cuDNN indexes, so splitting the batch cannot help: split the image into "
           "overlapping tiles (each with the kernel's reach as halo) and convolve each, or convolve it on the cpu");
  const int64_t step = INT_MAX / per_sample;
  for (int64_t n0 = 0; n0 < g.N; n0 += step) {
    ConvGeom part = g;
    part.N = std::min(step, g.N - n0);
    f(part, n0, part.N);
  }
}

// Samples [n0, n0 + n) of a (N, ...) operand (undefined stays undefined).
Tensor samples(const Tensor& t, int64_t n0, int64_t n) {
  return t.defined() ? shallow_alias(t).narrow(0, n0, n) : Tensor();
}

int as_int(int64_t v, const ConvGeom& g) {
  GB_CHECK(v >= 0 && v <= INT_MAX, "conv2d on cuda: a dimension of input (", g.N, ", ", g.C, ", ", g.H, ", ", g.W,
           ") or weight (", g.O, ", ", g.Cg(), ", ", g.kH, ", ", g.kW, ") exceeds what cuDNN indexes (2^31 - 1)");
  return int(v);
}

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc(cudnnDataType_t t, const ConvGeom& g) {
    GB_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d));
    GB_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d, t, CUDNN_TENSOR_NCHW, as_int(g.O, g), as_int(g.Cg(), g),
                                              as_int(g.kH, g), as_int(g.kW, g)));
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};

// The math mode PyTorch asks for: tensor cores for float16/bfloat16, TF32 for float32 only when allowed.
cudnnMathType_t math_for(ScalarType t) {
  if (t == ScalarType::Half || t == ScalarType::BFloat16) return CUDNN_TENSOR_OP_MATH;
  if (t == ScalarType::Float && !backends::cudnn::allow_tf32.load(std::memory_order_relaxed)) return CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc(ScalarType t, const ConvGeom& g) {
    // accumulation: float64 for float64, float32 otherwise
    const cudnnDataType_t compute = t == ScalarType::Double ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    GB_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d));
    GB_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d, as_int(g.pH, g), as_int(g.pW, g), as_int(g.sH, g),
                                                   as_int(g.sW, g), as_int(g.dH, g), as_int(g.dW, g),
                                                   CUDNN_CROSS_CORRELATION, compute));
    GB_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d, as_int(g.groups, g)));
    GB_CUDNN_CHECK(cudnnSetConvolutionMathType(d, math_for(t)));
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

// Everything one call describes to cuDNN.
struct Call {
  int device;
  ScalarType dtype;
  cudnnHandle_t h;
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  Call(const ConvGeom& g, const Tensor& t)
      : device(int(t.device().index())),
        dtype(t.scalar_type()),
        h(cudnn_handle(device, "conv2d")),
        x(data_type(dtype), g.N, g.C, g.H, g.W, "conv2d", "the input"),
        y(data_type(dtype), g.N, g.O, g.Ho, g.Wo, "conv2d", "the output"),
        w(data_type(dtype), g),
        conv(dtype, g) {}
  // alpha = 1 and beta = 0 or 1, in the type cuDNN reads them as (double for float64, float otherwise)
  const void* scalar(int v) const { return cudnn_scalar(dtype, v); }
};

// The algorithm chosen for one geometry and direction, cached for the process.
enum class Direction { forward, backward_data, backward_filter };
struct Choice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace = 0;
};
// device, dtype, direction, math, det, geometry followed by the three operands' alignments
using Key = std::tuple<int, int, int, int, bool, std::vector<int64_t> >;

std::mutex g_cache_mu;
std::map<Key, Choice> g_cache;
int64_t g_timed = 0;

// The largest power of two up to 16 dividing an operand's address (PyTorch's getAlignment in its ConvolutionParams):
// cuDNN may pick a kernel with vector loads for 16-byte aligned buffers, which must not be replayed on an offset view
// (storage offset 1, x.narrow(...)) whose data is only element-aligned, so the alignments are part of the key.
int64_t alignment_of(const void* p) {
  int64_t a = 16;
  while (a > 1 && reinterpret_cast<uintptr_t>(p) % uintptr_t(a) != 0) a /= 2;
  return a;
}

// The three buffers one direction reads and writes: forward x, w, y; backward-data w, gy, gx; backward-filter x, gy,
// gw.
struct Operands {
  const void* a;
  const void* b;
  const void* c;
};

Key key_of(const Call& c, Direction dir, const ConvGeom& g, Operands o) {
  return Key{c.device,
             int(c.dtype),
             int(dir),
             int(math_for(c.dtype)),
             backends::cudnn::deterministic.load(std::memory_order_relaxed),
             {g.N, g.C, g.H, g.W, g.O, g.kH, g.kW, g.sH, g.sW, g.pH, g.pW, g.dH, g.dW, g.groups, alignment_of(o.a),
              alignment_of(o.b), alignment_of(o.c)}};
}

const char* direction_name(Direction d) {
  return d == Direction::forward ? "forward" : d == Direction::backward_data ? "backward-data" : "backward-filter";
}

// The first usable candidate (cuDNN lists them best first): one that ran (or would run) and, when
// deterministic is on, is deterministic.
template <class Perf>
Choice pick(const std::vector<Perf>& perf, int count, Direction dir, const ConvGeom& g) {
  const bool det = backends::cudnn::deterministic.load(std::memory_order_relaxed);
  for (int i = 0; i < count; ++i) {
    const Perf& p = perf[size_t(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    if (det && p.determinism != CUDNN_DETERMINISTIC) continue;
    return Choice{int(p.algo), p.mathType, p.memory};
  }
  throw Error(str_cat("conv2d on cuda: cuDNN offers no ", det ? "deterministic " : "", direction_name(dir),
                      " algorithm for input (", g.N, ", ", g.C, ", ", g.H, ", ", g.W, "), weight (", g.O, ", ", g.Cg(),
                      ", ", g.kH, ", ", g.kW, "), stride (", g.sH, ", ", g.sW, "), padding (", g.pH, ", ", g.pW,
                      "), dilation (", g.dH, ", ", g.dW, "), groups ", g.groups,
                      det ? "; turn gb::backends::cudnn::deterministic off" : ""));
}

Tensor workspace(size_t bytes, const Tensor& like) {
  return bytes ? make_empty({int64_t(bytes)}, kUInt8, like.device()) : Tensor();
}

// What the caching allocator could hand out on like's (current) device without failing: the device's free memory
// plus the cached blocks no tensor holds.
size_t allocatable(const Tensor& like) {
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return SIZE_MAX;  // unknown: the allocation below decides
  }
  const memory::MemoryStats st = memory::memory_stats(like.device());
  return free + size_t(std::max<int64_t>(
                    0, st.reserved_bytes[memory::kAll].current - st.allocated_bytes[memory::kAll].current));
}

// The workspace benchmarking gives the candidates: the largest one a successful heuristic candidate asks for that
// the caching allocator can get now (PyTorch's getMaxWorkspaceSize skips the candidates asking for more than its
// allocator can give, rather than failing the search), trying the next smaller request after an out-of-memory
// (fragmentation). Candidates asking for more than the workspace found fail in FindEx and are not picked.
template <class Perf>
Tensor search_workspace(const std::vector<Perf>& perf, int count, const Tensor& like, size_t* bytes) {
  const size_t bound = allocatable(like);
  std::vector<size_t> sizes;
  for (int i = 0; i < count; ++i)
    if (perf[size_t(i)].status == CUDNN_STATUS_SUCCESS && perf[size_t(i)].memory > 0 &&
        perf[size_t(i)].memory <= bound)
      sizes.push_back(perf[size_t(i)].memory);
  std::sort(sizes.rbegin(), sizes.rend());
  for (size_t s : sizes) {
    try {
      Tensor ws = workspace(s, like);
      *bytes = s;
      return ws;
    } catch (const OutOfMemoryError&) {
      // too large for what is free: the candidates that need this much are skipped
    }
  }
  *bytes = 0;
  return Tensor();
}
void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// The cached choice for (call, direction), found on first use: `heuristics` fills cuDNN's ranked candidates,
// `time_all` (benchmark on) runs them all with the workspace it is given and returns them fastest first.
template <class Perf, class Heuristics, class TimeAll>
Choice choose(const Call& c, Direction dir, const ConvGeom& g, Operands o, const Tensor& like, Heuristics heuristics,
              TimeAll time_all) {
  const Key key = key_of(c, dir, g, o);
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) return it->second;
  }
  std::vector<Perf> perf(32);  // more than any direction's algorithm count (8 forward, 7 filter, 6 data)
  int count = 0;
  heuristics(int(perf.size()), &count, perf.data());
  Choice choice;
  const bool timed = backends::cudnn::benchmark.load(std::memory_order_relaxed);
  if (timed) {
    int timed_count = 0;
    size_t bytes = 0;
    Tensor ws = search_workspace(perf, count, like, &bytes);
    time_all(ptr(ws), bytes, int(perf.size()), &timed_count, perf.data());
    choice = pick(perf, timed_count, dir, g);
  } else {
    choice = pick(perf, count, dir, g);
  }
  std::lock_guard<std::mutex> lock(g_cache_mu);
  auto [it, inserted] = g_cache.emplace(key, choice);
  if (inserted && timed) ++g_timed;
  return it->second;
}

// One call within 32-bit indexing (the entries below split the batch into such calls).
void forward_32bit(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  Call c(g, x);
  const Choice ch = choose<cudnnConvolutionFwdAlgoPerf_t>(
      c, Direction::forward, g, {x.data_ptr(), w.data_ptr(), y.data_ptr()}, x,
      [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* p) {
        GB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(c.h, c.x.d, c.w.d, c.conv.d, c.y.d, n, got, p));
      },
      [&](void* ws, size_t bytes, int n, int* got, cudnnConvolutionFwdAlgoPerf_t* p) {
        GB_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(c.h, c.x.d, x.data_ptr(), c.w.d, w.data_ptr(), c.conv.d,
                                                              c.y.d, y.data_ptr(), n, got, p, ws, bytes));
      });
  GB_CUDNN_CHECK(cudnnSetConvolutionMathType(c.conv.d, ch.math));
  OpScope scope("cudnn_convolution_forward");
  Tensor ws = workspace(ch.workspace, x);
  GB_CUDNN_CHECK(cudnnConvolutionForward(c.h, c.scalar(1), c.x.d, x.data_ptr(), c.w.d, w.data_ptr(), c.conv.d,
                                         cudnnConvolutionFwdAlgo_t(ch.algo), ptr(ws), ch.workspace, c.scalar(0), c.y.d,
                                         y.data_ptr()));
  if (b.defined()) {
    TensorDesc bias(data_type(c.dtype), 1, g.O, 1, 1, "conv2d", "the bias");
    GB_CUDNN_CHECK(cudnnAddTensor(c.h, c.scalar(1), bias.d, b.data_ptr(), c.scalar(1), c.y.d, y.data_ptr()));
  }
}

// One call within 32-bit indexing; accumulate_gw adds this part's weight gradient to gw (beta = 1) instead of
// writing it (the batch's later parts).
void backward_32bit(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& gy, const Tensor& gx,
                    const Tensor& gw, bool accumulate_gw) {
  Call c(g, gy);
  if (gx.defined()) {
    const Choice ch = choose<cudnnConvolutionBwdDataAlgoPerf_t>(
        c, Direction::backward_data, g, {w.data_ptr(), gy.data_ptr(), gx.data_ptr()}, gy,
        [&](int n, int* got, cudnnConvolutionBwdDataAlgoPerf_t* p) {
          GB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(c.h, c.w.d, c.y.d, c.conv.d, c.x.d, n, got, p));
        },
        [&](void* ws, size_t bytes, int n, int* got, cudnnConvolutionBwdDataAlgoPerf_t* p) {
          GB_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(c.h, c.w.d, w.data_ptr(), c.y.d, gy.data_ptr(),
                                                                     c.conv.d, c.x.d, gx.data_ptr(), n, got, p, ws,
                                                                     bytes));
        });
    GB_CUDNN_CHECK(cudnnSetConvolutionMathType(c.conv.d, ch.math));
    OpScope scope("cudnn_convolution_backward_data");
    Tensor ws = workspace(ch.workspace, gy);
    GB_CUDNN_CHECK(cudnnConvolutionBackwardData(c.h, c.scalar(1), c.w.d, w.data_ptr(), c.y.d, gy.data_ptr(), c.conv.d,
                                                cudnnConvolutionBwdDataAlgo_t(ch.algo), ptr(ws), ch.workspace,
                                                c.scalar(0), c.x.d, gx.data_ptr()));
  }
  if (gw.defined()) {
    GB_CUDNN_CHECK(cudnnSetConvolutionMathType(c.conv.d, math_for(c.dtype)));  // the heuristics' own mode
    const Choice ch = choose<cudnnConvolutionBwdFilterAlgoPerf_t>(
        c, Direction::backward_filter, g, {x.data_ptr(), gy.data_ptr(), gw.data_ptr()}, gy,
        [&](int n, int* got, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
          GB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(c.h, c.x.d, c.y.d, c.conv.d, c.w.d, n, got, p));
        },
        [&](void* ws, size_t bytes, int n, int* got, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
          // the timed runs write their results: into a scratch copy when gw holds the earlier parts' sums
          Tensor into = accumulate_gw ? make_empty_like(gw) : gw;
          GB_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(c.h, c.x.d, x.data_ptr(), c.y.d, gy.data_ptr(),
                                                                       c.conv.d, c.w.d, into.data_ptr(), n, got, p,
                                                                       ws, bytes));
        });
    GB_CUDNN_CHECK(cudnnSetConvolutionMathType(c.conv.d, ch.math));
    OpScope scope("cudnn_convolution_backward_filter");
    Tensor ws = workspace(ch.workspace, gy);
    GB_CUDNN_CHECK(cudnnConvolutionBackwardFilter(c.h, c.scalar(1), c.x.d, x.data_ptr(), c.y.d, gy.data_ptr(), c.conv.d,
                                                  cudnnConvolutionBwdFilterAlgo_t(ch.algo), ptr(ws), ch.workspace,
                                                  c.scalar(accumulate_gw ? 1 : 0), c.w.d, gw.data_ptr()));
  }
}

}  // namespace

void cudnn_conv_forward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  if (y.numel() == 0) return;
  cuda_kernels::DeviceGuard guard(int(x.device().index()));
  split_batch(g, [&](const ConvGeom& part, int64_t n0, int64_t n) {
    forward_32bit(part, samples(x, n0, n), w, b, samples(y, n0, n));
  });
}

void cudnn_conv_backward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& gy, const Tensor& gx,
                         const Tensor& gw) {
  const Tensor& any = gx.defined() ? gx : gw;
  if (!any.defined()) return;
  if (gy.numel() == 0) {  // nothing flowed back: zero gradients (cuDNN refuses empty tensors)
    if (gx.defined()) gx.zero_();
    if (gw.defined()) gw.zero_();
    return;
  }
  cuda_kernels::DeviceGuard guard(int(gy.device().index()));
  split_batch(g, [&](const ConvGeom& part, int64_t n0, int64_t n) {
    backward_32bit(part, samples(x, n0, n), w, samples(gy, n0, n), samples(gx, n0, n), gw, n0 > 0);
  });
}

CudnnCacheStats cudnn_cache_stats() {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  return {int64_t(g_cache.size()), g_timed};
}

#endif

}  // namespace detail
}  // namespace gb
