// engine/ops/reduce_kernels.h — the reduction driver and its reducers (internal; used by reduce.cpp).
//
// The input is seen as `outputs` independent results, each reducing `count` elements visited in logical
// (row-major) order, so "the first index on ties" holds whatever the strides. Three loops cover the layouts: rows
// (each output's elements are one contiguous run: a tight loop), columns (the innermost kept dim is contiguous: a
// block of outputs is updated together while walking the input in memory order), and a general strided walk.
// Outputs are split across threads; a single output over a long run is split into chunks whose partial results
// are combined in order. A reducer says what to compute:
//   Acc init(); step(Acc&, x, k) for the k-th reduced element; combine(Acc&, later Acc); write(i, Acc) for output i;
//   and optionally Acc run(p, n), a vectorized fold of a contiguous run (for those that need no index k), or
//   run(p, n, k0) for one that does (p[0] is the k0-th element). run is compiled per instruction set (core/cpu_isa.h)
//   and everything it calls is always inline.
// Include it after `#pragma GCC optimize("no-trapping-math")` so the exp and select loops vectorize.
#pragma once

#include <cmath>
#include <limits>

#include "core/cpu_isa.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "glassbox/core/parallel.h"
#include "ops/loops.h"
#include "ops/vec_math.h"

namespace gb::detail {

// ---- the driver ----

struct Layout {
  std::vector<int64_t> kept_sizes, kept_strides;  // merged, in logical order; outputs are row-major over these
  std::vector<int64_t> red_sizes, red_strides;    // merged, in logical order; never empty
  int64_t outputs = 1, count = 1;
};

inline Layout make_layout(const Tensor& a, const std::vector<bool>& mask) {
  Layout l;
  // Adjacent dims (in the order visited) merge when the outer one steps exactly over the inner one.
  auto push = [](std::vector<int64_t>& sz, std::vector<int64_t>& st, int64_t size, int64_t stride) {
    if (size == 1) return;
    if (!sz.empty() && size != 0 && sz.back() != 0 && st.back() == stride * size) {
      sz.back() *= size;
      st.back() = stride;
      return;
    }
    sz.push_back(size);
    st.push_back(stride);
  };
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (mask[d]) {
      push(l.red_sizes, l.red_strides, a.size(d), a.stride(d));
      l.count *= a.size(d);
    } else {
      push(l.kept_sizes, l.kept_strides, a.size(d), a.stride(d));
      l.outputs *= a.size(d);
    }
  }
  if (l.red_sizes.empty()) {
    l.red_sizes = {1};
    l.red_strides = {1};
  }
  return l;
}

inline int64_t kept_offset(const Layout& l, int64_t i) {
  int64_t off = 0;
  for (int64_t d = int64_t(l.kept_sizes.size()) - 1; d >= 0 && i > 0; --d) {
    off += (i % l.kept_sizes[d]) * l.kept_strides[d];
    i /= l.kept_sizes[d];
  }
  return off;
}

// f(offset, k) for every reduced element of one output, k counting in logical order.
template <typename F>
void for_each_reduced(const Layout& l, const F& f) {
  if (l.count == 0) return;
  const int64_t nr = int64_t(l.red_sizes.size());
  const int64_t n = l.red_sizes[nr - 1], s = l.red_strides[nr - 1];
  std::vector<int64_t> idx(size_t(nr), 0);
  int64_t off = 0, k = 0;
  for (;;) {
    for (int64_t t = 0; t < n; ++t) f(off + t * s, k++);
    int64_t d = nr - 2;
    for (; d >= 0; --d) {
      off += l.red_strides[d];
      if (++idx[d] < l.red_sizes[d]) break;
      off -= idx[d] * l.red_strides[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// A reducer's run() compiled for each instruction set (core/cpu_isa.h): run, lanes_run and the reducer's init, step
// and combine are always inline, so each copy is vectorized for its set. Their lanes fix the order of every sum, so
// each set gives the same bits.
// A reducer that tracks indices has run(p, n, k0) (k0: the index of p[0]); the others run(p, n). A run that wants
// the set's native vector width takes it as a template argument W (floats: 4 baseline, 8 AVX2, 16 AVX-512).
template <int W, typename R>
GB_ALWAYS_INLINE typename R::Acc call_run(const R& r, const typename R::In* p, int64_t n, int64_t k0) {
  if constexpr (requires { r.template run<W>(p, n, k0); })
    return r.template run<W>(p, n, k0);
  else if constexpr (requires { r.template run<W>(p, n); })
    return r.template run<W>(p, n);
  else if constexpr (requires { r.run(p, n, k0); })
    return r.run(p, n, k0);
  else
    return r.run(p, n);
}
template <typename R>
typename R::Acc run_baseline(const R& r, const typename R::In* p, int64_t n, int64_t k0) {
  return call_run<4>(r, p, n, k0);
}
template <typename R>
GB_TARGET_AVX2 typename R::Acc run_avx2(const R& r, const typename R::In* p, int64_t n, int64_t k0) {
  return call_run<8>(r, p, n, k0);
}
template <typename R>
GB_TARGET_AVX512 typename R::Acc run_avx512(const R& r, const typename R::In* p, int64_t n, int64_t k0) {
  return call_run<16>(r, p, n, k0);
}

// One contiguous run p[0..n) whose first element is the k0-th: the reducer's vectorizable run() when it has one.
template <typename R>
typename R::Acc reduce_run(const R& r, const typename R::In* p, int64_t n, int64_t k0) {
  if constexpr (
      requires { r.run(p, n); } || requires { r.run(p, n, k0); }) {
    return pick_isa(&run_baseline<R>, &run_avx2<R>, &run_avx512<R>)(r, p, n, k0);
  } else {
    using M = opmath_t<typename R::In>;
    typename R::Acc acc = r.init();
    for (int64_t k = 0; k < n; ++k) r.step(acc, M(p[k]), k0 + k);
    return acc;
  }
}

// A block of n <= 64 neighbouring outputs of the columns layout (the innermost kept dim contiguous): acc[j] folds
// output j's reduced elements, all n updated together while the input is walked in memory order, k counting each
// output's elements in logical order. Always inline, compiled per instruction set below: the j loop vectorizes at the
// set's width (each output's elements still come in the same order: the same bits).
template <typename R>
GB_ALWAYS_INLINE void columns_body(const R& r, const typename R::In* p, const Layout& l, int64_t n,
                                   typename R::Acc* acc) {
  using M = opmath_t<typename R::In>;
  for (int64_t j = 0; j < n; ++j) acc[j] = r.init();
  if (l.count == 0) return;
  const int64_t nr = int64_t(l.red_sizes.size());
  const int64_t inner = l.red_sizes[size_t(nr - 1)], s = l.red_strides[size_t(nr - 1)];
  int64_t idx[kMaxLoopDims] = {};
  int64_t off = 0, k = 0;
  for (;;) {
    for (int64_t t = 0; t < inner; ++t, ++k) {
      const typename R::In* q = p + off + t * s;
      for (int64_t j = 0; j < n; ++j) r.step(acc[j], M(q[j]), k);
    }
    int64_t d = nr - 2;
    for (; d >= 0; --d) {
      off += l.red_strides[size_t(d)];
      if (++idx[d] < l.red_sizes[size_t(d)]) break;
      off -= idx[d] * l.red_strides[size_t(d)];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}
template <typename R>
void columns_baseline(const R& r, const typename R::In* p, const Layout& l, int64_t n, typename R::Acc* acc) {
  columns_body(r, p, l, n, acc);
}
template <typename R>
GB_TARGET_AVX2 void columns_avx2(const R& r, const typename R::In* p, const Layout& l, int64_t n,
                                 typename R::Acc* acc) {
  columns_body(r, p, l, n, acc);
}
template <typename R>
GB_TARGET_AVX512 void columns_avx512(const R& r, const typename R::In* p, const Layout& l, int64_t n,
                                     typename R::Acc* acc) {
  columns_body(r, p, l, n, acc);
}

// Folds p[0..n) through step in 8 independent lanes, then combines them: lets the compiler vectorize.
template <typename R, typename A>
GB_ALWAYS_INLINE A lanes_run(const R& r, const typename R::In* p, int64_t n, A init) {
  using M = opmath_t<typename R::In>;
  A lane[8];
  for (auto& a : lane) a = init;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) r.step(lane[k], M(p[i + k]), 0);
  for (; i < n; ++i) r.step(lane[0], M(p[i]), 0);
  for (int k = 1; k < 8; ++k) r.combine(lane[0], lane[k]);
  return lane[0];
}

template <typename R>
void run_reduce(const Tensor& a, const Layout& l, const R& r) {
  using T = typename R::In;
  using M = opmath_t<T>;
  using Acc = typename R::Acc;
  if (l.outputs == 0 || skip_kernel(a)) return;  // meta: the outputs exist, nothing is computed
  const T* base = static_cast<const T*>(a.data_ptr());
  const int64_t K = l.count;
  const int64_t grain = std::max<int64_t>(1, detail::kElementwiseGrain / std::max<int64_t>(K, 1));

  if (l.red_sizes.size() == 1 && (l.red_strides[0] == 1 || K <= 1)) {
    if (l.outputs == 1 && K > 2 * detail::kElementwiseGrain && get_num_threads() > 1) {
      // One long contiguous run: partial results per chunk, combined in order.
      const int64_t chunks = std::min<int64_t>(K / detail::kElementwiseGrain, 4 * int64_t(get_num_threads()));
      struct Slot {
        Acc acc;
      };
      std::vector<Slot> part(size_t(chunks), Slot{r.init()});  // not vector<bool>: chunks write in parallel
      parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          const int64_t k0 = K * c / chunks, k1 = K * (c + 1) / chunks;
          part[size_t(c)].acc = reduce_run(r, base + k0, k1 - k0, k0);
        }
      });
      Acc acc = part[0].acc;
      for (int64_t c = 1; c < chunks; ++c) r.combine(acc, part[size_t(c)].acc);
      r.write(0, acc);
      return;
    }
    // Rows: each output reduces one contiguous run of K elements.
    parallel_for(0, l.outputs, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        r.write(i, reduce_run(r, base + kept_offset(l, i), K, 0));
      }
    });
    return;
  }

  if (!l.kept_sizes.empty() && l.kept_strides.back() == 1) {
    // Columns: the innermost kept dim is contiguous, so a block of B neighbouring outputs is updated together.
    constexpr int64_t B = 64;
    const int64_t J = l.kept_sizes.back();
    const int64_t blocks = (J + B - 1) / B;
    const int64_t outer = l.outputs / J;
    const auto columns = pick_isa(&columns_baseline<R>, &columns_avx2<R>, &columns_avx512<R>);
    GB_ASSERT(l.red_sizes.size() <= size_t(kMaxLoopDims), "reduction over more dims than the loops handle");
    parallel_for(0, outer * blocks, std::max<int64_t>(1, grain / B), [&](int64_t b, int64_t e) {
      Acc acc[B];
      for (int64_t t = b; t < e; ++t) {
        const int64_t j0 = (t % blocks) * B, n = std::min(B, J - j0);
        const int64_t i0 = (t / blocks) * J + j0;
        columns(r, base + kept_offset(l, i0), l, n, acc);
        for (int64_t j = 0; j < n; ++j) r.write(i0 + j, acc[j]);
      }
    });
    return;
  }

  // Anything else: a strided walk per output.
  parallel_for(0, l.outputs, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const T* p = base + kept_offset(l, i);
      Acc acc = r.init();
      for_each_reduced(l, [&](int64_t off, int64_t k) { r.step(acc, M(p[off]), k); });
      r.write(i, acc);
    }
  });
}

template <typename M>
constexpr bool is_float_v = std::is_floating_point_v<M>;

// ---- reducers ----

// The extreme value and the (first) index where it occurs; NaN wins, its first occurrence.
template <typename T, bool kMax>
struct ArgExtreme {
  using In = T;
  using M = opmath_t<T>;
  struct Acc {
    M v{};
    int64_t i = -1;
  };
  T* values;
  int64_t* indices;
  GB_ALWAYS_INLINE static bool better(M x, M v) {
    if constexpr (is_float_v<M>) {
      if (x != x) return v == v;
    }
    return kMax ? x > v : x < v;
  }
  GB_ALWAYS_INLINE Acc init() const { return {}; }
  GB_ALWAYS_INLINE void step(Acc& a, M x, int64_t k) const {
    if (a.i < 0 || better(x, a.v)) {
      a.v = x;
      a.i = k;
    }
  }
  GB_ALWAYS_INLINE void combine(Acc& a, const Acc& b) const {
    if (b.i >= 0 && (a.i < 0 || better(b.v, a.v))) a = b;
  }
  GB_ALWAYS_INLINE static bool same(M x, M v) {
    if constexpr (is_float_v<M>) {
      if (x != x) return v != v;
    }
    return x == v;
  }
  // A contiguous run whose first element is the k0-th, in two passes that vectorize: the extreme value by Extreme's
  // lane fold (NaN when there is one), then the first element equal to it (the first NaN): the sequential loop's
  // index, and its element's value (-0 and +0 tie, as there).
  template <int W = 4>
  GB_ALWAYS_INLINE Acc run(const T* p, int64_t n, int64_t k0) const;
  void write(int64_t i, const Acc& a) const {
    if (values) values[i] = T(a.v);
    if (indices) indices[i] = a.i;
  }
};

// The extreme value only; NaN propagates.
template <typename T, bool kMax>
struct Extreme {
  using In = T;
  using M = opmath_t<T>;
  using Acc = M;
  T* out;
  GB_ALWAYS_INLINE Acc init() const {
    if constexpr (is_float_v<M>)
      return kMax ? -std::numeric_limits<M>::infinity() : std::numeric_limits<M>::infinity();
    else
      return kMax ? std::numeric_limits<M>::lowest() : std::numeric_limits<M>::max();
  }
  GB_ALWAYS_INLINE void step(Acc& a, M x, int64_t) const {
    if constexpr (is_float_v<M>)
      a = ((x != x) | (kMax ? x > a : x < a)) ? x : a;  // `|`, not `||`: no branch, so it vectorizes
    else
      a = (kMax ? x > a : x < a) ? x : a;
  }
  GB_ALWAYS_INLINE void combine(Acc& a, const Acc& b) const { step(a, b, 0); }
  // W: the instruction set's float width (call_run); float runs on extreme_native, wider than extreme_vec's 4 lanes
  // (4096x1024 amax over rows 363 -> 148-169 us; libtorch 125-147). The same value on every set, except that a max
  // of +0 and -0 may come out as either (they compare equal; max/min with indices return the element found first).
  template <int W = 4>
  GB_ALWAYS_INLINE Acc run(const T* p, int64_t n) const {
    if constexpr (std::is_same_v<T, float>)
      return detail::extreme_native<W, kMax>(p, n);
    else if constexpr (std::is_same_v<T, double>)
      return detail::extreme_vec<T, kMax>(p, n);
    else
      return lanes_run(*this, p, n, init());
  }
  void write(int64_t i, Acc a) const { out[i] = T(a); }
};

template <typename T, bool kAll>
struct Logical {
  using In = T;
  using M = opmath_t<T>;
  using Acc = bool;
  bool* out;
  GB_ALWAYS_INLINE Acc init() const { return kAll; }
  GB_ALWAYS_INLINE void step(Acc& a, M x, int64_t) const {
    if constexpr (kAll)
      a = a && (x != M(0));
    else
      a = a || (x != M(0));
  }
  GB_ALWAYS_INLINE void combine(Acc& a, const Acc& b) const { a = kAll ? (a && b) : (a || b); }
  GB_ALWAYS_INLINE Acc run(const T* p, int64_t n) const {
    for (int64_t i = 0; i < n; ++i)
      if ((M(p[i]) != M(0)) != kAll) return !kAll;  // the first zero decides all, the first non-zero any
    return kAll;
  }
  void write(int64_t i, Acc a) const { out[i] = a; }
};

template <typename T>
using wide_t =
    std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<is_float_v<opmath_t<T>>, float, int64_t>>;

template <typename T>
struct Prod {
  using In = T;
  using M = opmath_t<T>;
  using Acc = wide_t<T>;
  using Out = std::conditional_t<is_float_v<M>, T, int64_t>;
  Out* out;
  GB_ALWAYS_INLINE Acc init() const { return Acc(1); }
  GB_ALWAYS_INLINE void step(Acc& a, M x, int64_t) const { a *= Acc(x); }
  GB_ALWAYS_INLINE void combine(Acc& a, const Acc& b) const { a *= b; }
  GB_ALWAYS_INLINE Acc run(const T* p, int64_t n) const { return lanes_run(*this, p, n, init()); }
  void write(int64_t i, Acc a) const { out[i] = Out(a); }
};

// Welford's running mean and sum of squared deviations (in double), merged with Chan's formula; a contiguous run in
// two passes that vectorize instead (run: no division per element; 4096x1024 over dim 1: 11.6 -> 0.72 ms).
template <typename T>
struct Moments {
  using In = T;
  using M = opmath_t<T>;
  struct Acc {
    double n = 0, mean = 0, m2 = 0;
  };
  T* var;
  T* mean;
  double divisor;
  bool take_sqrt;
  GB_ALWAYS_INLINE Acc init() const { return {}; }
  GB_ALWAYS_INLINE void step(Acc& a, M x, int64_t) const {
    a.n += 1;
    double d = double(x) - a.mean;
    a.mean += d / a.n;
    a.m2 += d * (double(x) - a.mean);
  }
  // A contiguous run: its mean from 8 double lanes, then the squared deviations from that mean in 8 more (more
  // accurate than Welford's update too; the lanes give every instruction set the same bits).
  GB_ALWAYS_INLINE Acc run(const In* p, int64_t n) const {
    if (n == 0) return {};
    double lane[8] = {}, tail = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) lane[k] += double(M(p[i + k]));
    for (; i < n; ++i) tail += double(M(p[i]));
    double sum = tail;
    for (double l : lane) sum += l;
    const double mean = sum / double(n);
    double sq[8] = {}, sq_tail = 0;
    for (i = 0; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) {
        const double d = double(M(p[i + k])) - mean;
        sq[k] += d * d;
      }
    for (; i < n; ++i) sq_tail += (double(M(p[i])) - mean) * (double(M(p[i])) - mean);
    double m2 = sq_tail;
    for (double l : sq) m2 += l;
    return {double(n), mean, m2};
  }
  GB_ALWAYS_INLINE void combine(Acc& a, const Acc& b) const {
    if (b.n == 0) return;
    double n = a.n + b.n, d = b.mean - a.mean;
    a.m2 += b.m2 + d * d * a.n * b.n / n;
    a.mean += d * b.n / n;
    a.n = n;
  }
  void write(int64_t i, const Acc& a) const {
    double v = a.m2 / divisor;
    if (var) var[i] = T(take_sqrt ? std::sqrt(v) : v);
    if (mean) mean[i] = T(a.n > 0 ? a.mean : std::numeric_limits<double>::quiet_NaN());
  }
};

enum class NormKind { zero, one, two, inf, neg_inf, p };

template <typename T, NormKind kKind>
struct Norm {
  using In = T;
  using M = opmath_t<T>;
  using Acc = wide_t<T>;
  T* out;
  Acc p;
  GB_ALWAYS_INLINE Acc init() const {
    return kKind == NormKind::neg_inf ? std::numeric_limits<Acc>::infinity() : Acc(0);
  }
  GB_ALWAYS_INLINE void step(Acc& a, M x, int64_t) const {
    Acc ax = std::abs(Acc(x));
    if constexpr (kKind == NormKind::zero)
      a += Acc(x != M(0));
    else if constexpr (kKind == NormKind::one)
      a += ax;
    else if constexpr (kKind == NormKind::two)
      a += ax * ax;
    else if constexpr (kKind == NormKind::inf)
      a = ((ax > a) | (ax != ax)) ? ax : a;
    else if constexpr (kKind == NormKind::neg_inf)
      a = ((ax < a) | (ax != ax)) ? ax : a;
    else
      a += std::pow(ax, p);
  }
  GB_ALWAYS_INLINE void combine(Acc& a, const Acc& b) const {
    if constexpr (kKind == NormKind::inf || kKind == NormKind::neg_inf)
      step(a, M(b), 0);
    else
      a += b;
  }
  GB_ALWAYS_INLINE Acc run(const T* p, int64_t n) const { return lanes_run(*this, p, n, init()); }
  void write(int64_t i, Acc a) const {
    if constexpr (kKind == NormKind::two)
      out[i] = T(std::sqrt(a));
    else if constexpr (kKind == NormKind::p)
      out[i] = T(std::pow(a, Acc(1) / p));
    else
      out[i] = T(a);
  }
};

template <typename T, bool kMax>
template <int W>
GB_ALWAYS_INLINE typename ArgExtreme<T, kMax>::Acc ArgExtreme<T, kMax>::run(const T* p, int64_t n, int64_t k0) const {
  if (n == 0) return init();
  const M m = Extreme<T, kMax>{nullptr}.template run<W>(p, n);
  int64_t k = 0;
  while (k + 1 < n && !same(M(p[k]), m)) ++k;
  return Acc{M(p[k]), k0 + k};
}

// log(sum(exp(x))) online: the running max m and sum s of exp(x - m), rescaled when m grows.
template <typename T>
struct LogSumExp {
  using In = T;
  using M = opmath_t<T>;
  struct Acc {
    M m = -std::numeric_limits<M>::infinity();
    M s = 0;
  };
  T* out;
  GB_ALWAYS_INLINE Acc init() const { return {}; }
  GB_ALWAYS_INLINE void step(Acc& a, M x, int64_t) const {
    if (x > a.m) {
      a.s = a.s * std::exp(a.m - x) + M(1);
      a.m = x;
    } else if (x == a.m) {  // also +inf twice, where x - m would be NaN
      a.s += M(1);
    } else if (x != x) {
      a.m = x;
      a.s = x;
    } else {
      a.s += std::exp(x - a.m);  // exp(-inf) = 0 covers x = -inf
    }
  }
  GB_ALWAYS_INLINE void combine(Acc& a, const Acc& b) const {
    if (b.m == a.m)
      a.s += b.s;
    else if (a.m > b.m)
      a.s += b.s * std::exp(b.m - a.m);
    else if (b.m > a.m)
      a = Acc{b.m, b.s + a.s * std::exp(a.m - b.m)};
    else
      a = Acc{std::numeric_limits<M>::quiet_NaN(), std::numeric_limits<M>::quiet_NaN()};
  }
  template <int W = 4>
  GB_ALWAYS_INLINE Acc run(const T* p, int64_t n) const {
    M m = Extreme<T, true>{nullptr}.template run<W>(p, n);
    if (!std::isfinite(m)) {  // NaN, +inf or all -inf: the careful online loop
      Acc a;
      for (int64_t i = 0; i < n; ++i) step(a, M(p[i]), i);
      return a;
    }
    M lane[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) lane[k] += detail::exp_vec(M(p[i + k]) - m);
    for (; i < n; ++i) lane[0] += detail::exp_vec(M(p[i]) - m);
    M s = 0;
    for (M v : lane) s += v;
    return {m, s};
  }
  void write(int64_t i, const Acc& a) const { out[i] = T(a.m + std::log(a.s)); }
};

}  // namespace gb::detail
