// engine/ops/rnn.cpp — one LSTM layer over a sequence as one op, with its backward right under it (ops/rnn.h).
//
// Per step the layer is a GEMM (h W_hh^T, N x 4H) and a few elementwise ops on N x 4H gates. Run as separate ops
// (lstm_layer_steps) every step records ~10 nodes, and the backward pays for it: each step's slice of the input
// projection and each gate's chunk gets a gradient the size of the whole tensor, summed (O(L^2) adds over a
// sequence). Fused, the forward is one GEMM for every step's input projection, then per step one GEMM and one pass
// over the gates; the backward is one pass and one GEMM per step back, then the weight gradients and the input's as
// GEMMs over the whole sequence: the work is the GEMMs', as in PyTorch's fused CPU and cuDNN layers.
#include "ops/rnn.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "autograd/record.h"
#include "core/device_kernel.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/autograd/autograd.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/parallel.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/shape.h"
#include "ops/gemm.h"
#include "ops/small_gemm.h"
#include "ops/vec_libm.h"

namespace gb::detail {
namespace {

// y = sigmoid(y) or tanh(y) over n contiguous values: vec_libm.h's for float32 where libmvec is built in.
template <typename T>
void activate(VecOp op, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    if (vec_apply(op, y, y, n)) return;
  for (int64_t i = 0; i < n; ++i) y[i] = op == VecOp::tanh ? std::tanh(y[i]) : T(1) / (T(1) + std::exp(-y[i]));
}

// Rows [r0, r1) of one step's gates (N x 4H, pre-activation: x W_ih^T + h W_hh^T) become their activations in
// place; the cell state c = f * c_prev + i * g, its tanh tc and the output h = o * tc are written.
template <typename T>
void step_forward(T* gates, const T* bias, const T* c_prev, T* c, T* tc, T* h, int64_t H, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    T* g = gates + r * 4 * H;
    if (bias)
      for (int64_t j = 0; j < 4 * H; ++j) g[j] += bias[j];
    activate(VecOp::sigmoid, g, 2 * H);  // i, f
    activate(VecOp::tanh, g + 2 * H, H);
    activate(VecOp::sigmoid, g + 3 * H, H);
    const T *gi = g, *gf = g + H, *gg = g + 2 * H, *go = g + 3 * H, *cp = c_prev + r * H;
    T *cr = c + r * H, *tr = tc + r * H, *hr = h + r * H;
    for (int64_t j = 0; j < H; ++j) cr[j] = gf[j] * cp[j] + gi[j] * gg[j];
    for (int64_t j = 0; j < H; ++j) tr[j] = cr[j];
    activate(VecOp::tanh, tr, H);
    for (int64_t j = 0; j < H; ++j) hr[j] = go[j] * tr[j];
  }
}

// Rows [r0, r1) of one step back: from dh (the output's gradient at this step) and dc (the cell state's, from the
// step after), the pre-activation gates' gradient dg (N x 4H); dc becomes the previous cell state's gradient.
template <typename T>
void step_backward(const T* act, const T* c_prev, const T* tc, const T* dh, T* dc, T* dg, int64_t H, int64_t r0,
                   int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const T *a = act + r * 4 * H, *cp = c_prev + r * H, *t = tc + r * H, *dhr = dh + r * H;
    const T *i = a, *f = a + H, *g = a + 2 * H, *o = a + 3 * H;
    T *dcr = dc + r * H, *d = dg + r * 4 * H;
    for (int64_t j = 0; j < H; ++j) {
      const T dct = dcr[j] + dhr[j] * o[j] * (T(1) - t[j] * t[j]);
      d[j] = dct * g[j] * i[j] * (T(1) - i[j]);
      d[H + j] = dct * cp[j] * f[j] * (T(1) - f[j]);
      d[2 * H + j] = dct * i[j] * (T(1) - g[j] * g[j]);
      d[3 * H + j] = dhr[j] * t[j] * o[j] * (T(1) - o[j]);
      dcr[j] = dct * f[j];
    }
  }
}

// Rows per task of a per-step pass: about 32K gate values, at least one row.
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(4 * H, 1)); }

struct Dims {
  int64_t L, N, I, H;
  bool reverse;
  int64_t time(int64_t s) const { return reverse ? L - 1 - s : s; }  // the time index of the s-th step run
};

// The recurrence split by batch rows: the rows of a batch never meet inside an LSTM layer, so a task can run every
// step for its own block of rows, one small GEMM (libxsmm's kernel for the block's exact shape) and one pass over its
// gates per step, with no join between steps. The rows per block, or 0 when each step's GEMM should instead spread
// over the pool (one thread, or blocks too thin for the small-product kernels: fewer than 8 rows, or libxsmm absent).
int64_t row_block(const Dims& d) {
  const int64_t threads = get_num_threads();
  if (threads <= 1 || d.N < 16) return 0;
  int64_t rows = (d.N + threads - 1) / threads;
  rows = std::min(rows, int64_t(4) * 1024 * 1024 / std::max<int64_t>(4 * d.H * d.H, 1));  // small_gemm's reach
  if (rows < 8 || !small_gemm_fits(false, rows, 4 * d.H, d.H, 1.0, 1.0)) return 0;
  return rows;
}

// c (n x m, ld ldc) = a (n x k, lda) b (k x m, ldb) + beta c, all row-major: libxsmm's kernel, or (when it generates
// none) a plain loop.
template <typename T>
void block_gemm(int64_t n, int64_t m, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
                int64_t ldc) {
  if (small_gemm<T>(false, false, n, m, k, T(1), a, lda, b, ldb, beta, c, ldc)) return;
  for (int64_t i = 0; i < n; ++i) {
    T* ci = c + i * ldc;
    if (beta == T(0)) std::fill(ci, ci + m, T(0));
    for (int64_t p = 0; p < k; ++p) {
      const T av = a[i * lda + p];
      const T* bp = b + p * ldb;
      for (int64_t j = 0; j < m; ++j) ci[j] += av * bp[j];
    }
  }
}

// The fused forward's buffers: the activations (L, N, 4H), cell states and their tanh (L, N, H).
struct Forward {
  Tensor out, h_n, c_n, act, cs, tcs;
};

template <typename T>
Forward fused_forward(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih, const Tensor& w_hh,
                      const Tensor& b_ih, const Tensor& b_hh, const Dims& d) {
  const ScalarType dt = x.scalar_type();
  const Device dev = x.device();
  Forward f;
  f.act = make_empty({d.L, d.N, 4 * d.H}, dt, dev);
  f.cs = make_empty({d.L, d.N, d.H}, dt, dev);
  f.tcs = make_empty({d.L, d.N, d.H}, dt, dev);
  f.out = make_empty({d.L, d.N, d.H}, dt, dev);
  Tensor bias = b_ih.defined() ? make_empty({4 * d.H}, dt, dev) : Tensor();
  Tensor h0c = shallow_alias(h0).contiguous(), c0c = shallow_alias(c0).contiguous();
  // every step's input projection in one GEMM: act (L*N, 4H) = x (L*N, I) W_ih^T
  gemm_into(shallow_alias(f.act).view({d.L * d.N, 4 * d.H}), shallow_alias(x).reshape({d.L * d.N, d.I}),
            shallow_alias(w_ih).t(), 1.0, 0.0);
  run_cpu_kernel("lstm_layer", f.out, [&] {
    if (bias.defined()) {
      const Tensor bi = shallow_alias(b_ih).contiguous(), bh = shallow_alias(b_hh).contiguous();
      for (int64_t j = 0; j < 4 * d.H; ++j)
        bias.data_ptr<T>()[j] = bi.data_ptr<T>()[j] + bh.data_ptr<T>()[j];
    }
  });
  const int64_t block = row_block(d);
  if (block > 0) {
    const Tensor wt = shallow_alias(w_hh).t().contiguous();  // (H, 4H): h W_hh^T without a transposed operand
    run_cpu_kernel("lstm_layer", f.out, [&] {
      const int64_t N = d.N, H = d.H;
      const T* w = wt.data_ptr<T>();
      const T* b = bias.defined() ? bias.data_ptr<T>() : nullptr;
      T *act = f.act.data_ptr<T>(), *cs = f.cs.data_ptr<T>(), *tcs = f.tcs.data_ptr<T>(), *out = f.out.data_ptr<T>();
      const T *h0p = h0c.data_ptr<T>(), *c0p = c0c.data_ptr<T>();
      parallel_for(0, (N + block - 1) / block, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t r0 = blk * block, r1 = std::min(N, r0 + block);
          for (int64_t s = 0; s < d.L; ++s) {
            const int64_t t = d.time(s), tp = d.time(s - 1);
            const T* hp = s == 0 ? h0p : out + tp * N * H;
            const T* cp = s == 0 ? c0p : cs + tp * N * H;
            T* g = act + t * N * 4 * H;
            block_gemm<T>(r1 - r0, 4 * H, H, hp + r0 * H, H, w, 4 * H, T(1), g + r0 * 4 * H, 4 * H);  // + h W_hh^T
            step_forward(g, b, cp, cs + t * N * H, tcs + t * N * H, out + t * N * H, H, r0, r1);
          }
        }
      });
    });
  } else {
    const Tensor w_hh_t = shallow_alias(w_hh).t();
    for (int64_t s = 0; s < d.L; ++s) {
      const int64_t t = d.time(s), tp = d.time(s - 1);
      const Tensor h_prev = s == 0 ? h0c : shallow_alias(f.out)[tp];
      const Tensor c_prev = s == 0 ? c0c : shallow_alias(f.cs)[tp];
      const Tensor gates = shallow_alias(f.act)[t];
      gemm_into(gates, h_prev, w_hh_t, 1.0, 1.0);  // + h W_hh^T, over the pool
      run_cpu_kernel("lstm_layer", f.out, [&] {
        T* g = gates.data_ptr<T>();
        const T* b = bias.defined() ? bias.data_ptr<T>() : nullptr;
        const T* cp = c_prev.data_ptr<T>();
        T* c = f.cs.data_ptr<T>() + t * d.N * d.H;
        T* tc = f.tcs.data_ptr<T>() + t * d.N * d.H;
        T* h = f.out.data_ptr<T>() + t * d.N * d.H;
        parallel_for(0, d.N, row_grain(d.H),
                     [&](int64_t r0, int64_t r1) { step_forward(g, b, cp, c, tc, h, d.H, r0, r1); });
      });
    }
  }
  const int64_t last = d.time(d.L - 1);
  f.h_n = d.L ? shallow_alias(f.out)[last].clone() : h0c.clone();
  f.c_n = d.L ? shallow_alias(f.cs)[last].clone() : c0c.clone();
  return f;
}

struct Grads {
  Tensor x, h0, c0, w_ih, w_hh, b;
};

// The first-order backward. g_out (L, N, H), g_h and g_c (N, H): the outputs' gradients, any of them undefined.
template <typename T>
Grads fused_backward(const Tensor& g_out, const Tensor& g_h, const Tensor& g_c, const Tensor& x, const Tensor& h0,
                     const Tensor& c0, const Tensor& w_ih, const Tensor& w_hh, bool has_bias, const Tensor& out,
                     const Tensor& act, const Tensor& cs, const Tensor& tcs, const Dims& d,
                     const std::array<bool, 7>& needs) {
  const ScalarType dt = x.scalar_type();
  const Device dev = x.device();
  const int64_t LN = d.L * d.N;
  auto contiguous_or_zeros = [&](const Tensor& g) {
    if (!g.defined()) return zeros({d.N, d.H}, TensorOptions().dtype(dt).device(dev));
    return shallow_alias(g).to(dt).contiguous().clone();
  };
  Tensor dh = contiguous_or_zeros(g_h), dc = contiguous_or_zeros(g_c);
  const Tensor go = g_out.defined() ? shallow_alias(g_out).to(dt).contiguous() : Tensor();
  const Tensor c0c = shallow_alias(c0).contiguous();
  Tensor dg = make_empty({d.L, d.N, 4 * d.H}, dt, dev);  // the pre-activation gates' gradients
  const int64_t block = row_block(d);
  if (block > 0) {
    const Tensor wc = shallow_alias(w_hh).contiguous();  // (4H, H)
    run_cpu_kernel("lstm_layer_backward", dg, [&] {
      const int64_t N = d.N, H = d.H;
      const T* w = wc.data_ptr<T>();
      const T *a = act.data_ptr<T>(), *cs_p = cs.data_ptr<T>(), *tc = tcs.data_ptr<T>(), *c0p = c0c.data_ptr<T>();
      const T* gop = go.defined() ? go.data_ptr<T>() : nullptr;
      T *dhp = dh.data_ptr<T>(), *dcp = dc.data_ptr<T>(), *dgp = dg.data_ptr<T>();
      parallel_for(0, (N + block - 1) / block, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t r0 = blk * block, r1 = std::min(N, r0 + block);
          for (int64_t s = d.L - 1; s >= 0; --s) {
            const int64_t t = d.time(s);
            if (gop)
              for (int64_t i = r0 * H; i < r1 * H; ++i) dhp[i] += gop[t * N * H + i];
            const T* cp = s == 0 ? c0p : cs_p + d.time(s - 1) * N * H;
            T* dgt = dgp + t * N * 4 * H;
            step_backward(a + t * N * 4 * H, cp, tc + t * N * H, dhp, dcp, dgt, H, r0, r1);
            if (s > 0 || needs[1])  // the previous output's gradient: dg W_hh
              block_gemm<T>(r1 - r0, H, 4 * H, dgt + r0 * 4 * H, 4 * H, w, H, T(0), dhp + r0 * H, H);
          }
        }
      });
    });
  } else {
    for (int64_t s = d.L - 1; s >= 0; --s) {
      const int64_t t = d.time(s);
      const Tensor c_prev = s == 0 ? c0c : shallow_alias(cs)[d.time(s - 1)];
      const Tensor dg_t = shallow_alias(dg)[t];
      run_cpu_kernel("lstm_layer_backward", dg, [&] {
        T* dhp = dh.data_ptr<T>();
        if (go.defined()) {
          const T* gp = go.data_ptr<T>() + t * d.N * d.H;
          for (int64_t i = 0; i < d.N * d.H; ++i) dhp[i] += gp[i];
        }
        const T* a = act.data_ptr<T>() + t * d.N * 4 * d.H;
        const T* cp = c_prev.data_ptr<T>();
        const T* tc = tcs.data_ptr<T>() + t * d.N * d.H;
        T* dcp = dc.data_ptr<T>();
        T* dgp = dg_t.data_ptr<T>();
        parallel_for(0, d.N, row_grain(d.H),
                     [&](int64_t r0, int64_t r1) { step_backward(a, cp, tc, dhp, dcp, dgp, d.H, r0, r1); });
      });
      if (s > 0 || needs[1]) gemm_into(dh, dg_t, w_hh, 1.0, 0.0);  // the previous output's gradient: dg W_hh
    }
  }
  Grads r;
  if (needs[1]) r.h0 = dh;
  if (needs[2]) r.c0 = dc;
  const Tensor dg2 = shallow_alias(dg).view({LN, 4 * d.H});
  if (needs[0]) {
    r.x = make_empty({d.L, d.N, d.I}, dt, dev);
    gemm_into(shallow_alias(r.x).view({LN, d.I}), dg2, w_ih, 1.0, 0.0);
  }
  if (needs[3]) {
    r.w_ih = make_empty({4 * d.H, d.I}, dt, dev);
    gemm_into(r.w_ih, dg2.t(), shallow_alias(x).reshape({LN, d.I}), 1.0, 0.0);
  }
  if (needs[4]) {
    // sum over steps of dg_t^T h_prev_t: the steps after the first read the output of the step before (one GEMM over
    // L-1 steps), the first reads h0
    r.w_hh = make_empty({4 * d.H, d.H}, dt, dev);
    const Tensor h0c = shallow_alias(h0).contiguous();
    const int64_t first = d.time(0);
    const Tensor dg_first = shallow_alias(dg)[first];
    gemm_into(r.w_hh, dg_first.t(), h0c, 1.0, 0.0);
    if (d.L > 1) {
      const Tensor o = shallow_alias(out);
      const Tensor dg_rest = d.reverse ? shallow_alias(dg).narrow(0, 0, d.L - 1) : shallow_alias(dg).narrow(0, 1, d.L - 1);
      const Tensor h_prev = d.reverse ? o.narrow(0, 1, d.L - 1) : o.narrow(0, 0, d.L - 1);
      gemm_into(r.w_hh, dg_rest.reshape({(d.L - 1) * d.N, 4 * d.H}).t(), h_prev.reshape({(d.L - 1) * d.N, d.H}), 1.0,
                1.0);
    }
  }
  if (has_bias && (needs[5] || needs[6])) {
    r.b = make_empty({1, 4 * d.H}, dt, dev);  // the column sums of dg: ones (1, L*N) @ dg
    gemm_into(r.b, ones({1, LN}, TensorOptions().dtype(dt).device(dev)), dg2, 1.0, 0.0);
    r.b = r.b.view({4 * d.H});
  }
  return r;
}

void check_lstm_args(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  const char* op = "lstm_layer";
  GB_CHECK(x.dim() == 3, op, ": expected the input as (L, N, I), but got ", x.sizes());
  const int64_t N = x.size(1), I = x.size(2), H = w_hh.size(1);
  GB_CHECK(w_ih.dim() == 2 && w_ih.size(0) == 4 * H && w_ih.size(1) == I, op, ": weight_ih should be (4H, I) = (",
           4 * H, ", ", I, "), but got ", w_ih.sizes());
  GB_CHECK(w_hh.dim() == 2 && w_hh.size(0) == 4 * H, op, ": weight_hh should be (4H, H), but got ", w_hh.sizes());
  GB_CHECK(h0.sizes() == IntArrayRef({N, H}) && c0.sizes() == IntArrayRef({N, H}), op,
           ": the initial states should be (N, H) = (", N, ", ", H, "), but got ", h0.sizes(), " and ", c0.sizes());
  GB_CHECK(b_ih.defined() == b_hh.defined(), op, ": give both biases or neither");
  for (const Tensor* b : {&b_ih, &b_hh})
    if (b->defined())
      GB_CHECK(b->dim() == 1 && b->size(0) == 4 * H, op, ": a bias should be (4H) = (", 4 * H, "), but got ",
               b->sizes());
  for (const Tensor* t : {&h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh})
    if (t->defined()) {
      check_device(*t, op, "argument", x);
      GB_CHECK(t->scalar_type() == x.scalar_type(), op, ": every argument should be of the input's dtype ",
               to_string(x.scalar_type()), ", but one is ", to_string(t->scalar_type()));
    }
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_step(const Tensor& x_proj, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                                     const Tensor& b_hh) {
  std::vector<Tensor> g = (x_proj + gb::linear(h, w_hh, b_hh)).chunk(4, -1);
  Tensor i = gb::sigmoid(g[0]), f = gb::sigmoid(g[1]), cell = gb::tanh(g[2]), o = gb::sigmoid(g[3]);
  Tensor c_next = f * c + i * cell;
  return {o * gb::tanh(c_next), c_next};
}

Tensor gru_step(const Tensor& x_proj, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  std::vector<Tensor> xs = x_proj.chunk(3, -1);
  std::vector<Tensor> hs = gb::linear(h, w_hh, b_hh).chunk(3, -1);
  Tensor r = gb::sigmoid(xs[0] + hs[0]), z = gb::sigmoid(xs[1] + hs[1]);
  Tensor n = gb::tanh(xs[2] + r * hs[2]);
  return (1 - z) * n + z * h;
}

std::tuple<Tensor, Tensor, Tensor> lstm_layer_steps(const Tensor& x, const Tensor& h0, const Tensor& c0,
                                                    const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                                    const Tensor& b_hh, bool reverse) {
  const int64_t L = x.size(0);
  Tensor proj = gb::linear(x, w_ih, b_ih);  // every step's input projection in one GEMM
  std::vector<Tensor> steps = proj.unbind(0);
  Tensor h = h0, c = c0;
  std::vector<Tensor> outs(static_cast<size_t>(L));
  for (int64_t s = 0; s < L; ++s) {
    const int64_t t = reverse ? L - 1 - s : s;
    std::tie(h, c) = lstm_step(steps[size_t(t)], h, c, w_hh, b_hh);
    outs[size_t(t)] = h;
  }
  return {L ? gb::stack(outs, 0) : gb::empty({0, x.size(1), w_hh.size(1)}, x.options()), h, c};
}

std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih,
                                              const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                                              bool reverse) {
  const ScalarType dt = x.scalar_type();
  if (x.device().is_cuda() || (dt != kFloat && dt != kDouble) || x.dim() != 3 || x.size(0) == 0)
    return lstm_layer_steps(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse);
  OpScope op_scope("lstm_layer", {x, h0, c0, w_ih, w_hh, b_ih, b_hh});
  check_lstm_args(x, h0, c0, w_ih, w_hh, b_ih, b_hh);
  const Dims d{x.size(0), x.size(1), x.size(2), w_hh.size(1), reverse};
  Forward f = dt == kFloat ? fused_forward<float>(x, h0, c0, w_ih, w_hh, b_ih, b_hh, d)
                           : fused_forward<double>(x, h0, c0, w_ih, w_hh, b_ih, b_hh, d);
  op_scope.set_output(f.out);
  if (autograd::needs_grad(x, h0, c0, w_ih, w_hh) || autograd::needs_grad(b_ih, b_hh)) {
    autograd::record(
        "LstmLayerBackward0", autograd::collect_edges({x, h0, c0, w_ih, w_hh, b_ih, b_hh}), {&f.out, &f.h_n, &f.c_n},
        {autograd::input(x), autograd::input(h0), autograd::input(c0), autograd::input(w_ih), autograd::input(w_hh),
         autograd::input(b_ih), autograd::input(b_hh), autograd::output(f.out), autograd::input(f.act),
         autograd::input(f.cs), autograd::input(f.tcs)},
        [d](autograd::BackwardContext& c) {
          const std::array<bool, 7> needs{c.needs(0), c.needs(1), c.needs(2), c.needs(3),
                                          c.needs(4), c.needs(5), c.needs(6)};
          if (GradMode::is_enabled()) {
            // create_graph: the layer again from the step ops, differentiated by autograd (a graph of its own)
            variable_list inputs, wanted;
            for (size_t k = 0; k < 7; ++k)
              if (needs[k]) inputs.push_back(c.saved(k));
            auto [o, h, cc] = lstm_layer_steps(c.saved(0), c.saved(1), c.saved(2), c.saved(3), c.saved(4),
                                               c.saved(5), c.saved(6), d.reverse);
            variable_list outs, grads;
            const Tensor* results[3] = {&o, &h, &cc};
            for (size_t k = 0; k < 3; ++k)
              if (c.grad(k).defined()) {
                outs.push_back(*results[k]);
                grads.push_back(c.grad(k));
              }
            variable_list got = autograd::grad(outs, inputs, grads, /*retain_graph=*/true, /*create_graph=*/true,
                                               /*allow_unused=*/true);
            variable_list r(7);
            for (size_t k = 0, n = 0; k < 7; ++k)
              if (needs[k]) r[k] = got[n++];
            return r;
          }
          const bool has_bias = c.saved(5).defined();
          Grads g = c.saved(0).scalar_type() == kFloat
                        ? fused_backward<float>(c.grad(0), c.grad(1), c.grad(2), c.saved(0), c.saved(1), c.saved(2),
                                                c.saved(3), c.saved(4), has_bias, c.saved(7), c.saved(8), c.saved(9),
                                                c.saved(10), d, needs)
                        : fused_backward<double>(c.grad(0), c.grad(1), c.grad(2), c.saved(0), c.saved(1), c.saved(2),
                                                 c.saved(3), c.saved(4), has_bias, c.saved(7), c.saved(8), c.saved(9),
                                                 c.saved(10), d, needs);
          Tensor gb_hh = needs[5] && needs[6] ? g.b.clone() : g.b;  // two parameters, two gradients
          return variable_list{g.x, g.h0, g.c0, g.w_ih, g.w_hh, needs[5] ? g.b : Tensor(), needs[6] ? gb_hh : Tensor()};
        });
  }
  return {f.out, f.h_n, f.c_n};
}

}  // namespace gb::detail

namespace gb {

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train, bool bidirectional,
                                        bool batch_first) {
  const char* op = "lstm";
  detail::check_defined(input, op);
  detail::OpScope op_scope(op, {input});
  const int64_t D = bidirectional ? 2 : 1, per = has_biases ? 4 : 2;
  GB_CHECK(num_layers >= 1, op, ": num_layers must be at least 1, but got ", num_layers);
  GB_CHECK(hx.size() == 2, op, ": hx must be {h0, c0}, but got ", hx.size(), " tensors");
  GB_CHECK(int64_t(params.size()) == num_layers * D * per, op, ": expected ", num_layers * D * per,
           " parameters (w_ih, w_hh", has_biases ? ", b_ih, b_hh" : "", " for each of ", num_layers, " layers x ", D,
           " directions), but got ", params.size());
  GB_CHECK(input.dim() == 3 || input.dim() == 2, op, ": expected a 3-D (batched) or 2-D (unbatched) input, but got ",
           input.sizes());
  const bool batched = input.dim() == 3;
  Tensor x = batched ? (batch_first ? input.transpose(0, 1) : input) : input.unsqueeze(1);
  Tensor h0 = batched ? hx[0] : hx[0].unsqueeze(1), c0 = batched ? hx[1] : hx[1].unsqueeze(1);
  GB_CHECK(h0.dim() == 3 && h0.size(0) == num_layers * D && c0.sizes() == h0.sizes(), op,
           ": h0 and c0 must be (num_layers * directions, N, H) = (", num_layers * D, ", N, H), but got ",
           hx[0].sizes(), " and ", hx[1].sizes());
  std::vector<Tensor> hn, cn;
  for (int64_t l = 0; l < num_layers; ++l) {
    std::vector<Tensor> dirs;
    for (int64_t d = 0; d < D; ++d) {
      const size_t k = size_t((l * D + d) * per);
      auto [out, h, c] = detail::lstm_layer(x, h0[l * D + d], c0[l * D + d], params[k], params[k + 1],
                                            has_biases ? params[k + 2] : Tensor(),
                                            has_biases ? params[k + 3] : Tensor(), d == 1);
      dirs.push_back(out);
      hn.push_back(h);
      cn.push_back(c);
    }
    x = D == 2 ? gb::cat(dirs, 2) : dirs[0];
    if (dropout > 0 && train && l + 1 < num_layers) x = gb::dropout(x, dropout, true);
  }
  Tensor h_n = gb::stack(hn, 0), c_n = gb::stack(cn, 0);
  Tensor out = !batched ? x.squeeze(1) : batch_first ? x.transpose(0, 1) : x;
  op_scope.set_output(out);
  if (!batched) return {out, h_n.squeeze(1), c_n.squeeze(1)};
  return {out, h_n, c_n};
}

namespace {
void check_cell(const char* op, const Tensor& input, const Tensor& h, const Tensor& w_ih, const Tensor& w_hh,
                int64_t gates) {
  detail::check_defined(input, op);
  GB_CHECK(input.dim() == 1 || input.dim() == 2, op, ": expected input of 1 or 2 dims (N, I), but got ", input.sizes());
  GB_CHECK(w_ih.dim() == 2 && w_hh.dim() == 2 && w_ih.size(0) == gates * w_hh.size(1) && w_hh.size(0) == w_ih.size(0) &&
               w_ih.size(1) == input.size(-1),
           op, ": expected w_ih (", gates, "H, ", input.size(-1), ") and w_hh (", gates, "H, H), but got ", w_ih.sizes(),
           " and ", w_hh.sizes());
  GB_CHECK(h.dim() == input.dim() && h.size(-1) == w_hh.size(1) && (h.dim() == 1 || h.size(0) == input.size(0)), op,
           ": expected the hidden state ", input.dim() == 2 ? "(N, H)" : "(H)", " with N = ", input.size(0),
           " and H = ", w_hh.size(1), ", but got ", h.sizes());
}
}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih, const Tensor& b_hh) {
  const char* op = "lstm_cell";
  GB_CHECK(hx.size() == 2, op, ": hx must be {h, c}, but got ", hx.size(), " tensors");
  check_cell(op, input, hx[0], w_ih, w_hh, 4);
  GB_CHECK(hx[1].sizes() == hx[0].sizes(), op, ": c must have h's shape ", hx[0].sizes(), ", but got ", hx[1].sizes());
  detail::OpScope op_scope(op, {input, hx[0], hx[1]});
  auto [h, c] = detail::lstm_step(gb::linear(input, w_ih, b_ih), hx[0], hx[1], w_hh, b_hh);
  op_scope.set_output(h);
  return {h, c};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  const char* op = "gru_cell";
  check_cell(op, input, hx, w_ih, w_hh, 3);
  detail::OpScope op_scope(op, {input, hx});
  Tensor h = detail::gru_step(gb::linear(input, w_ih, b_ih), hx, w_hh, b_hh);
  op_scope.set_output(h);
  return h;
}

}  // namespace gb
