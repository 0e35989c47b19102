// glassbox/core/tensor_accessor.h — libtorch's TensorAccessor: x.accessor<float, 2>() reads and writes a CPU
// tensor's elements as a[i][j] through its sizes and strides, without a bounds check or a dispatch per element
// (what a hand-written loop over a tensor wants).
//
//   auto a = x.accessor<float, 2>();          // x: a defined (R, C) float32 CPU tensor, kept alive while `a` is used
//   for (int64_t i = 0; i < a.size(0); ++i)
//     for (int64_t j = 0; j < a.size(1); ++j) a[i][j] *= 2;
//
// Tensor::accessor checks the dtype (data_ptr<T>), the number of dims and the device; it is deleted on a temporary,
// since the accessor points into the tensor's sizes and strides.
#pragma once

#include <cstddef>
#include <cstdint>

#include "glassbox/core/array_ref.h"

namespace gb {

template <typename T, size_t N>
class TensorAccessorBase {
 public:
  TensorAccessorBase(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  IntArrayRef sizes() const { return IntArrayRef(sizes_, N); }
  IntArrayRef strides() const { return IntArrayRef(strides_, N); }
  int64_t size(int64_t i) const { return sizes_[i]; }
  int64_t stride(int64_t i) const { return strides_[i]; }
  T* data() { return data_; }
  const T* data() const { return data_; }

 protected:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

template <typename T, size_t N>
class TensorAccessor : public TensorAccessorBase<T, N> {
 public:
  using TensorAccessorBase<T, N>::TensorAccessorBase;
  TensorAccessor<T, N - 1> operator[](int64_t i) {
    return TensorAccessor<T, N - 1>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
  const TensorAccessor<T, N - 1> operator[](int64_t i) const {
    return TensorAccessor<T, N - 1>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
};

template <typename T>
class TensorAccessor<T, 1> : public TensorAccessorBase<T, 1> {
 public:
  using TensorAccessorBase<T, 1>::TensorAccessorBase;
  T& operator[](int64_t i) { return this->data_[this->strides_[0] * i]; }
  const T& operator[](int64_t i) const { return this->data_[this->strides_[0] * i]; }
};

}  // namespace gb
