// glassbox/nn/options.h — GB_ARG (libtorch's TORCH_ARG) and ExpandingArray, the building blocks of option structs.
//
//   struct Conv2dFuncOptions { GB_ARG(ExpandingArray<2>, stride) = 1; };
//   F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding({1, 0}));
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "glassbox/core/array_ref.h"
#include "glassbox/core/error.h"

// Declares a chainable setter `name(value)`, a getter `name()`, and the member `name_` (default after `=`).
#define GB_ARG(T, name)                                           \
 public:                                                          \
  inline auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                                   \
    return *this;                                                 \
  }                                                               \
  inline const T& name() const noexcept { return this->name##_; } \
                                                                  \
 private:                                                         \
  T name##_

namespace gb {

// N integers given as one (repeated) or as a list of exactly N: kernel_size(3) == kernel_size({3, 3}).
template <size_t N>
class ExpandingArray {
 public:
  ExpandingArray(int64_t v) { values_.fill(v); }  // NOLINT
  ExpandingArray(std::initializer_list<int64_t> l) : ExpandingArray(IntArrayRef(l)) {}  // NOLINT
  ExpandingArray(const std::vector<int64_t>& v) : ExpandingArray(IntArrayRef(v)) {}  // NOLINT
  ExpandingArray(IntArrayRef l) {  // NOLINT
    GB_CHECK(l.size() == N, "expected ", N, " values (or one, repeated), got ", l.size(), ": ", l);
    for (size_t i = 0; i < N; ++i) values_[i] = l[i];
  }
  IntArrayRef ref() const { return IntArrayRef(values_.data(), N); }
  operator IntArrayRef() const { return ref(); }  // NOLINT
  int64_t operator[](size_t i) const { return values_[i]; }
  int64_t* data() { return values_.data(); }
  size_t size() const { return N; }

 private:
  std::array<int64_t, N> values_{};
};

}  // namespace gb
