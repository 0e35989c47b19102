// glassbox/core/cudnn.h — torch.backends.cudnn: conv2d and conv_transpose2d on cuda run cuDNN's convolutions, and
// these switches choose how.
//
// A build that found cuDNN 9 (cudnn.h and libcudnn.so next to the CUDA toolkit; `glassbox env` says which version
// loads) runs float32, float64, float16 and bfloat16 convolutions on cuda through cuDNN, forward and backward, on
// the current stream, with their workspaces from the caching allocator. Algorithms come from cuDNN's heuristics,
// or, with `benchmark` on, from timing every candidate on the first call of each geometry (dtype, shapes, stride,
// padding, dilation, groups, math mode); either choice is cached per geometry for the process's life.
#pragma once

#include <atomic>
#include <cstdint>

namespace gb::backends::cudnn {

// torch.backends.cudnn.is_available(): this build has cuDNN and the machine a CUDA device to run it on.
bool is_available();

// torch.backends.cudnn.version(): the version of the cuDNN library loaded (cudnnGetVersion, e.g. 91900 for 9.19.0),
// which may differ from the headers the build used; 0 in a build without cuDNN.
int64_t version();

// torch.backends.cudnn.benchmark: time the candidate algorithms of each new geometry and keep the fastest (the
// first call of a geometry takes longer; later ones run the winner). Off: cuDNN's heuristic choice.
inline std::atomic<bool> benchmark{false};

// torch.backends.cudnn.deterministic: only algorithms cuDNN declares deterministic (bit-identical results run to
// run; some backward algorithms accumulate with atomics otherwise).
inline std::atomic<bool> deterministic{false};

// torch.backends.cudnn.allow_tf32: float32 convolutions may use TF32 tensor cores. On by default, as in PyTorch
// (unlike torch.backends.cuda.matmul.allow_tf32, which is off).
inline std::atomic<bool> allow_tf32{true};

}  // namespace gb::backends::cudnn
