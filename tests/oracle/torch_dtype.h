// tests/oracle/torch_dtype.h — the libtorch dtype of each glassbox dtype, for the oracle tests.
#pragma once

#include <glassbox/glassbox.h>
#include <torch/torch.h>

namespace oracle {

inline torch::Dtype torch_dtype(gb::ScalarType t) {
  switch (t) {
    case gb::kFloat: return torch::kFloat;
    case gb::kDouble: return torch::kDouble;
    case gb::kHalf: return torch::kHalf;
    case gb::kBFloat16: return torch::kBFloat16;
    case gb::kInt64: return torch::kLong;
    case gb::kInt32: return torch::kInt;
    case gb::kInt16: return torch::kShort;
    case gb::kInt8: return torch::kChar;
    case gb::kUInt8: return torch::kByte;
    case gb::kBool: return torch::kBool;
  }
  return torch::kFloat;
}

}  // namespace oracle
