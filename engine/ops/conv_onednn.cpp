// engine/ops/conv_onednn.cpp — conv2d's float32 kernels on oneDNN (see conv_onednn.h), and
// gb::backends::mkldnn::is_available. Without oneDNN in the build both kernels decline and conv.cpp computes.
#include "ops/conv_onednn.h"

#include <string>

#include "glassbox/core/mkldnn.h"
#include "instrument/probe.h"

#if GLASSBOX_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/cpu_isa.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/core/error.h"
#include "glassbox/core/parallel.h"
#include "ops/loops.h"

// Debian's oneDNN runs its kernels on OpenMP (libgomp): the team's size is the calling thread's OpenMP setting.
extern "C" void omp_set_num_threads(int n);
extern "C" int omp_get_max_threads();
#endif

namespace gb {

bool backends::mkldnn::is_available() { return GLASSBOX_WITH_ONEDNN != 0; }

namespace detail {

#if !GLASSBOX_WITH_ONEDNN

bool onednn_conv_forward(const ConvGeom&, const float*, const float*, const float*, float*, Device) { return false; }
bool onednn_conv_backward(const ConvGeom&, const float*, const float*, const float*, float*, float*, Device) {
  return false;
}

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine& cpu_engine() {
  static dnnl::engine* engine = [] {
    // GLASSBOX_CPU_CAPABILITY caps oneDNN's JIT as it caps glassbox's own kernels. oneDNN fixes its instruction set
    // at its first primitive, so this is read once.
    try {
      if (cpu_isa() == CpuIsa::baseline) dnnl::set_max_cpu_isa(dnnl::cpu_isa::sse41);
      if (cpu_isa() == CpuIsa::avx2) dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2);
    } catch (const dnnl::error&) {  // already fixed (another library in the process used oneDNN first)
    }
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);  // leaked: primitives may outlive static destructors
  }();
  return *engine;
}

// The plain layouts glassbox keeps (NCHW activations, OIHW or GOIHW weights) and the same shapes with the layout left
// to oneDNN ("any": its blocked formats), plus the window's parameters in oneDNN's terms (dilation counts the gaps).
struct Descs {
  memory::desc x, w, y, b, x_any, w_any, y_any;
  memory::dims stride, dilation, pad_l, pad_r;
};

Descs descs(const ConvGeom& g) {
  const auto f32 = memory::data_type::f32;
  const memory::dims xd{g.N, g.C, g.H, g.W}, yd{g.N, g.O, g.Ho, g.Wo};
  const memory::dims wd = g.groups == 1 ? memory::dims{g.O, g.C, g.kH, g.kW}
                                        : memory::dims{g.groups, g.Og(), g.Cg(), g.kH, g.kW};
  Descs d;
  d.x = memory::desc(xd, f32, Tag::nchw);
  d.y = memory::desc(yd, f32, Tag::nchw);
  d.w = memory::desc(wd, f32, g.groups == 1 ? Tag::oihw : Tag::goihw);
  d.b = memory::desc({g.O}, f32, Tag::x);
  d.x_any = memory::desc(xd, f32, Tag::any);
  d.y_any = memory::desc(yd, f32, Tag::any);
  d.w_any = memory::desc(wd, f32, Tag::any);
  d.stride = {g.sH, g.sW};
  d.dilation = {g.dH - 1, g.dW - 1};
  d.pad_l = {g.pH, g.pW};
  d.pad_r = {g.pH, g.pW};
  return d;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // from the caching allocator, per call
  return attr;
}

// One operand's way between glassbox's layout and the primitive's: a reorder, built once, unless they agree. Its
// scratchpad is the caller's (user mode), as the convolutions' are: a primitive with oneDNN's own scratchpad may not
// run on another thread than the one that made it, and the batch's slices run on the pool's threads.
struct Operand {
  memory::desc plain, inner;
  bool same = true;
  dnnl::reorder reorder;
  memory::desc scratch;
};

Operand make_operand(const memory::desc& plain, const memory::desc& inner, bool in) {
  Operand o{plain, inner, plain == inner, {}, {}};
  if (o.same) return o;
  const dnnl::reorder::primitive_desc pd = in ? dnnl::reorder::primitive_desc(cpu_engine(), plain, cpu_engine(), inner,
                                                                             user_scratchpad())
                                              : dnnl::reorder::primitive_desc(cpu_engine(), inner, cpu_engine(), plain,
                                                                             user_scratchpad());
  o.reorder = dnnl::reorder(pd);
  o.scratch = pd.scratchpad_desc();
  return o;
}
Operand operand_in(const memory::desc& plain, const memory::desc& inner) { return make_operand(plain, inner, true); }
Operand operand_out(const memory::desc& inner, const memory::desc& plain) { return make_operand(plain, inner, false); }

struct Forward {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  Operand x, w, y;
  memory::desc b;
};

struct Backward {
  dnnl::convolution_backward_data::primitive_desc data_pd;
  dnnl::convolution_backward_data data;
  dnnl::convolution_backward_weights::primitive_desc weights_pd;
  dnnl::convolution_backward_weights weights;
  Operand gy_data, w_data, gx;  // the input gradient's operands
  Operand gy_weights, x_weights, gw;  // the weight gradient's
};

dnnl::convolution_forward::primitive_desc forward_pd(const Descs& d, bool bias) {
  using F = dnnl::convolution_forward;
  const auto kind = dnnl::prop_kind::forward_training;
  const auto alg = dnnl::algorithm::convolution_direct;
  F::desc desc = bias ? F::desc(kind, alg, d.x_any, d.w_any, d.b, d.y_any, d.stride, d.dilation, d.pad_l, d.pad_r)
                      : F::desc(kind, alg, d.x_any, d.w_any, d.y_any, d.stride, d.dilation, d.pad_l, d.pad_r);
  return F::primitive_desc(desc, user_scratchpad(), cpu_engine());
}

std::shared_ptr<const Forward> make_forward(const ConvGeom& g, bool bias) {
  const Descs d = descs(g);
  auto f = std::make_shared<Forward>();
  f->pd = forward_pd(d, bias);
  f->prim = dnnl::convolution_forward(f->pd);
  f->x = operand_in(d.x, f->pd.src_desc());
  f->w = operand_in(d.w, f->pd.weights_desc());
  f->y = operand_out(f->pd.dst_desc(), d.y);
  f->b = d.b;
  return f;
}

std::shared_ptr<const Backward> make_backward(const ConvGeom& g) {
  const Descs d = descs(g);
  const auto alg = dnnl::algorithm::convolution_direct;
  const auto hint = forward_pd(d, false);
  auto b = std::make_shared<Backward>();
  b->data_pd = dnnl::convolution_backward_data::primitive_desc(
      {alg, d.x_any, d.w_any, d.y_any, d.stride, d.dilation, d.pad_l, d.pad_r}, user_scratchpad(), cpu_engine(), hint);
  b->weights_pd = dnnl::convolution_backward_weights::primitive_desc(
      {alg, d.x_any, d.w_any, d.y_any, d.stride, d.dilation, d.pad_l, d.pad_r}, user_scratchpad(), cpu_engine(), hint);
  b->data = dnnl::convolution_backward_data(b->data_pd);
  b->weights = dnnl::convolution_backward_weights(b->weights_pd);
  b->gy_data = operand_in(d.y, b->data_pd.diff_dst_desc());
  b->w_data = operand_in(d.w, b->data_pd.weights_desc());
  b->gx = operand_out(b->data_pd.diff_src_desc(), d.x);
  b->gy_weights = operand_in(d.y, b->weights_pd.diff_dst_desc());
  b->x_weights = operand_in(d.x, b->weights_pd.src_desc());
  b->gw = operand_out(b->weights_pd.diff_weights_desc(), d.w);
  return b;
}

// Primitives per geometry. A geometry oneDNN has no kernel for is remembered as null (the caller falls back). At
// 1024 geometries (a model fed ever-changing image sizes) the cache starts over rather than grow without bound.
// A convolution's geometry and which primitives (forward with or without bias, backward).
using ConvKey = std::array<int64_t, 17>;

template <class Entry>
class Cache {
 public:
  using Key = ConvKey;
  std::shared_ptr<const Entry> get(const Key& key, const std::function<std::shared_ptr<const Entry>()>& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second;
    if (map_.size() >= 1024) map_.clear();
    std::shared_ptr<const Entry> entry;  // stays null when oneDNN has no kernel for the geometry
    try {
      entry = make();
    } catch (const dnnl::error& e) {
      GB_CHECK(e.status == dnnl_unimplemented, "conv2d: oneDNN could not build its convolution (", e.what(),
               "); set gb::backends::mkldnn::enabled = false to run glassbox's own im2col + GEMM instead");
    }
    map_.emplace(key, entry);
    return entry;
  }

 private:
  struct Hash {
    size_t operator()(const Key& k) const noexcept {
      size_t h = 0;
      for (int64_t v : k) h = (h ^ std::hash<int64_t>{}(v)) * 1099511628211ull;
      return h;
    }
  };
  std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<const Entry>, Hash> map_;
};

ConvKey key_of(const ConvGeom& g, int64_t variant) {
  return {g.N, g.C, g.H, g.W, g.O, g.kH, g.kW, g.Ho, g.Wo, g.sH, g.sW, g.pH, g.pW, g.dH, g.dW, g.groups, variant};
}

// The choice by shape. A single-channel input (an image's first layer) is im2col + GEMM's: its column matrix is
// only kH*kW rows, while oneDNN's kernel for it writes a blocked output that must be reordered back (bench_conv:
// 64x1x28x28 -> 16 channels 3x3, forward + backward, 1.0 ms against oneDNN's 1.8). Everything else measured there,
// from 3 input channels up, 1x1 and strided included, is oneDNN's, by 1.2x to 4x.
bool usable(const ConvGeom& g) {
  return backends::mkldnn::enabled.load(std::memory_order_relaxed) && g.N > 0 && g.C > 0 && g.O > 0 && g.Ho > 0 &&
         g.Wo > 0 && !(g.groups == 1 && g.C == 1);
}

// The OpenMP team oneDNN runs on: glassbox's thread count, one inside a parallel_for body (never nested teams).
// (Read back each time: another OpenMP user in the process, libtorch for one, may have changed it since.)
// glassbox's idle pool workers sleep meanwhile instead of spinning on the team's cores (core/parallel.h).
void size_team() {
  const int n = in_parallel_region() ? 1 : get_num_threads();
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
  if (n > 1) park_workers();
}

int64_t conv_flops(const ConvGeom& g) { return 2 * g.N * g.O * g.Ho * g.Wo * g.Cg() * g.kH * g.kW; }

// A convolution's batch in slices, one per thread of glassbox's pool: each slice's oneDNN primitives run on an
// OpenMP team of one inside a parallel_for body (size_team), so no OpenMP team ever spins on the cores the pool's
// workers need between convolutions (on 2 cores a spinning team had made the ops between convolutions ~40% slower and
// a ResNet-style step 24-36 ms instead of 20: docs/PERFORMANCE.md, Threads). Samples are independent, so forward and
// the input gradient are the slices' results side by side; the weight gradient is the slices' partial sums added in
// slice order. One slice (one thread, a batch of one, already inside a parallel_for) is the whole call on the calling
// thread's team.
struct Slice {
  ConvGeom g;   // the slice's geometry: g.N its samples
  int64_t n0;   // its first sample
};

std::vector<Slice> slices_of(const ConvGeom& g) {
  const int64_t S = in_parallel_region() || g.N < 2 ? 1 : std::min<int64_t>(get_num_threads(), g.N);
  std::vector<Slice> out;
  for (int64_t s = 0; s < S; ++s) {
    Slice sl{g, g.N * s / S};
    sl.g.N = g.N * (s + 1) / S - sl.n0;
    out.push_back(sl);
  }
  return out;
}

// One call's buffers and phases. Buffers are caching-allocator tensors on the operands' device, made on the calling
// thread in slice order (so a meta run makes the very same ones: it plans a cpu or GPU run's memory), kept alive until
// the call returns and named by the op span open while they are made. A phase (an op span on the calling thread)
// makes its buffers, then runs its work for every slice, on the pool when there are several. On meta nothing runs.
class Call {
 public:
  Call(Device device, int64_t slices) : device_(device), plan_(device.is_meta()), slices_(slices) {}

  bool plan() const { return plan_; }
  void* buffer(size_t bytes) {
    if (bytes == 0) return nullptr;
    keep_.push_back(make_empty({static_cast<int64_t>(bytes)}, kByte, device_));
    return keep_.back().data_ptr();
  }
  // work(stream) once, on the calling thread: on its OpenMP team sized by size_team for a one-slice call, on a team
  // of one in a sliced call (a small leftover step, never a team of several that would spin afterwards).
  void run_once(const std::function<void(dnnl::stream&)>& work) {
    if (plan_) return;
    if (slices_ == 1)
      size_team();
    else if (omp_get_max_threads() != 1)
      omp_set_num_threads(1);
    dnnl::stream stream(cpu_engine());
    work(stream);
  }
  // work(s, stream) for every slice.
  void run(const std::function<void(int64_t, dnnl::stream&)>& work) {
    if (slices_ == 1) return run_once([&](dnnl::stream& stream) { work(0, stream); });
    if (plan_) return;
    parallel_for(0, slices_, 1, [&](int64_t lo, int64_t hi) {
      size_team();  // inside a parallel_for body: a team of one
      dnnl::stream stream(cpu_engine());
      for (int64_t s = lo; s < hi; ++s) work(s, stream);
    });
  }

 private:
  Device device_;
  bool plan_;
  int64_t slices_;
  std::vector<Tensor> keep_;
};

memory mem(const memory::desc& d, const void* p) { return memory(d, cpu_engine(), const_cast<void*>(p)); }

// Slice s's part of a batched operand: `per` floats per sample (a meta run's operands may have no address).
template <class T>
T* at(T* p, const Slice& s, int64_t per) {
  return p ? p + s.n0 * per : p;
}

// Where an operand lives for the primitive: glassbox's buffer itself when the layouts agree, else `inner`.
const void* where(const Operand& o, const void* data, const void* inner) { return o.same ? data : inner; }

// One reorder of one slice: `from` (glassbox's layout when `in`, else the primitive's) into `to`, with its scratchpad.
struct Move {
  const Operand* o;
  const void* from;
  const void* to;
  bool in;
  void* scratch;
};
// A move made in a phase's allocation loop (its scratchpad made there too), or none when the layouts agree.
void add_move(Call& call, std::vector<Move>& moves, const Operand& o, const void* from, const void* to, bool in) {
  if (!o.same) moves.push_back({&o, from, to, in, call.buffer(o.scratch.get_size())});
}
void run_moves(dnnl::stream& st, const std::vector<Move>& moves) {
  for (const Move& m : moves) {
    std::unordered_map<int, memory> args{{DNNL_ARG_FROM, mem(m.in ? m.o->plain : m.o->inner, m.from)},
                                         {DNNL_ARG_TO, mem(m.in ? m.o->inner : m.o->plain, m.to)}};
    if (m.o->scratch.get_size() != 0) args.emplace(DNNL_ARG_SCRATCHPAD, mem(m.o->scratch, m.scratch));
    m.o->reorder.execute(st, args);
  }
}

void execute(dnnl::stream& st, const dnnl::primitive& prim, std::unordered_map<int, memory> args,
             const memory::desc& scratch, void* scratch_buf) {
  if (scratch.get_size() != 0) args.emplace(DNNL_ARG_SCRATCHPAD, mem(scratch, scratch_buf));
  prim.execute(st, args);
}

Cache<Forward>& forward_cache() {
  static auto* c = new Cache<Forward>();
  return *c;
}
Cache<Backward>& backward_cache() {
  static auto* c = new Cache<Backward>();
  return *c;
}

}  // namespace

bool onednn_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b, float* y, Device device) {
  if (!usable(g)) return false;
  const std::vector<Slice> sl = slices_of(g);
  const size_t S = sl.size();
  std::vector<std::shared_ptr<const Forward>> f;
  for (const Slice& s : sl) {
    f.push_back(forward_cache().get(key_of(s.g, b ? 1 : 0), [&] { return make_forward(s.g, b != nullptr); }));
    if (!f.back()) return false;
  }
  const int64_t xs = g.C * g.H * g.W, ys = g.O * g.Ho * g.Wo;  // floats per sample
  Call call(device, int64_t(S));
  std::vector<const void*> xb(S), wb(S);
  std::vector<void*> yb(S), scratch(S);
  std::vector<std::vector<Move>> in(S), out(S);
  {
    OpScope scope("onednn_reorder");  // the operands into the primitives' layouts; the weights once per layout
    for (size_t s = 0; s < S; ++s) {
      xb[s] = f[s]->x.same ? nullptr : call.buffer(f[s]->x.inner.get_size());
      add_move(call, in[s], f[s]->x, at(x, sl[s], xs), xb[s], true);
      if (s > 0 && f[s]->w.inner == f[0]->w.inner) {
        wb[s] = wb[0];
      } else {
        wb[s] = f[s]->w.same ? nullptr : call.buffer(f[s]->w.inner.get_size());
        add_move(call, in[s], f[s]->w, w, wb[s], true);
      }
    }
    call.run([&](int64_t s, dnnl::stream& st) { run_moves(st, in[size_t(s)]); });
  }
  {
    OpScope scope("onednn_convolution_forward");
    scope.set_flops(conv_flops(g) + (b ? g.N * g.O * g.Ho * g.Wo : 0));
    for (size_t s = 0; s < S; ++s) {
      yb[s] = f[s]->y.same ? nullptr : call.buffer(f[s]->y.inner.get_size());
      scratch[s] = call.buffer(f[s]->pd.scratchpad_desc().get_size());
      add_move(call, out[s], f[s]->y, yb[s], at(y, sl[s], ys), false);
    }
    call.run([&](int64_t si, dnnl::stream& st) {
      const size_t s = size_t(si);
      const Forward& fs = *f[s];
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, mem(fs.x.inner, where(fs.x, at(x, sl[s], xs), xb[s]))},
                                           {DNNL_ARG_WEIGHTS, mem(fs.w.inner, where(fs.w, w, wb[s]))},
                                           {DNNL_ARG_DST, mem(fs.y.inner, where(fs.y, at(y, sl[s], ys), yb[s]))}};
      if (b) args.emplace(DNNL_ARG_BIAS, mem(fs.b, b));
      execute(st, fs.prim, std::move(args), fs.pd.scratchpad_desc(), scratch[s]);
    });
  }
  if (!f[0]->y.same) {
    OpScope scope("onednn_reorder");  // the result back into glassbox's layout
    call.run([&](int64_t s, dnnl::stream& st) { run_moves(st, out[size_t(s)]); });
  }
  return true;
}

bool onednn_conv_backward(const ConvGeom& g, const float* x, const float* w, const float* gy, float* gx, float* gw,
                          Device device) {
  if (!usable(g)) return false;
  const std::vector<Slice> sl = slices_of(g);
  const size_t S = sl.size();
  std::vector<std::shared_ptr<const Backward>> bw;
  for (const Slice& s : sl) {
    bw.push_back(backward_cache().get(key_of(s.g, 2), [&] { return make_backward(s.g); }));
    if (!bw.back()) return false;
  }
  const int64_t xs = g.C * g.H * g.W, ys = g.O * g.Ho * g.Wo;  // floats per sample
  Call call(device, int64_t(S));
  std::vector<const void*> gyd(S), wd(S), gyw(S), xw(S);
  std::vector<void*> gxb(S), gwb(S), scratch_d(S), scratch_w(S);
  std::vector<std::vector<Move>> in(S), gx_out(S);
  {
    OpScope scope("onednn_reorder");
    for (size_t s = 0; s < S; ++s) {
      const Backward& b = *bw[s];
      const float* gys = at(gy, sl[s], ys);
      if (gx) {
        gyd[s] = b.gy_data.same ? nullptr : call.buffer(b.gy_data.inner.get_size());
        add_move(call, in[s], b.gy_data, gys, gyd[s], true);
        if (s > 0 && b.w_data.inner == bw[0]->w_data.inner) {
          wd[s] = wd[0];
        } else {
          wd[s] = b.w_data.same ? nullptr : call.buffer(b.w_data.inner.get_size());
          add_move(call, in[s], b.w_data, w, wd[s], true);
        }
      }
      if (gw) {
        // one reorder of gy serves both gradients when their kernels read the same layout
        if (gx && b.gy_weights.inner == b.gy_data.inner) {
          gyw[s] = gyd[s];
        } else {
          gyw[s] = b.gy_weights.same ? nullptr : call.buffer(b.gy_weights.inner.get_size());
          add_move(call, in[s], b.gy_weights, gys, gyw[s], true);
        }
        xw[s] = b.x_weights.same ? nullptr : call.buffer(b.x_weights.inner.get_size());
        add_move(call, in[s], b.x_weights, at(x, sl[s], xs), xw[s], true);
      }
    }
    call.run([&](int64_t s, dnnl::stream& st) { run_moves(st, in[size_t(s)]); });
  }
  if (gx) {
    {
      OpScope scope("onednn_convolution_backward_data");
      scope.set_flops(conv_flops(g));
      for (size_t s = 0; s < S; ++s) {
        gxb[s] = bw[s]->gx.same ? nullptr : call.buffer(bw[s]->gx.inner.get_size());
        scratch_d[s] = call.buffer(bw[s]->data_pd.scratchpad_desc().get_size());
        add_move(call, gx_out[s], bw[s]->gx, gxb[s], at(gx, sl[s], xs), false);
      }
      call.run([&](int64_t si, dnnl::stream& st) {
        const size_t s = size_t(si);
        const Backward& b = *bw[s];
        execute(st, b.data,
                {{DNNL_ARG_DIFF_DST, mem(b.gy_data.inner, where(b.gy_data, at(gy, sl[s], ys), gyd[s]))},
                 {DNNL_ARG_WEIGHTS, mem(b.w_data.inner, where(b.w_data, w, wd[s]))},
                 {DNNL_ARG_DIFF_SRC, mem(b.gx.inner, where(b.gx, at(gx, sl[s], xs), gxb[s]))}},
                b.data_pd.scratchpad_desc(), scratch_d[s]);
      });
    }
    if (!bw[0]->gx.same) {
      OpScope scope("onednn_reorder");
      call.run([&](int64_t s, dnnl::stream& st) { run_moves(st, gx_out[size_t(s)]); });
    }
  }
  if (gw) {
    // each slice's weight gradient in the primitive's layout; several are summed below in slice order
    {
      OpScope scope("onednn_convolution_backward_weights");
      scope.set_flops(conv_flops(g));
      for (size_t s = 0; s < S; ++s) {
        gwb[s] = bw[s]->gw.same && S == 1 ? gw : call.buffer(bw[s]->gw.inner.get_size());
        scratch_w[s] = call.buffer(bw[s]->weights_pd.scratchpad_desc().get_size());
      }
      call.run([&](int64_t si, dnnl::stream& st) {
        const size_t s = size_t(si);
        const Backward& b = *bw[s];
        execute(st, b.weights,
                {{DNNL_ARG_DIFF_DST, mem(b.gy_weights.inner, where(b.gy_weights, at(gy, sl[s], ys), gyw[s]))},
                 {DNNL_ARG_SRC, mem(b.x_weights.inner, where(b.x_weights, at(x, sl[s], xs), xw[s]))},
                 {DNNL_ARG_DIFF_WEIGHTS, mem(b.gw.inner, gwb[s])}},
                b.weights_pd.scratchpad_desc(), scratch_w[s]);
      });
    }
    // the slices' partial sums, each in glassbox's layout when the slices' layouts differ (their batch sizes made
    // oneDNN choose differently), added in slice order; then the result back into gw
    std::vector<void*> part(S);
    std::vector<std::vector<Move>> to_plain(S);
    std::vector<Move> back;
    bool one_layout = true;
    for (size_t s = 1; s < S; ++s) one_layout = one_layout && bw[s]->gw.inner == bw[0]->gw.inner;
    const int64_t wn = g.O * g.Cg() * g.kH * g.kW;
    if (S > 1) {
      OpScope scope("onednn_weight_grad_sum");
      for (size_t s = 0; s < S; ++s) {
        part[s] = one_layout ? gwb[s] : bw[s]->gw.same ? gwb[s] : call.buffer(size_t(wn) * sizeof(float));
        if (!one_layout) add_move(call, to_plain[s], bw[s]->gw, gwb[s], part[s], false);
      }
      call.run([&](int64_t s, dnnl::stream& st) { run_moves(st, to_plain[size_t(s)]); });
      if (!call.plan()) {
        float* acc = static_cast<float*>(part[0]);
        const int64_t n = one_layout ? int64_t(bw[0]->gw.inner.get_size() / sizeof(float)) : wn;
        for (size_t s = 1; s < S; ++s) {
          const float* p = static_cast<const float*>(part[s]);
          parallel_for(0, n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) acc[i] += p[i];
          });
        }
        if (!one_layout || bw[0]->gw.same) std::memcpy(gw, acc, size_t(wn) * sizeof(float));
      }
    }
    if (!bw[0]->gw.same && (S == 1 || one_layout)) {
      OpScope scope("onednn_reorder");
      add_move(call, back, bw[0]->gw, gwb[0], gw, false);
      call.run_once([&](dnnl::stream& st) { run_moves(st, back); });  // one reorder: no pool to wake
    }
  }
  return true;
}

#endif

namespace {

// A trace says which convolution library ran (meta onednn: its version, or why not): step times from two builds
// are compared knowing that.
void write_meta() {
#if GLASSBOX_WITH_ONEDNN
  const dnnl_version_t* v = dnnl::version();
  trace::set_meta("onednn", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                                std::to_string(v->patch) + (backends::mkldnn::enabled ? "" : " (disabled)"));
#else
  trace::set_meta("onednn", "off: built without oneDNN (apt-get install libdnnl-dev, then rebuild)");
#endif
}

const bool g_connected = [] {
  trace::add_session_hook(write_meta, nullptr);
  return true;
}();

}  // namespace

}  // namespace detail
}  // namespace gb
