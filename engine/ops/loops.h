// engine/ops/loops.h — the strided elementwise loop every pointwise CPU kernel runs on (internal).
//
// StridedLoop takes an output and up to three inputs, broadcasts the inputs' strides to the output's shape
// (stride 0 on broadcast dims), merges dims that are contiguous for every operand, and visits the elements in
// row-major runs along the innermost dim. The typed helpers below give the compiler plain pointer loops for the
// common contiguous and scalar-broadcast cases so they vectorize. On meta (skip_kernel in core/make.h) a loop
// visits nothing: numel() is 0, so every kernel built on it computes nothing and reads no memory. All operands
// must be on out's device (PyTorch's "Expected all tensors to be on the same device"). Up to kMaxLoopDims dims after
// merging (PyTorch's TensorIterator limit, 25); the loop allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "core/cpu_isa.h"
#include "glassbox/core/parallel.h"
#include "glassbox/core/tensor.h"

namespace gb::detail {

constexpr int kMaxOperands = 4;
constexpr int kMaxLoopDims = 25;
constexpr int64_t kElementwiseGrain = 32768;  // elements below which a kernel stays on one thread

class StridedLoop {
 public:
  // out must already have the broadcast shape; every input must broadcast to it.
  StridedLoop(const Tensor& out, std::initializer_list<const Tensor*> inputs);

  int64_t numel() const { return numel_; }
  int ndim() const { return nd_; }

  // body(char** ptrs, const int64_t* inner_strides_bytes, int64_t n) for each run in [begin, end).
  template <typename Body>
  void run(int64_t begin, int64_t end, const Body& body) const {
    if (begin >= end) return;  // nothing to do (and an empty shape has a 0 to divide by below)
    const int nd = nd_;
    std::array<int64_t, kMaxOperands> inner{};
    std::array<char*, kMaxOperands> ptrs{};
    if (nd == 0) {
      if (begin < end) {
        for (int t = 0; t < nt_; ++t) ptrs[t] = data_[t];
        body(ptrs.data(), inner.data(), int64_t(1));
      }
      return;
    }
    for (int t = 0; t < nt_; ++t) inner[t] = strides_[t][nd - 1];
    std::array<int64_t, kMaxLoopDims> idx{};
    int64_t pos = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = pos % shape_[d];
      pos /= shape_[d];
    }
    const int64_t inner_size = shape_[nd - 1];
    while (begin < end) {
      for (int t = 0; t < nt_; ++t) {
        char* p = data_[t];
        for (int d = 0; d < nd; ++d) p += idx[d] * strides_[t][d];
        ptrs[t] = p;
      }
      int64_t n = std::min(inner_size - idx[nd - 1], end - begin);
      body(ptrs.data(), inner.data(), n);
      begin += n;
      idx[nd - 1] += n;
      for (int d = nd - 1; d > 0 && idx[d] == shape_[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  }

  template <typename Body>
  void run_parallel(const Body& body, int64_t grain = kElementwiseGrain) const {
    parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { run(b, e, body); });
  }

 private:
  int nt_ = 0;
  int nd_ = 0;  // dims after merging
  int64_t numel_ = 1;
  std::array<int64_t, kMaxLoopDims> shape_{};
  std::array<char*, kMaxOperands> data_{};
  std::array<std::array<int64_t, kMaxLoopDims>, kMaxOperands> strides_{};  // bytes
};

// The contiguous runs of the loops below, compiled for each instruction set (core/cpu_isa.h): f is inlined into
// each copy, so the compiler vectorizes it as wide as the set allows.
template <typename Out, typename A, typename F>
GB_ALWAYS_INLINE void map1_run(Out* __restrict o, const A* __restrict x, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = Out(f(x[i]));
}
template <typename Out, typename A, typename F>
void map1_baseline(Out* o, const A* x, int64_t n, const F& f) {
  map1_run(o, x, n, f);
}
template <typename Out, typename A, typename F>
GB_TARGET_AVX2 void map1_avx2(Out* o, const A* x, int64_t n, const F& f) {
  map1_run(o, x, n, f);
}
template <typename Out, typename A, typename F>
GB_TARGET_AVX512 void map1_avx512(Out* o, const A* x, int64_t n, const F& f) {
  map1_run(o, x, n, f);
}
template <typename Out, typename A, typename B, typename F>
GB_ALWAYS_INLINE void map2_run(Out* __restrict o, const A* __restrict x, const B* __restrict y, int64_t n,
                               const F& f) {
  for (int64_t i = 0; i < n; ++i) o[i] = Out(f(x[i], y[i]));
}
template <typename Out, typename A, typename B, typename F>
void map2_baseline(Out* o, const A* x, const B* y, int64_t n, const F& f) {
  map2_run(o, x, y, n, f);
}
template <typename Out, typename A, typename B, typename F>
GB_TARGET_AVX2 void map2_avx2(Out* o, const A* x, const B* y, int64_t n, const F& f) {
  map2_run(o, x, y, n, f);
}
template <typename Out, typename A, typename B, typename F>
GB_TARGET_AVX512 void map2_avx512(Out* o, const A* x, const B* y, int64_t n, const F& f) {
  map2_run(o, x, y, n, f);
}

// out[i] = f(a[i]); f works in whatever types it likes, returning something convertible to Out.
template <typename Out, typename A, typename F>
void unary_loop(const Tensor& out, const Tensor& a, const F& f) {
  StridedLoop loop(out, {&a});
  loop.run_parallel([&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(A))) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      const A* x = reinterpret_cast<const A*>(p[1]);
      if (static_cast<const void*>(o) == static_cast<const void*>(x) || n < 16)  // in place: no restrict
        for (int64_t i = 0; i < n; ++i) o[i] = Out(f(x[i]));
      else
        pick_isa(&map1_baseline<Out, A, F>, &map1_avx2<Out, A, F>, &map1_avx512<Out, A, F>)(o, x, n, f);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = Out(f(*reinterpret_cast<const A*>(p[1] + i * s[1])));
    }
  });
}

// out[i] = f(a[i], b[i]) with a and b broadcast to out.
template <typename Out, typename A, typename B, typename F>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, const F& f) {
  StridedLoop loop(out, {&a, &b});
  loop.run_parallel([&](char** p, const int64_t* s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* y = reinterpret_cast<const B*>(p[2]);
    if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(A)) && s[2] == int64_t(sizeof(B))) {
      if (static_cast<const void*>(o) == static_cast<const void*>(x) ||
          static_cast<const void*>(o) == static_cast<const void*>(y) || n < 16)  // in place: no restrict
        for (int64_t i = 0; i < n; ++i) o[i] = Out(f(x[i], y[i]));
      else
        pick_isa(&map2_baseline<Out, A, B, F>, &map2_avx2<Out, A, B, F>, &map2_avx512<Out, A, B, F>)(o, x, y, n, f);
    } else if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(A)) && s[2] == 0) {
      const B yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = Out(f(x[i], yv));
    } else if (s[0] == int64_t(sizeof(Out)) && s[1] == 0 && s[2] == int64_t(sizeof(B))) {
      const A xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = Out(f(xv, y[i]));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = Out(f(*reinterpret_cast<const A*>(p[1] + i * s[1]),
                                                         *reinterpret_cast<const B*>(p[2] + i * s[2])));
    }
  });
}

// out[i] = f(a[i], b[i], c[i]) with all three broadcast to out.
template <typename Out, typename A, typename B, typename C, typename F>
void ternary_loop(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, const F& f) {
  StridedLoop loop(out, {&a, &b, &c});
  loop.run_parallel([&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(A)) && s[2] == int64_t(sizeof(B)) &&
        s[3] == int64_t(sizeof(C))) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      const A* x = reinterpret_cast<const A*>(p[1]);
      const B* y = reinterpret_cast<const B*>(p[2]);
      const C* z = reinterpret_cast<const C*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = Out(f(x[i], y[i], z[i]));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = Out(f(*reinterpret_cast<const A*>(p[1] + i * s[1]),
                                                         *reinterpret_cast<const B*>(p[2] + i * s[2]),
                                                         *reinterpret_cast<const C*>(p[3] + i * s[3])));
    }
  });
}

}  // namespace gb::detail
