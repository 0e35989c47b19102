// glassbox/core/mkldnn.h — torch.backends.mkldnn: whether conv2d's float kernels run on oneDNN (formerly MKL-DNN,
// the library PyTorch's CPU convolutions use), and the switch to turn it off.
//
// With oneDNN (a build that found it; `glassbox env` and a trace's meta `onednn` say), float32, float16 and
// bfloat16 conv2d and conv_transpose2d, forward and backward, run oneDNN's convolution primitives: its JIT kernels
// for this CPU's instruction set (GLASSBOX_CPU_CAPABILITY caps them too, read at the first convolution), on an OpenMP
// team of gb::get_num_threads() threads. float64 and every convolution while `enabled` is false run glassbox's own
// im2col + OpenBLAS GEMM. Both give the same result up to float rounding; the tests compare them.
#pragma once

#include <atomic>

namespace gb::backends::mkldnn {

// Whether this build has oneDNN.
bool is_available();

// torch.backends.mkldnn.enabled: on by default; false sends every convolution to im2col + GEMM.
inline std::atomic<bool> enabled{true};

}  // namespace gb::backends::mkldnn
