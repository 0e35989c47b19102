// engine/autograd/saved_tensor_hooks.cpp — the per-thread stack of saved-tensor hooks (saved_tensor_hooks.h);
// SavedVariable (node.cpp) consults its top.
#include "glassbox/autograd/saved_tensor_hooks.h"

#include <vector>

#include "glassbox/core/error.h"

namespace gb::autograd {
namespace {
thread_local std::vector<std::shared_ptr<const SavedTensorHookPair>> tls_hooks;
}

SavedTensorHooks::SavedTensorHooks(std::function<std::any(const Tensor&)> pack,
                                   std::function<Tensor(const std::any&)> unpack) {
  GB_CHECK(pack && unpack, "saved_tensors_hooks: both pack_hook and unpack_hook must be callables");
  tls_hooks.push_back(
      std::make_shared<const SavedTensorHookPair>(SavedTensorHookPair{std::move(pack), std::move(unpack)}));
}

SavedTensorHooks::~SavedTensorHooks() { tls_hooks.pop_back(); }

std::shared_ptr<const SavedTensorHookPair> current_saved_tensor_hooks() {
  return tls_hooks.empty() ? nullptr : tls_hooks.back();
}

}  // namespace gb::autograd
