// engine/ops/conv_onednn.cpp — conv2d's float32 kernels on oneDNN (see conv_onednn.h), and
// gb::backends::mkldnn::is_available. Without oneDNN in the build both kernels decline and conv.cpp computes.
#include "ops/conv_onednn.h"

#include <string>

#include "glassbox/core/mkldnn.h"
#include "instrument/probe.h"

#if GLASSBOX_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include <array>
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

// One operand's way between glassbox's layout and the primitive's: a reorder, built once, unless they agree.
struct Operand {
  memory::desc plain, inner;
  bool same = true;
  dnnl::reorder reorder;
};

Operand operand_in(const memory::desc& plain, const memory::desc& inner) {
  Operand o{plain, inner, plain == inner, {}};
  if (!o.same) o.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plain, cpu_engine(), inner));
  return o;
}

Operand operand_out(const memory::desc& inner, const memory::desc& plain) {
  Operand o{plain, inner, plain == inner, {}};
  if (!o.same) o.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), inner, cpu_engine(), plain));
  return o;
}

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

// One call's stream and buffers: the buffers are caching-allocator tensors on the operands' device, kept alive until
// the call returns and named by the op span open while they are made. On meta the buffers are made, nothing runs.
class Call {
 public:
  explicit Call(Device device) : device_(device), plan_(device.is_meta()), stream_(cpu_engine()) {
    if (!plan_) size_team();
  }

  void* buffer(size_t bytes) {
    keep_.push_back(make_empty({static_cast<int64_t>(bytes)}, kByte, device_));
    return keep_.back().data_ptr();
  }
  // `data` in the layout the primitive reads: itself when the layouts agree, else a reordered copy.
  memory in(const Operand& o, const float* data) {
    if (o.same) return plain(o, data);
    OpScope scope("onednn_reorder");
    void* buf = buffer(o.inner.get_size());
    if (plan_) return memory();
    memory inner(o.inner, cpu_engine(), buf);
    memory src = plain(o, data);
    o.reorder.execute(stream_, src, inner);
    return inner;
  }
  // Where the primitive writes a result that ends in `data`: `data` itself when the layouts agree.
  memory out(const Operand& o, float* data) {
    if (o.same) return plain(o, data);
    void* buf = buffer(o.inner.get_size());
    return plan_ ? memory() : memory(o.inner, cpu_engine(), buf);
  }
  // The result back into `data`, reordered when the layouts differ.
  void back(const Operand& o, memory inner, float* data) {
    if (o.same) return;
    OpScope scope("onednn_reorder");
    if (plan_) return;
    memory dst = plain(o, data);
    o.reorder.execute(stream_, inner, dst);
  }
  void run(const dnnl::primitive& prim, const memory::desc& scratch, std::unordered_map<int, memory> args) {
    if (scratch.get_size() == 0) {
      if (!plan_) prim.execute(stream_, args);
      return;
    }
    void* buf = buffer(scratch.get_size());
    if (plan_) return;
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratch, cpu_engine(), buf));
    prim.execute(stream_, args);
  }
  // One primitive under an op span `name` with its FLOPs: its output made (in `out_op`'s layout), the primitive run on
  // `args` and the output, the output reordered back into `out_data`.
  void step(const char* name, int64_t flops, const dnnl::primitive& prim, const memory::desc& scratch,
            std::unordered_map<int, memory> args, int out_arg, const Operand& out_op, float* out_data) {
    memory result;
    {
      OpScope scope(name);
      scope.set_flops(flops);
      result = out(out_op, out_data);
      args.emplace(out_arg, result);
      run(prim, scratch, std::move(args));
    }
    back(out_op, result, out_data);
  }
  // A plain operand (meta: none, it is never read).
  memory plain(const Operand& o, const float* data) const {
    return plan_ ? memory() : memory(o.plain, cpu_engine(), const_cast<float*>(data));
  }

 private:
  Device device_;
  bool plan_;
  dnnl::stream stream_;
  std::vector<Tensor> keep_;
};

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
  const auto f = forward_cache().get(key_of(g, b ? 1 : 0), [&] { return make_forward(g, b != nullptr); });
  if (!f) return false;
  Call call(device);
  const memory xm = call.in(f->x, x), wm = call.in(f->w, w);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}};
  if (b && !device.is_meta()) args.emplace(DNNL_ARG_BIAS, memory(f->b, cpu_engine(), const_cast<float*>(b)));
  call.step("onednn_convolution_forward", conv_flops(g) + (b ? g.N * g.O * g.Ho * g.Wo : 0), f->prim,
            f->pd.scratchpad_desc(), std::move(args), DNNL_ARG_DST, f->y, y);
  return true;
}

bool onednn_conv_backward(const ConvGeom& g, const float* x, const float* w, const float* gy, float* gx, float* gw,
                          Device device) {
  if (!usable(g)) return false;
  const auto b = backward_cache().get(key_of(g, 2), [&] { return make_backward(g); });
  if (!b) return false;
  Call call(device);
  memory gy_data;
  if (gx) {
    gy_data = call.in(b->gy_data, gy);
    const memory wm = call.in(b->w_data, w);
    call.step("onednn_convolution_backward_data", conv_flops(g), b->data, b->data_pd.scratchpad_desc(),
              {{DNNL_ARG_DIFF_DST, gy_data}, {DNNL_ARG_WEIGHTS, wm}}, DNNL_ARG_DIFF_SRC, b->gx, gx);
  }
  if (gw) {
    // one reorder of gy serves both gradients when their kernels read the same layout
    const memory gym = gx && b->gy_weights.inner == b->gy_data.inner ? gy_data : call.in(b->gy_weights, gy);
    const memory xm = call.in(b->x_weights, x);
    call.step("onednn_convolution_backward_weights", conv_flops(g), b->weights, b->weights_pd.scratchpad_desc(),
              {{DNNL_ARG_DIFF_DST, gym}, {DNNL_ARG_SRC, xm}}, DNNL_ARG_DIFF_WEIGHTS, b->gw, gw);
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
