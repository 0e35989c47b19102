// glassbox/core/scalar.h — a Python-like number (bool, integer or floating) passed to ops: x.add(2), x.clamp(0.5).
#pragma once

#include <cstdint>
#include <type_traits>

#include "glassbox/core/dtype.h"

namespace gb {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(int64_t(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Double), d_(double(v)) {}  // NOLINT
  Scalar(Half v) : kind_(Kind::Double), d_(float(v)) {}  // NOLINT
  Scalar(BFloat16 v) : kind_(Kind::Double), d_(float(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Double; }
  bool is_integral(bool include_bool = false) const {
    return kind_ == Kind::Int || (include_bool && kind_ == Kind::Bool);
  }
  bool is_boolean() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Double ? d_ : double(i_); }
  int64_t to_long() const { return kind_ == Kind::Double ? int64_t(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Double ? d_ != 0 : i_ != 0; }
  // libtorch's spellings (c10::Scalar): x.item().toDouble(), s.isFloatingPoint(), ...
  double toDouble() const { return to_double(); }
  float toFloat() const { return float(to_double()); }
  int64_t toLong() const { return to_long(); }
  int toInt() const { return int(to_long()); }
  int16_t toShort() const { return int16_t(to_long()); }
  int8_t toChar() const { return int8_t(to_long()); }
  uint8_t toByte() const { return uint8_t(to_long()); }
  bool toBool() const { return to_bool(); }
  bool isFloatingPoint() const { return is_floating_point(); }
  bool isIntegral(bool include_bool) const { return is_integral(include_bool); }
  bool isBoolean() const { return is_boolean(); }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return T(to_long());
    else return T(to_double());
  }
  // The dtype a tensor made from this number would have: kBool, kInt64 or the default float (kFloat).
  ScalarType type() const { return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kInt64 : kFloat; }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace gb
