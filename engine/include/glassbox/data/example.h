// glassbox/data/example.h — one (data, target) pair, libtorch's torch::data::Example; TensorExample has no target.
//
// Datasets return Examples; collate (collate.h) or transforms::Stack<> (batch_transform.h) turns a vector of them
// into one Example of stacked tensors:
//   Example<> of data (C,H,W) and target () → a batch Example of data (N,C,H,W) and target (N).
#pragma once

#include <utility>

#include "glassbox/core/tensor.h"

namespace gb::data {

template <class Data = Tensor, class Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Data data;
  Target target;
};

namespace example {
using NoTarget = void;
}

// An example with data only (libtorch's Example<Data, NoTarget>): made from, and usable as, its data.
template <class Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;
  Example() = default;
  Example(Data d) : data(std::move(d)) {}  // NOLINT: a tensor is an example
  operator Data&() { return data; }
  operator const Data&() const { return data; }
  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace gb::data
