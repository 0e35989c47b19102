// glassbox/data/collate.h — turning a vector of samples into one batch (PyTorch's default_collate).
//
// Collate<T>::collate(samples) stacks Tensors along a new dim 0 and recurses into Example, std::pair and
// std::tuple field by field; numbers become a 1-D tensor (integers int64, floating point float64). Your own sample
// struct: specialize Collate<T> (a `Batch` type, `collate`, and `for_each_tensor` that lets pin_memory and the
// device transfer reach the batch's tensors), or give the DataLoader a collate function (padding
// variable-length samples, say).
//
//   std::vector<Example<>> v = {{x0, y0}, {x1, y1}};   // x (C,H,W), y ()
//   Example<> b = gb::data::collate(std::move(v));      // b.data (2,C,H,W), b.target (2)
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassbox/core/tensor.h"
#include "glassbox/data/example.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/shape.h"

namespace gb::data {

template <class T, class = void>
struct Collate {
  static constexpr bool supported = false;
};

// The batch type collate makes from samples of type T.
template <class T>
using CollateResult = typename Collate<T>::Batch;

template <class T>
CollateResult<T> collate(std::vector<T> samples) {
  static_assert(Collate<T>::supported, "gb::data::collate: specialize gb::data::Collate<T> for this sample type, "
                                       "or give the DataLoader a collate function");
  return Collate<T>::collate(std::move(samples));
}

// Calls f(Tensor&) on every tensor of a batch (f may replace it). False when the type has no Collate
// specialization that says how (pin_memory and the device transfer need it).
template <class B>
constexpr bool has_tensors_v = requires(B& b, void (*f)(Tensor&)) { Collate<B>::for_each_tensor(b, f); };
template <class B, class F>
void for_each_tensor(B& batch, F&& f) {
  Collate<B>::for_each_tensor(batch, f);
}

template <>
struct Collate<Tensor> {
  static constexpr bool supported = true;
  using Batch = Tensor;
  static Tensor collate(std::vector<Tensor> samples) { return gb::stack(samples, 0); }
  template <class F>
  static void for_each_tensor(Tensor& t, F& f) {
    f(t);
  }
};

template <class T>
struct Collate<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static constexpr bool supported = true;
  using Batch = Tensor;
  static Tensor collate(std::vector<T> samples) {
    if constexpr (std::is_integral_v<T>) {
      std::vector<int64_t> v(samples.begin(), samples.end());
      return gb::tensor(ArrayRef<int64_t>(v));
    } else {
      std::vector<double> v(samples.begin(), samples.end());
      return gb::tensor(ArrayRef<double>(v), TensorOptions().dtype(kDouble));
    }
  }
};

namespace detail {
template <class T, class Field>
auto gather(std::vector<T>& samples, Field field) {
  using F = std::decay_t<decltype(field(samples[0]))>;
  std::vector<F> out;
  out.reserve(samples.size());
  for (T& s : samples) out.push_back(std::move(field(s)));
  return collate(std::move(out));
}
}  // namespace detail

template <class D, class T>
struct Collate<Example<D, T>> {
  static constexpr bool supported = Collate<D>::supported && Collate<T>::supported;
  using Batch = Example<CollateResult<D>, CollateResult<T>>;
  static Batch collate(std::vector<Example<D, T>> s) {
    auto data = detail::gather(s, [](Example<D, T>& e) -> D& { return e.data; });
    auto target = detail::gather(s, [](Example<D, T>& e) -> T& { return e.target; });
    return Batch{std::move(data), std::move(target)};
  }
  template <class F>
  static void for_each_tensor(Example<D, T>& e, F& f) {
    Collate<D>::for_each_tensor(e.data, f);
    Collate<T>::for_each_tensor(e.target, f);
  }
};

template <class D>
struct Collate<Example<D, example::NoTarget>> {
  static constexpr bool supported = Collate<D>::supported;
  using Batch = Example<CollateResult<D>, example::NoTarget>;
  static Batch collate(std::vector<Example<D, example::NoTarget>> s) {
    return Batch(detail::gather(s, [](Example<D, example::NoTarget>& e) -> D& { return e.data; }));
  }
  template <class F>
  static void for_each_tensor(Example<D, example::NoTarget>& e, F& f) {
    Collate<D>::for_each_tensor(e.data, f);
  }
};

template <class A, class B>
struct Collate<std::pair<A, B>> {
  static constexpr bool supported = Collate<A>::supported && Collate<B>::supported;
  using Batch = std::pair<CollateResult<A>, CollateResult<B>>;
  static Batch collate(std::vector<std::pair<A, B>> s) {
    auto a = detail::gather(s, [](std::pair<A, B>& p) -> A& { return p.first; });
    auto b = detail::gather(s, [](std::pair<A, B>& p) -> B& { return p.second; });
    return Batch{std::move(a), std::move(b)};
  }
  template <class F>
  static void for_each_tensor(std::pair<A, B>& p, F& f) {
    Collate<A>::for_each_tensor(p.first, f);
    Collate<B>::for_each_tensor(p.second, f);
  }
};

template <class... Ts>
struct Collate<std::tuple<Ts...>> {
  static constexpr bool supported = (Collate<Ts>::supported && ...);
  using Batch = std::tuple<CollateResult<Ts>...>;
  static Batch collate(std::vector<std::tuple<Ts...>> s) {
    return collate_fields(s, std::index_sequence_for<Ts...>{});
  }
  template <class F>
  static void for_each_tensor(std::tuple<Ts...>& t, F& f) {
    std::apply([&](auto&... field) { (Collate<std::decay_t<decltype(field)>>::for_each_tensor(field, f), ...); }, t);
  }

 private:
  template <size_t... I>
  static Batch collate_fields(std::vector<std::tuple<Ts...>>& s, std::index_sequence<I...>) {
    return Batch{detail::gather(s, [](std::tuple<Ts...>& t) -> auto& { return std::get<I>(t); })...};
  }
};

}  // namespace gb::data
