// glassbox/core/compat.h — libtorch's small vocabulary under gb::, so ported code keeps its spellings
// (docs/PORTING.md): c10::optional / nullopt / make_optional, c10::str, c10::irange,
// torch::autograd::tensor_list and variable_list. (c10::toString(dtype) is gb::to_string: tools/port.sh renames it;
// a gb::toString would hijack doctest's toString lookup for every ScalarType.)
// Nothing here is glassbox's own: each is the standard type or a few lines, with libtorch's meaning.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "glassbox/autograd/autograd.h"
#include "glassbox/core/tensor.h"

namespace gb {

template <class T>
using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
using std::nullopt_t;

// c10::str: every argument streamed into one string ("shape ", x.sizes(), " of ", n).
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream s;
  ((s << args), ...);
  return s.str();
}

// c10::irange(end) = [0, end), irange(begin, end) = [begin, end) (empty when end <= begin): the range-for of
// libtorch's loops, `for (const auto i : gb::irange(n))`.
template <class I>
class IntegerRange {
 public:
  static_assert(std::is_integral_v<I>, "irange takes integers");
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = I;
    using difference_type = std::ptrdiff_t;
    using pointer = const I*;
    using reference = I;
    explicit iterator(I v) : v_(v) {}
    I operator*() const { return v_; }
    iterator& operator++() {
      ++v_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++v_;
      return old;
    }
    bool operator==(const iterator& o) const { return v_ == o.v_; }
    bool operator!=(const iterator& o) const { return v_ != o.v_; }

   private:
    I v_;
  };
  IntegerRange(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  I begin_, end_;
};

template <class I>
IntegerRange<I> irange(I end) {
  return IntegerRange<I>(I(0), end);
}
template <class I1, class I2>
IntegerRange<std::common_type_t<I1, I2>> irange(I1 begin, I2 end) {
  using I = std::common_type_t<I1, I2>;
  return IntegerRange<I>(static_cast<I>(begin), static_cast<I>(end));
}

namespace autograd {
using tensor_list = std::vector<Tensor>;  // torch::autograd::tensor_list
using variable_list = gb::variable_list;  // torch::autograd::variable_list (the same type)
}  // namespace autograd

}  // namespace gb
