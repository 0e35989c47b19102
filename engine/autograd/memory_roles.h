// engine/autograd/memory_roles.h — autograd tells the allocator what a tensor's memory is for (internal).
//
// Categories (glassbox/memory/category.h) follow a tensor's role, set where autograd learns it:
//   parameter       a leaf whose requires_grad is set (Tensor::requires_grad_, factories with requires_grad())
//   gradient        what AccumulateGrad stores in .grad (and a retained non-leaf's .grad)
//   activation      a tensor saved for backward (SavedVariable) while any node holds it; it goes back to
//                   temporary when the last holder releases it (after its node ran, or when the graph is freed)
//   autograd_detail what the backward engine allocates (gradient buffers, the backward formulas' temporaries)
//   temporary       everything else: the thread's default category, so every op output starts here
// Only blocks that are temporary, unknown or autograd_detail become activations: a saved parameter stays a
// parameter, a saved input stays an input. Storages that do not come from a caching allocator are left alone.
#pragma once

#include "glassbox/core/tensor.h"
#include "glassbox/memory/category.h"

namespace gb::detail {

// Re-tags t's whole storage block (any view of it) as c. No-op for an empty or foreign storage.
void tag_storage(const Tensor& t, memory::Category c);

// Held by a SavedVariable while it keeps its tensor: counts holders on the storage (StorageImpl::saved_marks),
// tags the block activation on the first and back to temporary when the last one goes. Move-only.
class ActivationMark {
 public:
  ActivationMark() = default;
  explicit ActivationMark(const Tensor& t);
  ActivationMark(ActivationMark&& o) noexcept : storage_(o.storage_) { o.storage_ = nullptr; }
  ActivationMark& operator=(ActivationMark&& o) noexcept;
  ActivationMark(const ActivationMark&) = delete;
  ActivationMark& operator=(const ActivationMark&) = delete;
  ~ActivationMark() { reset(); }
  void reset();

 private:
  StorageImpl* storage_ = nullptr;  // kept alive by the SavedVariable's tensor, which outlives the mark
};

}  // namespace gb::detail
