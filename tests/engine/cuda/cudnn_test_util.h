// tests/engine/cuda/cudnn_test_util.h — the GPU tier's cuDNN tests in a build without cuDNN (GLASSBOX_HAS_CUDNN off):
// each case says why it does not run and returns, instead of failing on the "no cuDNN" error the ops raise then
// (conv_cudnn_gpu_test.cpp checks that error itself).
#pragma once

#include "cuda/conv_cudnn.h"
#include "support/check.h"

namespace gbtest {

// true (after one line saying why) when this build has no cuDNN: the calling case returns.
inline bool skip_without_cudnn() {
  if (gb::detail::cudnn_built()) return false;
  MESSAGE("skipped: this build has no cuDNN (CMake's GLASSBOX_HAS_CUDNN is off: cudnn.h and libcudnn.so were not "
          "found next to the CUDA toolkit, or GLASSBOX_CUDNN=OFF), so conv2d and batch_norm on cuda raise instead");
  return true;
}

}  // namespace gbtest
