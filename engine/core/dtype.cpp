// engine/core/dtype.cpp — dtype names and PyTorch's promotion lattice.
#include "glassbox/core/dtype.h"

#include <ostream>

#include "core/dispatch.h"
#include "glassbox/core/error.h"
#include "glassbox/core/tensor.h"
#include "glassbox/core/tensor_options.h"

namespace gb {

const char* to_string(ScalarType t) {
  switch (t) {
    case kBool: return "Bool";
    case kUInt8: return "Byte";
    case kInt8: return "Char";
    case kInt16: return "Short";
    case kInt32: return "Int";
    case kInt64: return "Long";
    case kHalf: return "Half";
    case kBFloat16: return "BFloat16";
    case kFloat: return "Float";
    case kDouble: return "Double";
  }
  return "Unknown";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << to_string(t); }

const char* python_name(ScalarType t) {
  switch (t) {
    case kBool: return "bool";
    case kUInt8: return "uint8";
    case kInt8: return "int8";
    case kInt16: return "int16";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kHalf: return "float16";
    case kBFloat16: return "bfloat16";
    case kFloat: return "float32";
    case kDouble: return "float64";
  }
  return "unknown";
}

const char* tensor_type_name(ScalarType t) {
  switch (t) {
    case kBool: return "BoolTensor";
    case kUInt8: return "ByteTensor";
    case kInt8: return "CharTensor";
    case kInt16: return "ShortTensor";
    case kInt32: return "IntTensor";
    case kInt64: return "LongTensor";
    case kHalf: return "HalfTensor";
    case kBFloat16: return "BFloat16Tensor";
    case kFloat: return "FloatTensor";
    case kDouble: return "DoubleTensor";
  }
  return "Tensor";
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  // PyTorch's lattice: bool < (uint8 | int8) < int16 < int32 < int64 < (float16 | bfloat16) < float32 < float64;
  // the two pairs of equals meet one step up (uint8 with int8 is int16, float16 with bfloat16 is float32).
  auto rank = [](ScalarType t) {
    switch (t) {
      case kBool: return 0;
      case kUInt8: return 1;
      case kInt8: return 1;
      case kInt16: return 2;
      case kInt32: return 3;
      case kInt64: return 4;
      case kHalf: return 5;
      case kBFloat16: return 5;
      case kFloat: return 6;
      case kDouble: return 7;
    }
    return 0;
  };
  if ((a == kHalf && b == kBFloat16) || (a == kBFloat16 && b == kHalf)) return kFloat;
  if ((a == kUInt8 && b == kInt8) || (a == kInt8 && b == kUInt8)) return kInt16;
  return rank(a) >= rank(b) ? a : b;
}

namespace {
ScalarType g_default_dtype = kFloat;
}
ScalarType get_default_dtype() { return g_default_dtype; }
void set_default_dtype(ScalarType t) {
  GB_CHECK_TYPE(is_floating_point(t), "set_default_dtype: only floating-point types are supported as the default type, got ",
                python_name(t));
  g_default_dtype = t;
}

namespace detail {
void throw_unsupported_dtype(const char* op, ScalarType t, const char* supported) {
  throw TypeError(str_cat(op, ": not implemented for dtype ", python_name(t), " (expects ", supported,
                          "); convert first, e.g. x.to(gb::kFloat)"));
}
void throw_data_ptr_mismatch(ScalarType want, ScalarType have) {
  throw TypeError(str_cat("data_ptr<", to_string(want), ">(): the tensor's dtype is ", python_name(have),
                          "; call data_ptr<T>() with the matching C++ type or convert with .to(...) first"));
}
}  // namespace detail

}  // namespace gb
