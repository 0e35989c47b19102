// glassbox/autograd/saved_tensor_hooks.h — hooks on what autograd saves for backward
// (torch.autograd.graph.saved_tensors_hooks).
//
// While a SavedTensorHooks guard lives, every tensor an op saves for backward on this thread is handed to `pack`,
// and the SavedVariable keeps only what pack returns (std::any): the tensor itself is not held unless pack holds
// it. When backward needs the tensor, `unpack` turns the packed value back into one (it must return a defined
// tensor). Guards nest; the innermost pair is used. The SavedVariable keeps its own copy of the pair, so hooks may
// run long after the guard is gone.
//
//   gb::autograd::SavedTensorHooks hooks(
//       [](const gb::Tensor& t) -> std::any { return t.to(gb::kBFloat16); },   // keep a compressed copy
//       [](const std::any& p) { return std::any_cast<gb::Tensor>(p).to(gb::kFloat); });
//
// pack receives the tensor without its history when the op saves one of its own outputs (no reference cycle
// through its grad_fn); unpack's result is re-attached to the node as in the unhooked path. The in-place check
// still works while the original storage is alive (its version counter is compared); once the storage is freed
// nobody can have modified it. A hooked save is not tagged as an activation in the memory categories: what the
// hook keeps is its own.
#pragma once

#include <any>
#include <functional>
#include <memory>

#include "glassbox/core/tensor.h"

namespace gb::autograd {

struct SavedTensorHookPair {
  std::function<std::any(const Tensor&)> pack;
  std::function<Tensor(const std::any&)> unpack;
};

class SavedTensorHooks {
 public:
  SavedTensorHooks(std::function<std::any(const Tensor&)> pack, std::function<Tensor(const std::any&)> unpack);
  ~SavedTensorHooks();
  SavedTensorHooks(const SavedTensorHooks&) = delete;
  SavedTensorHooks& operator=(const SavedTensorHooks&) = delete;
};

// The innermost hooks on this thread (null when none).
std::shared_ptr<const SavedTensorHookPair> current_saved_tensor_hooks();

}  // namespace gb::autograd
