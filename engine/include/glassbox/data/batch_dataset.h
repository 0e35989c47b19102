// glassbox/data/batch_dataset.h — libtorch's dataset classes (torch::data::datasets): BatchDataset, Dataset<Self>,
// MapDataset (what dataset.map(transform) returns) and TensorDataset; make_data_loader (make_data_loader.h) and
// gb::data::DataLoader load them.
//
//   struct Squares : gb::data::datasets::Dataset<Squares> {
//     gb::data::Example<> get(size_t i) override { return {gb::tensor({double(i)}), gb::tensor(double(i * i))}; }
//     gb::optional<size_t> size() const override { return 100; }
//   };
//   auto ds = Squares().map(gb::data::transforms::Stack<>());   // batches: Example<> of (N,1) and (N)
//
// These are libtorch's spellings. glassbox's own map-style datasets (dataset.h: gb::data::Dataset<Sample> with
// get(int64_t) and int64_t size(), PyTorch-Python's) are a separate hierarchy; both load through one DataLoader.
// A loader reads a dataset here one example at a time — get(index) and the per-example transforms before the first
// batch transform, in its fetch stage on a worker — and runs the batch transforms from the first one on (Stack<>
// and what follows it) as its collate stage. So, as for glassbox's datasets, get() must be safe to call
// concurrently (libtorch gives each worker a copy of the dataset; glassbox's workers share one), and a sample's
// randomness comes from sample_generator(), which makes batches bit-identical for any number of workers.
// A BatchDataset that overrides get_batch itself (not a Dataset<Self>) is not loadable: derive from Dataset<Self>.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "glassbox/core/array_ref.h"
#include "glassbox/core/error.h"
#include "glassbox/core/tensor.h"
#include "glassbox/data/dataset.h"
#include "glassbox/data/example.h"
#include "glassbox/ops/shape.h"

namespace gb::data {
namespace detail {
template <class D>
struct Pipeline;
}  // namespace detail

namespace datasets {

template <class Source, class AppliedTransform>
class MapDataset;
template <class D, class T>
MapDataset<D, T> map(D dataset, T transform);

template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  constexpr static bool is_stateful = false;

  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  // The number of examples; nullopt when unknown (a loader needs a sized dataset).
  virtual std::optional<size_t> size() const = 0;

  template <class T>
  MapDataset<Self, T> map(T transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <class T>
  MapDataset<Self, T> map(T transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset of single examples: implement get(index) and size().
template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  virtual ExampleType get(size_t index) = 0;
  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

// A dataset whose batches are another's with a transform applied (dataset.map(transform)).
template <class Source, class AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<Source, AppliedTransform>,
                                       typename AppliedTransform::OutputBatchType, typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename Source::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  MapDataset(Source dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}
  OutputBatchType get_batch(BatchRequestType indices) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
  }
  std::optional<size_t> size() const noexcept override { return dataset_.size(); }
  const Source& dataset() const noexcept { return dataset_; }
  const AppliedTransform& transform() const noexcept { return transform_; }

 private:
  template <class D>
  friend struct gb::data::detail::Pipeline;
  Source dataset_;
  AppliedTransform transform_;
};

template <class D, class T>
MapDataset<D, T> map(D dataset, T transform) {
  return MapDataset<D, T>(std::move(dataset), std::move(transform));
}

// The rows of one tensor (or of a stack of tensors) as examples without a target.
struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  explicit TensorDataset(const std::vector<Tensor>& tensors) : TensorDataset(gb::stack(tensors)) {}
  explicit TensorDataset(Tensor t) : tensor(std::move(t)) {
    GB_CHECK(tensor.defined() && tensor.dim() >= 1, "TensorDataset: expected a tensor of at least one dim, got ",
             tensor.defined() ? std::to_string(tensor.dim()) + "-D" : std::string("an undefined tensor"));
  }
  TensorExample get(size_t index) override { return tensor[static_cast<int64_t>(index)]; }
  std::optional<size_t> size() const override { return static_cast<size_t>(tensor.size(0)); }
  Tensor tensor;
};

}  // namespace datasets

namespace detail {

template <class T>
concept example_transform = requires(T& t, typename T::InputType x) {
  typename T::OutputType;
  t.apply(std::move(x));
};

// How a loader reads a libtorch-style dataset D: Example, the unit its fetch stage makes (get(d, index)), and
// Batch, what collate(d, examples) makes of a batch's examples.
template <class D>
struct Pipeline {
  static constexpr bool supported = false;
};

template <class D>
  requires requires(D& d, size_t i) {
    typename D::ExampleType;
    { d.get(i) } -> std::convertible_to<typename D::ExampleType>;
  }
struct Pipeline<D> {
  static constexpr bool supported = true;
  static constexpr bool collated = false;  // a batch is still the vector of examples
  using Example = typename D::ExampleType;
  using Batch = std::vector<Example>;
  static Example get(D& d, size_t i) { return d.get(i); }
  static Batch collate(D&, std::vector<Example> examples) { return examples; }
};

template <bool per_example, class Inner, class T>
struct MapTypes {  // T applies per example: fetched
  using Example = typename T::OutputType;
  using Batch = std::vector<Example>;
};
template <class Inner, class T>
struct MapTypes<false, Inner, T> {  // T applies to batches: collated
  using Example = typename Inner::Example;
  using Batch = typename T::OutputBatchType;
};

template <class S, class T>
struct Pipeline<datasets::MapDataset<S, T>> {
  using Inner = Pipeline<S>;
  using Self = datasets::MapDataset<S, T>;
  static constexpr bool supported = Inner::supported;
  static constexpr bool per_example = !Inner::collated && example_transform<T>;
  static constexpr bool collated = !per_example;
  using Example = typename MapTypes<per_example, Inner, T>::Example;
  using Batch = typename MapTypes<per_example, Inner, T>::Batch;
  static Example get(Self& d, size_t i) {
    if constexpr (per_example)
      return d.transform_.apply(Inner::get(d.dataset_, i));
    else
      return Inner::get(d.dataset_, i);
  }
  static Batch collate(Self& d, std::vector<Example> examples) {
    if constexpr (per_example)
      return examples;
    else
      return d.transform_.apply_batch(Inner::collate(d.dataset_, std::move(examples)));
  }
};

template <class D>
concept loadable_dataset = Pipeline<D>::supported;

// A libtorch-style dataset seen as a glassbox map-style one (what the DataLoader's workers call).
template <class D>
class TorchDatasetAdapter : public gb::data::Dataset<typename Pipeline<D>::Example> {
 public:
  explicit TorchDatasetAdapter(std::shared_ptr<D> d) : d_(std::move(d)) {
    GB_CHECK(d_, "DataLoader: the dataset is null");
  }
  typename Pipeline<D>::Example get(int64_t index) override { return Pipeline<D>::get(*d_, static_cast<size_t>(index)); }
  int64_t size() const override {
    std::optional<size_t> n = d_->size();
    GB_CHECK(n.has_value(), "DataLoader: the dataset's size() is nullopt; a loader needs a sized dataset (return the "
                            "number of examples from size())");
    return static_cast<int64_t>(*n);
  }

 private:
  std::shared_ptr<D> d_;
};

template <class D>
auto torch_collate(std::shared_ptr<D> d) {
  return [d](std::vector<typename Pipeline<D>::Example> examples) {
    return Pipeline<D>::collate(*d, std::move(examples));
  };
}

}  // namespace detail
}  // namespace gb::data
