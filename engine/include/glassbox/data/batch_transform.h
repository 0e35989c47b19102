// glassbox/data/batch_transform.h — libtorch's dataset transforms (torch::data::transforms), applied with
// dataset.map(...) (batch_dataset.h):
//
//   BatchTransform<In, Out>   apply_batch(In) -> Out: a whole batch (a Collation makes one value of a vector)
//   Transform<In, Out>        apply(In) -> Out: one example; apply_batch applies it to each
//   BatchLambda, Lambda       the same from a std::function
//   Collate<B, Raw>           a Collation from a std::function; Stack<Example<>> and Stack<TensorExample> stack
//                             each field's tensors along a new dim 0 (a batch of (C,H,W) images -> (N,C,H,W))
//   TensorTransform<Target>   operator()(Tensor) -> Tensor on an example's data; TensorLambda from a function;
//                             Normalize<> is transforms.h's
//
//   auto ds = MyDataset().map(gb::data::transforms::Normalize<>(0.5, 0.25)).map(gb::data::transforms::Stack<>());
//
// A DataLoader runs the per-example transforms before the first batch transform in its fetch stage (on the worker
// that loads the example) and the batch transforms from the first one on in its collate stage. apply() is called
// concurrently from the loader's workers: keep it free of unsynchronized state (libtorch copies it per worker).
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/data/example.h"
#include "glassbox/ops/shape.h"

namespace gb::data::transforms {

template <class InputBatch, class OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

template <class Input, class Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual OutputType apply(InputType input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (auto& x : input_batch) out.push_back(apply(std::move(x)));
    return out;
  }
};

template <class Input, class Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

template <class Input, class Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

template <class BatchType, class RawBatchType = std::vector<BatchType>>
using Collation = BatchTransform<RawBatchType, BatchType>;

template <class BatchType, class RawBatchType = std::vector<BatchType>>
using Collate = BatchLambda<RawBatchType, BatchType>;

template <class T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {gb::stack(data), gb::stack(targets)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) data.push_back(std::move(e.data));
    return gb::stack(data);
  }
};

// Transforms an example's data (its target passes through).
template <class Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <class Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

}  // namespace gb::data::transforms
