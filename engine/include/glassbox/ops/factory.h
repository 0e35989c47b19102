// glassbox/ops/factory.h — making tensors: empty/zeros/ones/full, ranges, eye, random, from memory, from values.
//
//   gb::manual_seed(0);
//   auto w = gb::randn({D, H}, gb::TensorOptions().dtype(gb::kFloat64).requires_grad(true));
//   auto idx = gb::arange(0, 10, 2);                 // int64 [0, 2, 4, 6, 8]
//   auto t = gb::tensor({1.0, 2.0, 3.0});            // float32 (the default dtype), like torch::tensor
//   auto b = gb::from_blob(ptr, {2, 3}, gb::kFloat); // borrows ptr; the caller keeps it alive
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "glassbox/core/scalar.h"
#include "glassbox/core/tensor.h"

namespace gb {

Tensor empty(IntArrayRef size, const TensorOptions& options = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, const TensorOptions& options = {});
Tensor zeros(IntArrayRef size, const TensorOptions& options = {});
Tensor ones(IntArrayRef size, const TensorOptions& options = {});
Tensor full(IntArrayRef size, const Scalar& value, const TensorOptions& options = {});
Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {});
// The *_like forms take sizes, dtype and device from t (not requires_grad, unless options say so).
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& value, std::optional<TensorOptions> options = std::nullopt);

// [start, end) by step; int64 when all three are integers, else the default float dtype (like PyTorch).
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions& options = {});
Tensor eye(int64_t n, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});

// Random numbers come from the default generator (gb::manual_seed) unless one is passed.
class Generator;
void manual_seed(uint64_t seed);
Generator& default_generator();  // this thread's override (DefaultGeneratorGuard) if any, else the global one
// Makes default_generator() return `gen` on this thread while the guard lives (the DataLoader installs each
// sample's generator, so gb::rand inside a dataset's get() or a transform is reproducible on any worker).
// The provider form asks a function for the generator on each use (a lazily seeded one: seeding an mt19937_64 costs
// ~1 us, more than many samples' whole transform).
class DefaultGeneratorGuard {
 public:
  explicit DefaultGeneratorGuard(Generator& gen);
  explicit DefaultGeneratorGuard(Generator& (*provider)());
  ~DefaultGeneratorGuard();
  DefaultGeneratorGuard(const DefaultGeneratorGuard&) = delete;
  DefaultGeneratorGuard& operator=(const DefaultGeneratorGuard&) = delete;

 private:
  Generator* prev_;
  Generator& (*prev_provider_)();
};
Tensor randn(IntArrayRef size, const TensorOptions& options = {});
Tensor randn(IntArrayRef size, Generator& gen, const TensorOptions& options = {});
Tensor rand(IntArrayRef size, const TensorOptions& options = {});
Tensor rand(IntArrayRef size, Generator& gen, const TensorOptions& options = {});
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
// Integers uniform in [low, high); int64 unless options say otherwise.
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options = {});
// N(mean, std^2) samples of the given size (torch::normal(mean, std, size)).
Tensor normal(double mean, double std, IntArrayRef size, const TensorOptions& options = {});
// 1 with probability p (each element of p, in [0, 1]), else 0; p's shape and dtype. Not differentiable.
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& self, double p);
// num_samples category indices per row of probs (1-D or 2-D, non-negative weights, not necessarily normalized),
// drawn with or without replacement (without: at most the number of nonzero weights); int64, (rows, num_samples).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options = {});
Tensor randperm(int64_t n, const TensorOptions& options = {});
Tensor randperm(int64_t n, Generator& gen, const TensorOptions& options = {});

// Wraps memory the caller owns (no copy). The optional deleter runs when the last view dies.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter,
                 const TensorOptions& options = {});

namespace detail {
// What gb::tensor takes, as libtorch's torch::detail::TensorDataContainer: a number (a 0-dim tensor), a braced list
// of containers (one more dimension: {1, 2}, {{1, 2}, {3, 4}}, {{0}, {1}}, and {} for an empty one), or the values of
// an ArrayRef or a std::vector. A braced list always makes a dimension, so gb::tensor({7}) has shape [1] and
// gb::tensor(7) shape []. The sub-lists of a list must have equal sizes (checked here, with PyTorch's message).
// Lists are read in the full expression that calls gb::tensor and never kept.
class TensorDataContainer {
 public:
  TensorDataContainer();  // {}: an empty dimension of the default float dtype
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorDataContainer(T value) : kind_(Kind::Scalar), scalar_(value), scalar_type_(natural_type<T>()) {}  // NOLINT
  TensorDataContainer(Half value);      // NOLINT
  TensorDataContainer(BFloat16 value);  // NOLINT
  TensorDataContainer(std::initializer_list<TensorDataContainer> list);
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TensorDataContainer(ArrayRef<T> values)  // NOLINT
      : TensorDataContainer(values.data(), int64_t(values.size()), natural_type<T>()) {}
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TensorDataContainer(const std::vector<T>& values)  // NOLINT
      : TensorDataContainer(ArrayRef<T>(values)) {}
  TensorDataContainer(const std::vector<bool>& values);  // NOLINT
  // A std::initializer_list<T> object (a helper's parameter, say) is its values, as a braced list of them would be.
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorDataContainer(std::initializer_list<T> values) : TensorDataContainer(std::vector<T>(values)) {}  // NOLINT

  const std::vector<int64_t>& sizes() const { return sizes_; }
  // The dtype its values call for, before torch::tensor's rule (int and int64 make int64; float and double the
  // default float dtype); a list's is its elements' promoted type (PyTorch would refuse a mix such as {1, 2.5}).
  ScalarType scalar_type() const { return scalar_type_; }
  // The tensor, in `dtype`, on the cpu.
  Tensor to_tensor(ScalarType dtype) const;

 private:
  template <typename T>
  static constexpr ScalarType natural_type() {
    if constexpr (std::is_same_v<T, bool>) return kBool;
    else if constexpr (std::is_same_v<T, float>) return kFloat;
    else if constexpr (std::is_floating_point_v<T>) return kDouble;
    else if constexpr (sizeof(T) == 1 && std::is_unsigned_v<T>) return kUInt8;
    else if constexpr (sizeof(T) == 1) return kInt8;
    else if constexpr (sizeof(T) == 2) return kInt16;
    else if constexpr (sizeof(T) == 4 && std::is_signed_v<T>) return kInt32;
    else return kInt64;
  }
  template <typename T>
  TensorDataContainer(const T* values, int64_t n, ScalarType natural);
  void fill(char* out, ScalarType dtype, int64_t& pos) const;

  enum class Kind { Scalar, List, Values };
  Kind kind_ = Kind::List;
  Scalar scalar_;
  ScalarType scalar_type_;
  std::vector<int64_t> sizes_;
  std::initializer_list<TensorDataContainer> list_;
  Tensor values_;  // Values: a 1-D cpu tensor of the natural dtype
};
}  // namespace detail

// Copies values in, as torch::tensor: gb::tensor(2.5) is a 0-dim float, gb::tensor({1, 2}) int64 of shape [2],
// gb::tensor({{1.5, 2}, {3, 4}}) a 2x2 of the default float dtype, gb::tensor({true, false}) bool, a
// std::vector<uint8_t> uint8. Floating values (float or double) make the default float dtype, int and int64 values
// int64, unless options name a dtype.
Tensor tensor(detail::TensorDataContainer data, const TensorOptions& options = {});

}  // namespace gb
