// engine/core/factory.cpp — tensor factories: constant fills, ranges, eye, random draws, from_blob, from values.
#include "cuda/philox.h"
#include "glassbox/ops/factory.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/dispatch.h"
#include "core/make.h"
#include "cuda/launch.h"
#include "glassbox/core/generator.h"
#include "glassbox/core/parallel.h"

namespace gb {
namespace {

Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor make(IntArrayRef size, const TensorOptions& o) { return detail::make_empty(size, o.dtype(), o.device()); }

// A factory whose values are computed on the host (ranges, eye, random draws) makes them on the cpu and copies them
// to cuda:N: the same values as on the cpu (PyTorch's CUDA generator draws other numbers than its CPU one).
template <typename F>
Tensor on_host_then_device(const TensorOptions& o, const F& make_on_cpu) {
  Tensor t = make_on_cpu(o.device(kCPU).requires_grad(false)).to(o.device());
  return finish(t, o);
}

void fill_raw(const Tensor& t, const Scalar& v) {
  if (t.numel() == 0 || t.is_meta()) return;
  if (t.is_cuda()) return detail::cuda_fill(t, v.is_boolean() ? double(v.to_bool()) : v.to_double());
  detail::dispatch_all(t.scalar_type(), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T value = v.to<std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>>();
    T* p = reinterpret_cast<T*>(t.data_ptr());
    if (t.is_contiguous()) {
      parallel_for(0, t.numel(), 65536, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = value;
      });
    } else {
      detail::check_cpu_meta_device(t, "fill_");
      // strided: walk the index space
      std::vector<int64_t> idx(size_t(t.dim()), 0);
      for (int64_t n = 0; n < t.numel(); ++n) {
        int64_t off = 0;
        for (int64_t d = 0; d < t.dim(); ++d) off += idx[d] * t.stride(d);
        p[off] = value;
        for (int64_t d = t.dim() - 1; d >= 0; --d) {
          if (++idx[d] < t.size(d)) break;
          idx[d] = 0;
        }
      }
    }
  });
}

TensorOptions like_options(const Tensor& t, const std::optional<TensorOptions>& o) {
  TensorOptions base = t.options();
  if (!o) return base;
  TensorOptions r = o->has_dtype() ? base.dtype(o->dtype()) : base;
  if (o->device() != Device(kCPU)) r = r.device(o->device());
  return r.requires_grad(o->requires_grad());
}

Generator g_default_generator;
thread_local Generator* t_generator_override = nullptr;  // DefaultGeneratorGuard
thread_local Generator& (*t_generator_provider)() = nullptr;

}  // namespace

namespace detail {
void fill_tensor(const Tensor& t, const Scalar& v) { fill_raw(t, v); }
}  // namespace detail

Tensor empty(IntArrayRef size, const TensorOptions& o) { return finish(make(size, o), o); }

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, const TensorOptions& o) {
  GB_CHECK(size.size() == stride.size(), "empty_strided: got ", size.size(), " sizes but ", stride.size(),
           " strides; pass one stride per dim");
  int64_t extent = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    GB_CHECK(size[i] >= 0 && stride[i] >= 0, "empty_strided: sizes and strides must be non-negative, got ", size,
             " and ", stride);
    if (size[i] == 0) extent = 0;
  }
  if (extent) {
    extent = 1;
    for (size_t i = 0; i < size.size(); ++i) extent += (size[i] - 1) * stride[i];
  }
  Tensor base = detail::make_empty({extent}, o.dtype(), o.device());
  Tensor t = detail::make_view(base, size, stride, 0);
  t.unsafe_impl()->is_view = false;
  return finish(t, o);
}

Tensor zeros(IntArrayRef size, const TensorOptions& o) {
  Tensor t = make(size, o);
  fill_raw(t, 0);
  return finish(t, o);
}
Tensor ones(IntArrayRef size, const TensorOptions& o) { return full(size, 1, o.has_dtype() ? o : o.dtype(get_default_dtype())); }
Tensor full(IntArrayRef size, const Scalar& value, const TensorOptions& o) {
  TensorOptions opts = o;
  if (!o.has_dtype()) opts = o.dtype(value.is_boolean() ? kBool : value.is_integral() ? kInt64 : get_default_dtype());
  Tensor t = make(size, opts);
  fill_raw(t, value);
  return finish(t, opts);
}
Tensor scalar_tensor(const Scalar& value, const TensorOptions& o) {
  TensorOptions opts = o.has_dtype() ? o : o.dtype(get_default_dtype());
  Tensor t = make({}, opts);
  fill_raw(t, value);
  return finish(t, opts);
}
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) { return empty(t.sizes(), like_options(t, o)); }
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) { return zeros(t.sizes(), like_options(t, o)); }
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) { return full(t.sizes(), 1, like_options(t, o)); }
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> o) {
  return full(t.sizes(), v, like_options(t, o));
}

Tensor arange(const Scalar& end, const TensorOptions& o) { return arange(0, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& o) { return arange(start, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& o) {
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  GB_CHECK(st != 0, "arange: step must be nonzero");
  GB_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", s, " -> ", e);
  GB_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger bound inconsistent with step sign (start ",
           s, ", end ", e, ", step ", st, ")");
  bool all_int = start.is_integral(true) && end.is_integral(true) && step.is_integral(true);
  TensorOptions opts = o.has_dtype() ? o : o.dtype(all_int ? kInt64 : get_default_dtype());
  if (opts.device().is_cuda())
    return on_host_then_device(opts, [&](const TensorOptions& c) { return arange(start, end, step, c); });
  int64_t n = all_int ? int64_t(std::ceil(double(end.to_long() - start.to_long()) / double(step.to_long())))
                      : int64_t(std::ceil((e - s) / st));
  Tensor t = make({std::max<int64_t>(n, 0)}, opts);
  if (t.is_meta()) return finish(t, opts);  // meta: shape and allocation, no values
  detail::dispatch_numeric(t.scalar_type(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<T>) p[i] = T(start.to_long() + i * step.to_long());
      else p[i] = T(s + double(i) * st);
    }
  });
  return finish(t, opts);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions& o) {
  GB_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  TensorOptions opts = o.has_dtype() ? o : o.dtype(get_default_dtype());
  if (opts.device().is_cuda())
    return on_host_then_device(opts, [&](const TensorOptions& c) { return linspace(start, end, steps, c); });
  Tensor t = make({steps}, opts);
  if (t.is_meta()) return finish(t, opts);  // meta: shape and allocation, no values
  double s = start.to_double(), e = end.to_double();
  double step = steps > 1 ? (e - s) / double(steps - 1) : 0.0;
  detail::dispatch_numeric(t.scalar_type(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(t.data_ptr());
    // Like PyTorch: the first half counts up from start, the second half down from end (symmetric rounding).
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      double v = i < half ? s + step * double(i) : e - step * double(steps - 1 - i);
      if constexpr (std::is_integral_v<T>) p[i] = T(int64_t(v));
      else p[i] = T(v);
    }
  });
  return finish(t, opts);
}

Tensor eye(int64_t n, const TensorOptions& o) { return eye(n, n, o); }
Tensor eye(int64_t n, int64_t m, const TensorOptions& o) {
  GB_CHECK(n >= 0 && m >= 0, "eye: n and m must be non-negative, got ", n, " and ", m);
  if (o.device().is_cuda()) return on_host_then_device(o, [&](const TensorOptions& c) { return eye(n, m, c); });
  Tensor t = make({n, m}, o);
  if (t.is_meta()) return finish(t, o);  // meta: shape and allocation, no values
  fill_raw(t, 0);
  detail::dispatch_all(t.scalar_type(), "eye", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = T(1);
  });
  return finish(t, o);
}

// ---- random ----

void manual_seed(uint64_t seed) {  // torch::manual_seed: the cpu generator and every cuda device's
  g_default_generator.manual_seed(seed);
  cuda_kernels::philox_seed_all(seed);
}
Generator& default_generator() {
  if (t_generator_provider) return t_generator_provider();
  return t_generator_override ? *t_generator_override : g_default_generator;
}

DefaultGeneratorGuard::DefaultGeneratorGuard(Generator& gen)
    : prev_(t_generator_override), prev_provider_(t_generator_provider) {
  t_generator_override = &gen;
  t_generator_provider = nullptr;
}
DefaultGeneratorGuard::DefaultGeneratorGuard(Generator& (*provider)())
    : prev_(t_generator_override), prev_provider_(t_generator_provider) {
  t_generator_provider = provider;
}
DefaultGeneratorGuard::~DefaultGeneratorGuard() {
  t_generator_override = prev_;
  t_generator_provider = prev_provider_;
}

Tensor randn(IntArrayRef size, const TensorOptions& o) { return randn(size, default_generator(), o); }
Tensor randn(IntArrayRef size, Generator& gen, const TensorOptions& o) {
  if (o.device().is_cuda()) return on_host_then_device(o, [&](const TensorOptions& c) { return randn(size, gen, c); });
  Tensor t = make(size, o);
  if (t.is_meta()) return finish(t, o);
  detail::dispatch_floating(t.scalar_type(), "randn", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = T(opmath_t<T>(gen.normal()));
  });
  return finish(t, o);
}
Tensor rand(IntArrayRef size, const TensorOptions& o) { return rand(size, default_generator(), o); }
Tensor rand(IntArrayRef size, Generator& gen, const TensorOptions& o) {
  if (o.device().is_cuda()) return on_host_then_device(o, [&](const TensorOptions& c) { return rand(size, gen, c); });
  Tensor t = make(size, o);
  if (t.is_meta()) return finish(t, o);
  detail::dispatch_floating(t.scalar_type(), "rand", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, double>) p[i] = gen.uniform_double();
      else p[i] = T(gen.uniform_float());
    }
  });
  return finish(t, o);
}
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> o) { return randn(t.sizes(), like_options(t, o)); }
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> o) { return rand(t.sizes(), like_options(t, o)); }

Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& o) { return randint(0, high, size, o); }
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& o) {
  GB_CHECK(high > low, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  TensorOptions opts = o.has_dtype() ? o : o.dtype(kInt64);
  if (opts.device().is_cuda())
    return on_host_then_device(opts, [&](const TensorOptions& c) { return randint(low, high, size, c); });
  Tensor t = make(size, opts);
  if (t.is_meta()) return finish(t, opts);  // meta: shape and allocation, no values
  uint64_t range = uint64_t(high - low);
  Generator& gen = default_generator();
  detail::dispatch_numeric(t.scalar_type(), "randint", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = T(double(low + int64_t(gen.next_u64() % range)));
  });
  return finish(t, opts);
}

Tensor randperm(int64_t n, const TensorOptions& o) { return randperm(n, default_generator(), o); }
Tensor randperm(int64_t n, Generator& gen, const TensorOptions& o) {
  GB_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  TensorOptions opts = o.has_dtype() ? o : o.dtype(kInt64);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[gen.next_u64() % uint64_t(i + 1)]);
  Tensor t = tensor(ArrayRef<int64_t>(perm), TensorOptions().dtype(kInt64));
  return finish((opts.dtype() == kInt64 ? t : t.to(opts.dtype())).to(opts.device()), opts);
}

// ---- from memory and values ----

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& o) {
  return from_blob(data, sizes, detail::contiguous_strides(sizes), o);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& o) {
  GB_CHECK(sizes.size() == strides.size(), "from_blob: got ", sizes.size(), " sizes but ", strides.size(), " strides");
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) extent += (sizes[i] - 1) * strides[i];
  auto storage = std::make_shared<StorageImpl>(DataPtr{data, {}}, extent * element_size(o.dtype()), o.device());
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = sizes;
  impl->strides = strides;
  impl->dtype = o.dtype();
  impl->device = o.device();
  impl->refresh();
  return finish(Tensor(std::move(impl)), o);
}
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, const TensorOptions& o) {
  Tensor t = from_blob(data, sizes, o);
  t.storage()->data_ptr.deleter = std::move(deleter);
  return t;
}


namespace detail {

TensorDataContainer::TensorDataContainer() : scalar_type_(get_default_dtype()), sizes_{0} {}
TensorDataContainer::TensorDataContainer(Half value) : kind_(Kind::Scalar), scalar_(value), scalar_type_(kHalf) {}
TensorDataContainer::TensorDataContainer(BFloat16 value)
    : kind_(Kind::Scalar), scalar_(value), scalar_type_(kBFloat16) {}

TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> list)
    : scalar_type_(list.size() ? list.begin()->scalar_type() : get_default_dtype()), list_(list) {
  const std::vector<int64_t>& first = list.size() ? list.begin()->sizes() : std::vector<int64_t>{};
  for (const TensorDataContainer& e : list) {
    const std::vector<int64_t>& got = e.sizes();
    GB_CHECK(got.size() == first.size(), "tensor: the elements of a list must be all numbers or all lists of the same ",
             "sizes, as in {{1, 2}, {3, 4}} (got an element of ", first.size(), " dimensions and one of ", got.size(),
             ")");
    for (size_t k = 0; k < got.size(); ++k)
      GB_CHECK(got[k] == first[k], "tensor: expected sequence of length ", first[k], " at dim ", k + 1, " (got ",
               got[k], "); every sub-list of a nested list needs the same sizes, as in {{1, 2}, {3, 4}}");
    scalar_type_ = promote_types(scalar_type_, e.scalar_type());
  }
  sizes_.push_back(int64_t(list.size()));
  sizes_.insert(sizes_.end(), first.begin(), first.end());
}

template <typename T>
TensorDataContainer::TensorDataContainer(const T* values, int64_t n, ScalarType natural)
    : kind_(Kind::Values), scalar_type_(natural), sizes_{n} {
  values_ = make_empty({n}, natural, Device(kCPU));
  using Stored = std::conditional_t<std::is_floating_point_v<T>, std::conditional_t<std::is_same_v<T, float>, float, double>, T>;
  std::copy(values, values + n, reinterpret_cast<Stored*>(values_.data_ptr()));
}
#define GB_TENSOR_DATA_VALUES(T) \
  template TensorDataContainer::TensorDataContainer(const T* values, int64_t n, ScalarType natural);
GB_TENSOR_DATA_VALUES(float)
GB_TENSOR_DATA_VALUES(double)
GB_TENSOR_DATA_VALUES(uint8_t)
GB_TENSOR_DATA_VALUES(int8_t)
GB_TENSOR_DATA_VALUES(int16_t)
GB_TENSOR_DATA_VALUES(int32_t)
GB_TENSOR_DATA_VALUES(int64_t)
#undef GB_TENSOR_DATA_VALUES

TensorDataContainer::TensorDataContainer(const std::vector<bool>& values)
    : kind_(Kind::Values), scalar_type_(kBool), sizes_{int64_t(values.size())} {
  values_ = make_empty({int64_t(values.size())}, kBool, Device(kCPU));
  std::copy(values.begin(), values.end(), values_.data_ptr<bool>());
}

// Writes this container's values, row-major, into `out` (a buffer of `dtype`) from element `pos` on.
void TensorDataContainer::fill(char* out, ScalarType dtype, int64_t& pos) const {
  const int64_t item = int64_t(element_size(dtype));
  switch (kind_) {
    case Kind::Scalar:
      dispatch_all(dtype, "tensor", [&](auto tag) {  // as fill_ converts: integers through int64, as PyTorch
        using T = typename decltype(tag)::type;
        reinterpret_cast<T*>(out)[pos] =
            T(scalar_.to<std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>>());
      });
      ++pos;
      return;
    case Kind::Values: {
      Tensor v = values_.to(dtype).contiguous();
      std::memcpy(out + pos * item, v.data_ptr(), size_t(v.numel() * item));
      pos += v.numel();
      return;
    }
    case Kind::List:
      for (const TensorDataContainer& e : list_) e.fill(out, dtype, pos);
      return;
  }
}

Tensor TensorDataContainer::to_tensor(ScalarType dtype) const {
  if (kind_ == Kind::Values) return values_.scalar_type() == dtype ? values_ : values_.to(dtype);
  Tensor t = make_empty(sizes_, dtype, Device(kCPU));
  int64_t pos = 0;
  fill(static_cast<char*>(t.data_ptr()), dtype, pos);
  return t;
}

}  // namespace detail

Tensor tensor(detail::TensorDataContainer data, const TensorOptions& o) {
  // torch::tensor's rule: int and int64 values make int64, float and double ones the default float dtype
  ScalarType natural = data.scalar_type();
  if (natural == kInt32) natural = kInt64;
  if (natural == kFloat || natural == kDouble) natural = get_default_dtype();
  Tensor t = data.to_tensor(o.has_dtype() ? o.dtype() : natural);
  if (o.device().is_cuda()) t = t.to(o.device());
  return finish(t, o);
}

}  // namespace gb
