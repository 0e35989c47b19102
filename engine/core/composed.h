// engine/core/composed.h — internal: ops whose cuda path is a composition of other ops (each with its CUDA kernel)
// rather than a kernel of its own: masked_fill is a where, isnan a comparison, logsumexp a max and a sum. They take
// that path on the cpu too while a ComposedPathForTest lives on the thread: how the tests check, where no GPU is,
// that each composition computes what the op's cpu loop does.
#pragma once

#include "glassbox/core/tensor.h"

namespace gb::detail {

inline thread_local bool t_composed_for_test = false;

// True when the op computes through its composition: t is on cuda, or a test asks for it.
inline bool composed_path(const Tensor& t) { return t.is_cuda() || t_composed_for_test; }

struct ComposedPathForTest {
  bool prev = t_composed_for_test;
  ComposedPathForTest() { t_composed_for_test = true; }
  ~ComposedPathForTest() { t_composed_for_test = prev; }
  ComposedPathForTest(const ComposedPathForTest&) = delete;
  ComposedPathForTest& operator=(const ComposedPathForTest&) = delete;
};

}  // namespace gb::detail
