// engine/core/dispatch.h — runs a generic lambda with the C++ type of a ScalarType (internal).
//
//   dispatch_floating(t.scalar_type(), "exp", [&](auto tag) { using T = typename decltype(tag)::type; ... });
#pragma once

#include "glassbox/core/dtype.h"
#include "glassbox/core/error.h"

namespace gb::detail {

template <typename T>
struct type_tag {
  using type = T;
};

[[noreturn]] void throw_unsupported_dtype(const char* op, ScalarType t, const char* supported);

template <typename F>
decltype(auto) dispatch_floating(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case kFloat: return f(type_tag<float>{});
    case kDouble: return f(type_tag<double>{});
    case kHalf: return f(type_tag<Half>{});
    case kBFloat16: return f(type_tag<BFloat16>{});
    default: throw_unsupported_dtype(op, t, "float32, float64, float16 or bfloat16");
  }
}

template <typename F>
decltype(auto) dispatch_numeric(ScalarType t, const char* op, F&& f) {  // floating and integral, not bool
  switch (t) {
    case kFloat: return f(type_tag<float>{});
    case kDouble: return f(type_tag<double>{});
    case kHalf: return f(type_tag<Half>{});
    case kBFloat16: return f(type_tag<BFloat16>{});
    case kInt64: return f(type_tag<int64_t>{});
    case kInt32: return f(type_tag<int32_t>{});
    case kInt16: return f(type_tag<int16_t>{});
    case kInt8: return f(type_tag<int8_t>{});
    case kUInt8: return f(type_tag<uint8_t>{});
    default: throw_unsupported_dtype(op, t, "a floating or integer dtype");
  }
}

template <typename F>
decltype(auto) dispatch_all(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case kFloat: return f(type_tag<float>{});
    case kDouble: return f(type_tag<double>{});
    case kHalf: return f(type_tag<Half>{});
    case kBFloat16: return f(type_tag<BFloat16>{});
    case kInt64: return f(type_tag<int64_t>{});
    case kInt32: return f(type_tag<int32_t>{});
    case kInt16: return f(type_tag<int16_t>{});
    case kInt8: return f(type_tag<int8_t>{});
    case kUInt8: return f(type_tag<uint8_t>{});
    case kBool: return f(type_tag<bool>{});
  }
  throw_unsupported_dtype(op, t, "any dtype");
}

template <typename F>
decltype(auto) dispatch_index(ScalarType t, const char* op, F&& f) {  // index tensors: int64 or int32
  switch (t) {
    case kInt64: return f(type_tag<int64_t>{});
    case kInt32: return f(type_tag<int32_t>{});
    default: throw_unsupported_dtype(op, t, "int64 or int32 (an index tensor)");
  }
}

}  // namespace gb::detail
