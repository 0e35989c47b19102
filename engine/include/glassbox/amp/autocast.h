// glassbox/amp/autocast.h — automatic mixed precision regions (torch.autocast): inside one, each op listed below
// runs in the dtype its policy picks, casting its floating inputs first.
//
//   {
//     gb::autocast ac(gb::kCPU);                  // bfloat16 on CPU (float16 on CUDA) unless a dtype is given
//     gb::Tensor y = gb::linear(x, w, b);         // bf16: x, w and b are cast (w's cast is cached, see below)
//     gb::Tensor loss = gb::cross_entropy(y, t);  // fp32: y is cast back up
//   }                                             // outermost region left: the weight cache is cleared
//   loss.backward();                              // w.grad() arrives as fp32, w's own dtype
//
// Policies (PyTorch's autocast_mode.cpp lists, restricted to the ops glassbox has; one table for both devices):
//   lower precision  mm, bmm, matmul, addmm, linear, conv2d: every eligible input is cast to the region's dtype.
//   fp32             softmax, log_softmax (without an explicit dtype), sum (without a dtype), prod, norm,
//                    logsumexp, exp, log, log1p, reciprocal, rsqrt, pow, softplus, layer_norm, group_norm,
//                    cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
//                    binary_cross_entropy_with_logits, binary_cross_entropy: eligible inputs are cast to float32
//                    (PyTorch's CUDA list; its CPU list leaves softmax, layer_norm and the pointwise ops in the input
//                    dtype, glassbox keeps them in fp32 on CPU too; PyTorch's CUDA autocast refuses
//                    binary_cross_entropy as unsafe, glassbox runs it in fp32).
//   promote          cat, stack, addcmul, addcdiv, scatter_add, dot: every eligible input goes to the widest
//                    floating dtype among them (float32 when any is float32, else the region's dtype).
//   everything else  runs in its inputs' dtypes (batch_norm included, as in PyTorch).
// Eligible = defined, floating, not float64, on a device whose autocast is enabled. Integer and double tensors
// are never cast. Casts are ordinary differentiable ops (ToCopyBackward0): gradients come back in each input's
// own dtype. While an autocast op runs, autocast is switched off on this thread (PyTorch's
// ExcludeDispatchKeyGuard), so the ops it calls internally cast nothing again.
//
// Weight cache (cache_enabled, the default): within a region, the lower-precision cast of a float32 leaf that
// requires grad and is not a view (a parameter) is made once, under grad mode, and reused by every later op; it is
// dropped when the outermost autocast region on this thread exits (PyTorch's clear_cache).
//
// State is per thread. Nesting restores the outer region's settings on exit; enabled=false opens a region that
// turns autocast off for that device. When no region is enabled an op pays one thread-local flag test.
#pragma once

#include <optional>

#include "glassbox/core/device.h"
#include "glassbox/core/dtype.h"

namespace gb {

class autocast {
 public:
  // dtype defaults to bfloat16 on CPU and float16 on CUDA; CPU takes bfloat16 or float16, CUDA float16 or
  // bfloat16. Other device types (meta) are an error.
  explicit autocast(DeviceType device_type, std::optional<ScalarType> dtype = std::nullopt, bool enabled = true,
                    bool cache_enabled = true);
  ~autocast();
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  DeviceType device_type_;
  bool prev_enabled_;
  ScalarType prev_dtype_;
  bool prev_cache_enabled_;
};

namespace amp {

bool is_autocast_enabled(DeviceType device_type);       // false inside an autocast op (its inputs are cast)
ScalarType get_autocast_dtype(DeviceType device_type);  // the dtype lower-precision ops use on this device
bool is_autocast_cache_enabled();
void clear_autocast_cache();  // drop this thread's cached weight casts now
// How many weight casts this thread's cache holds (for tests and memory accounting).
size_t autocast_cache_size();

}  // namespace amp
}  // namespace gb
