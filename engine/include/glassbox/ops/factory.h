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

// Copies values in: floating values make the default float dtype, integers int64, bools bool (torch::tensor).
Tensor tensor(ArrayRef<double> values, const TensorOptions& options = {});
Tensor tensor(ArrayRef<float> values, const TensorOptions& options = {});
Tensor tensor(ArrayRef<int64_t> values, const TensorOptions& options = {});
Tensor tensor(ArrayRef<int> values, const TensorOptions& options = {});
Tensor tensor(const std::vector<bool>& values, const TensorOptions& options = {});
namespace detail {
// One value of a braced list given to gb::tensor: a number or a bool, never a nested list, so that {{0}, {1}} is
// read as the 2-D list it is (a one-element inner list would otherwise convert to a number).
struct TensorElement {
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorElement(T v) : value(v) {}  // NOLINT
  Scalar value;
};
}  // namespace detail
// {1, 2} is int64, {1.5, 2} the default float (any floating value decides), {true, false} bool.
Tensor tensor(std::initializer_list<detail::TensorElement> values, const TensorOptions& options = {});
// A matrix: {{1, 2}, {3, 4}} is int64, {{1.5, 2}, {3, 4}} the default float (any floating value decides). Rows of
// one element ({{0}, {1}}) do not compile (ambiguous with a flat list): write gb::tensor({0, 1}).view({2, 1}).
Tensor tensor(std::initializer_list<std::initializer_list<Scalar>> rows, const TensorOptions& options = {});
Tensor tensor(double value, const TensorOptions& options = {});  // a 0-dim tensor
Tensor tensor(int64_t value, const TensorOptions& options = {});
Tensor tensor(int value, const TensorOptions& options = {});   // so tensor(2, gb::kLong) is not ambiguous
Tensor tensor(bool value, const TensorOptions& options = {});  // a 0-dim bool tensor, as torch::tensor(true)

}  // namespace gb
