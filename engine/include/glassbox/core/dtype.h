// glassbox/core/dtype.h — element types (ScalarType), their names, sizes and promotion rules.
//
// Mirrors c10::ScalarType: gb::kFloat32 == gb::kFloat, gb::kInt64 == gb::kLong, ... Promotion follows PyTorch's
// categories (bool < integral < floating); see result_type() in ops/ for the tensor-vs-scalar tiers.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "glassbox/core/half.h"

namespace gb {

// Byte, Char, Short, Int and Long are c10's names for UInt8, Int8, Int16, Int32 and Int64 (ScalarType::Long in
// ported code), the same values. The numbers are stored in traces (params.dtype): append only.
enum class ScalarType : int8_t {
  Bool, Int32, Int64, Half, BFloat16, Float, Double, UInt8, Int8, Int16,
  Byte = UInt8, Char = Int8, Short = Int16, Int = Int32, Long = Int64
};
using Dtype = ScalarType;

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kUInt8 = ScalarType::UInt8;
constexpr ScalarType kByte = ScalarType::UInt8;
constexpr ScalarType kInt8 = ScalarType::Int8;
constexpr ScalarType kChar = ScalarType::Int8;
constexpr ScalarType kInt16 = ScalarType::Int16;
constexpr ScalarType kShort = ScalarType::Int16;
constexpr ScalarType kInt32 = ScalarType::Int32;
constexpr ScalarType kInt = ScalarType::Int32;
constexpr ScalarType kInt64 = ScalarType::Int64;
constexpr ScalarType kLong = ScalarType::Int64;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat64 = ScalarType::Double;
constexpr ScalarType kDouble = ScalarType::Double;

// libtorch's Rust-style short names.
constexpr ScalarType kU8 = kUInt8;
constexpr ScalarType kI8 = kInt8;
constexpr ScalarType kI16 = kInt16;
constexpr ScalarType kI32 = kInt32;
constexpr ScalarType kI64 = kInt64;
constexpr ScalarType kF16 = kFloat16;
constexpr ScalarType kF32 = kFloat32;
constexpr ScalarType kF64 = kFloat64;

constexpr int kNumScalarTypes = 10;

inline constexpr int64_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::UInt8: return 1;
    case ScalarType::Int8: return 1;
    case ScalarType::Int16: return 2;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Half: return 2;
    case ScalarType::BFloat16: return 2;
    case ScalarType::Float: return 4;
    case ScalarType::Double: return 8;
  }
  return 0;
}

inline constexpr bool is_floating_point(ScalarType t) {
  return t == kHalf || t == kBFloat16 || t == kFloat || t == kDouble;
}
inline constexpr bool is_integral(ScalarType t, bool include_bool = false) {
  return t == kUInt8 || t == kInt8 || t == kInt16 || t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}

// "Float", "Double", ... (c10's toString).
const char* to_string(ScalarType t);
// Prints to_string(t), as libtorch's operator<< for a ScalarType.
std::ostream& operator<<(std::ostream& os, ScalarType t);
// "float32", "float64", ... (the Python names, used when printing tensors).
const char* python_name(ScalarType t);
// "FloatTensor", "DoubleTensor", ... (used in autograd error messages, like PyTorch's).
const char* tensor_type_name(ScalarType t);

// The promoted type of two dtypes of the same tier (PyTorch's promoteTypes).
ScalarType promote_types(ScalarType a, ScalarType b);

// The C++ type of each ScalarType, and back.
template <ScalarType S> struct ctype_of;
template <> struct ctype_of<kBool> { using type = bool; };
template <> struct ctype_of<kUInt8> { using type = uint8_t; };
template <> struct ctype_of<kInt8> { using type = int8_t; };
template <> struct ctype_of<kInt16> { using type = int16_t; };
template <> struct ctype_of<kInt32> { using type = int32_t; };
template <> struct ctype_of<kInt64> { using type = int64_t; };
template <> struct ctype_of<kHalf> { using type = Half; };
template <> struct ctype_of<kBFloat16> { using type = BFloat16; };
template <> struct ctype_of<kFloat> { using type = float; };
template <> struct ctype_of<kDouble> { using type = double; };

template <typename T> struct scalar_type_of;
template <> struct scalar_type_of<bool> { static constexpr ScalarType value = kBool; };
template <> struct scalar_type_of<uint8_t> { static constexpr ScalarType value = kUInt8; };
template <> struct scalar_type_of<int8_t> { static constexpr ScalarType value = kInt8; };
template <> struct scalar_type_of<int16_t> { static constexpr ScalarType value = kInt16; };
template <> struct scalar_type_of<int32_t> { static constexpr ScalarType value = kInt32; };
template <> struct scalar_type_of<int64_t> { static constexpr ScalarType value = kInt64; };
template <> struct scalar_type_of<Half> { static constexpr ScalarType value = kHalf; };
template <> struct scalar_type_of<BFloat16> { static constexpr ScalarType value = kBFloat16; };
template <> struct scalar_type_of<float> { static constexpr ScalarType value = kFloat; };
template <> struct scalar_type_of<double> { static constexpr ScalarType value = kDouble; };

// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise.
template <typename T> struct opmath { using type = T; };
template <> struct opmath<Half> { using type = float; };
template <> struct opmath<BFloat16> { using type = float; };
template <typename T> using opmath_t = typename opmath<T>::type;

}  // namespace gb
