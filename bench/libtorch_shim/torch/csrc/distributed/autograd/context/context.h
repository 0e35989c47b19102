// bench/libtorch_shim/.../context.h — stands in for the PyTorch 1.13 header of this path, which Debian's
// libtorch-dev does not ship although c10d/reducer.hpp includes it (bench_distributed's libtorch DDP peer needs
// reducer.hpp). The Reducer only names these two types: a shared_ptr member (its layout does not depend on the
// class) and the callback type its static_assert compares with. Nothing here is defined or called.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};
using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
