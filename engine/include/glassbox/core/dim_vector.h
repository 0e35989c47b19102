// glassbox/core/dim_vector.h — DimVector: a tensor's sizes or strides (c10's DimVector, a SmallVector<int64_t, 5>).
//
// Up to five values live inside the object, more on the heap: making a tensor or a view of up to five dimensions
// (nearly all of them) allocates nothing for its shape, where a std::vector would allocate twice (sizes and strides)
// per tensor, on the per-op path of every op. Converts to IntArrayRef (it is contiguous) and from a std::vector,
// an IntArrayRef or a braced list. Like std::vector, growing past the capacity moves the values: do not keep a
// pointer into one across a push_back or resize.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

#include "glassbox/core/array_ref.h"

namespace gb {

class DimVector {
 public:
  static constexpr size_t kInline = 5;

  DimVector() noexcept = default;
  DimVector(IntArrayRef values) { assign(values.begin(), values.end()); }  // NOLINT: implicit, as a vector's
  DimVector(const std::vector<int64_t>& values) { assign(values.begin(), values.end()); }  // NOLINT
  DimVector(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  DimVector(size_t n, int64_t value) { resize(n, value); }
  DimVector(const DimVector& o) { assign(o.begin(), o.end()); }
  DimVector(DimVector&& o) noexcept { take(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~DimVector() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  int64_t* begin() { return data_; }
  int64_t* end() { return data_ + size_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t& front() { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& front() const { return data_[0]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  // Replaces the values with [first, last) (which may point into this DimVector).
  template <typename It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    if (n > capacity_) {
      int64_t* fresh = new int64_t[n];
      std::copy(first, last, fresh);
      release();
      data_ = fresh;
      capacity_ = n;
    } else {
      std::copy(first, last, data_);
    }
    size_ = n;
  }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    int64_t* fresh = new int64_t[n];
    std::copy(data_, data_ + size_, fresh);
    const size_t keep = size_;
    release();
    data_ = fresh;
    capacity_ = n;
    size_ = keep;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data_ + size_, data_ + n, value);
    size_ = n;
  }
  void push_back(int64_t value) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = value;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  // Inserts `value` before position `pos` (0 <= pos <= size()).
  void insert_at(size_t pos, int64_t value) {
    push_back(0);
    std::copy_backward(data_ + pos, data_ + size_ - 1, data_ + size_);
    data_[pos] = value;
  }
  // Removes the value at position `pos`.
  void erase_at(size_t pos) {
    std::copy(data_ + pos + 1, data_ + size_, data_ + pos);
    --size_;
  }

  operator IntArrayRef() const { return IntArrayRef(data_, size_); }  // NOLINT: implicit, as a vector's
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  friend bool operator==(const DimVector& a, const DimVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const DimVector& a, const DimVector& b) { return !(a == b); }

 private:
  bool on_heap() const { return data_ != inline_; }
  void release() {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    capacity_ = kInline;
    size_ = 0;
  }
  // Takes o's values (its heap block, or a copy of its inline ones), leaving o empty. *this must hold nothing.
  void take(DimVector& o) {
    if (o.on_heap()) {
      data_ = o.data_;
      capacity_ = o.capacity_;
    } else {
      std::copy(o.data_, o.data_ + o.size_, inline_);
    }
    size_ = o.size_;
    o.data_ = o.inline_;
    o.capacity_ = kInline;
    o.size_ = 0;
  }

  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  int64_t inline_[kInline];
};

}  // namespace gb
