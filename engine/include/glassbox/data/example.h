// glassbox/data/example.h — one (data, target) pair, libtorch's torch::data::Example.
//
// Datasets return Examples; collate (collate.h) turns a vector of them into one Example of stacked tensors:
//   Example<> of data (C,H,W) and target () → a batch Example of data (N,C,H,W) and target (N).
#pragma once

#include "glassbox/core/tensor.h"

namespace gb::data {

template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Data data;
  Target target;
};

}  // namespace gb::data
