// engine/autograd/memory_roles.cpp — re-tagging blocks as autograd learns what they are for (memory_roles.h).
#include "autograd/memory_roles.h"

#include "glassbox/memory/memory.h"

namespace gb::detail {
namespace {

bool becomes_activation(memory::Category c) {
  return c == memory::Category::temporary || c == memory::Category::unknown ||
         c == memory::Category::autograd_detail;
}

}  // namespace

void tag_storage(const Tensor& t, memory::Category c) {
  if (!t.defined() || !t.storage() || !t.storage()->data()) return;
  memory::set_category(t.device(), t.storage()->data(), c);
}

ActivationMark::ActivationMark(const Tensor& t) {
  if (!t.defined() || !t.storage() || !t.storage()->data()) return;
  storage_ = t.storage().get();
  if (storage_->saved_marks++ > 0) return;
  auto& alloc = memory::caching_allocator(storage_->device);
  auto c = alloc.category_of(storage_->data());
  if (c && becomes_activation(*c)) {
    alloc.set_category(storage_->data(), memory::Category::activation);
    storage_->saved_retagged = true;
  }
}

ActivationMark& ActivationMark::operator=(ActivationMark&& o) noexcept {
  if (this != &o) {
    reset();
    storage_ = o.storage_;
    o.storage_ = nullptr;
  }
  return *this;
}

void ActivationMark::reset() {
  if (!storage_) return;
  StorageImpl* s = storage_;
  storage_ = nullptr;
  if (--s->saved_marks > 0 || !s->saved_retagged) return;
  s->saved_retagged = false;
  memory::caching_allocator(s->device).set_category(s->data(), memory::Category::temporary);
}

}  // namespace gb::detail
