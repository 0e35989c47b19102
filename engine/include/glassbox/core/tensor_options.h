// glassbox/core/tensor_options.h — how a new tensor is made: dtype, device, requires_grad (c10::TensorOptions).
//
//   gb::zeros({2, 3}, gb::TensorOptions().dtype(gb::kFloat64).requires_grad(true));
//   gb::randn({4}, gb::dtype(gb::kHalf));    gb::ones({2}, gb::requires_grad());
#pragma once

#include "glassbox/core/device.h"
#include "glassbox/core/dtype.h"

namespace gb {

// libtorch's memory formats. glassbox tensors are strided row-major: Contiguous and Preserve are what .to() and
// .contiguous() always do; the channels-last formats are refused with an error naming the op (drop the argument).
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);  // floating types only

struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t), has_dtype_(true) {}  // NOLINT
  TensorOptions(Device d) : device_(d) {}  // NOLINT
  TensorOptions(DeviceType d) : device_(d) {}  // NOLINT

  TensorOptions dtype(ScalarType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    o.has_dtype_ = true;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions device(DeviceType type, int index) const { return device(Device(type, index)); }  // (kCUDA, 0)
  TensorOptions device_index(int index) const { return device(Device(DeviceType::CUDA, index)); }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }

  ScalarType dtype() const { return has_dtype_ ? dtype_ : get_default_dtype(); }
  bool has_dtype() const { return has_dtype_; }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }

 private:
  ScalarType dtype_ = kFloat;
  bool has_dtype_ = false;
  Device device_{DeviceType::CPU};
  bool requires_grad_ = false;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace gb
