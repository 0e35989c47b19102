// engine/ops/sum.cpp — sum and mean over dims (the reductions autograd itself relies on), and sum_to.
//
// The kernel walks the input in memory order and accumulates into an output viewed with stride 0 on the
// reduced dims, so summing rows and summing columns are both cache-friendly. Accumulation is in float for
// 16-bit floats, double for double, int64 for integers and bools.
#include <algorithm>
#include <utility>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/cpu_isa.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/launch.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "ops/loops.h"
#include "ops/reduce_util.h"

namespace gb {
namespace detail {

std::vector<int64_t> reduced_shape(IntArrayRef sizes, const std::vector<bool>& mask, bool keepdim) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d])
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

Tensor unsqueeze_reduced(const Tensor& g, const std::vector<bool>& mask, bool keepdim) {
  if (keepdim) return g;
  Tensor r = g;
  for (size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) r = r.unsqueeze(int64_t(d));
  return r;
}

namespace {
ScalarType acc_type_for(ScalarType t) {
  if (t == kDouble) return kDouble;
  if (is_floating_point(t)) return kFloat;
  return kInt64;
}
}  // namespace

// ---- a whole contiguous float32 tensor into one float ----
// Blocks of kSumBlock elements, each summed in 32 float lanes folded pairwise (compiled for each instruction set,
// core/cpu_isa.h), the block sums added in double in block order: the same result however the pool splits the
// blocks, and more accurate than one float running sum (PyTorch's CPU sum is a cascade too).
constexpr int64_t kSumBlock = 4096;

GB_ALWAYS_INLINE float sum_lanes(const float* x, int64_t n) {
  float lane[32] = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 32; ++k) lane[k] += x[i + k];
  float tail = 0;
  for (; i < n; ++i) tail += x[i];
  for (int w = 16; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) lane[k] += lane[k + w];
  return lane[0] + tail;
}
GB_ISA_VARIANTS(sum_block, (const float* x, int64_t n, double* out), *out = double(sum_lanes(x, n)))

float sum_all_float(const float* x, int64_t n) {
  auto block = GB_PICK_ISA(sum_block, float);
  const int64_t nb = (n + kSumBlock - 1) / kSumBlock;
  double s = 0;
  if (nb == 1) {
    block(x, n, &s);
    return float(s);
  }
  std::vector<double> parts(size_t(nb), 0.0);
  parallel_for(0, nb, kElementwiseGrain / kSumBlock, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) block(x + i * kSumBlock, std::min(kSumBlock, n - i * kSumBlock), &parts[size_t(i)]);
  });
  for (double p : parts) s += p;
  return float(s);
}

// Columns [c0, c0 + n) of the (rows, ld) matrix x summed into o, compiled per instruction set (core/cpu_isa.h).
template <typename T>
GB_ALWAYS_INLINE void add_rows(const T* __restrict x, int64_t rows, int64_t n, int64_t ld, T* __restrict o) {
  for (int64_t j = 0; j < n; ++j) o[j] = T(0);
  for (int64_t i = 0; i < rows; ++i) {
    const T* __restrict r = x + i * ld;
    for (int64_t j = 0; j < n; ++j) o[j] += r[j];
  }
}
GB_ISA_VARIANTS(add_rows_isa, (const T* x, int64_t rows, int64_t n, int64_t ld, T* o), add_rows<T>(x, rows, n, ld, o))

template <typename T>
void column_sums(const T* x, int64_t rows, int64_t cols, T* out) {
  auto kernel = GB_PICK_ISA(add_rows_isa, T);
  parallel_for(0, cols, std::max<int64_t>(64, kElementwiseGrain / std::max<int64_t>(rows, 1)),
               [&](int64_t c0, int64_t c1) { kernel(x + c0, rows, c1 - c0, cols, out + c0); });
}

// Sums that are the columns of a (rows, cols) matrix in memory: a contiguous float or double tensor summed over its
// leading dims (a bias gradient: (batch, features) over the batch), or any tensor that is contiguous once its dims
// are ordered by stride with the summed ones outermost and the kept ones in their own order (a transpose summed over
// its first dim's partner, x.t().sum(1); a channels-last batch summed over all but its channels). The rows are added
// into the result one after another from zero, the order and rounding of the strided loop below for the contiguous
// case (the same bits), in typed loops the compiler vectorizes; column blocks over the pool when large. Returns an
// undefined tensor when the reduction is not of that form.
Tensor try_leading_sum(const Tensor& a, const std::vector<bool>& mask, bool keepdim, ScalarType out_dtype) {
  if (!a.is_cpu() || a.numel() == 0 || a.scalar_type() != out_dtype || (out_dtype != kFloat && out_dtype != kDouble))
    return Tensor();
  // the dims that move in memory, largest stride first (size-1 dims place nothing); inline storage: no allocation on
  // the per-op path of a bias gradient's sum
  DimVector order;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.size(d) > 1) order.push_back(d);
  for (size_t i = 1; i < order.size(); ++i)  // insertion sort, stable (std::stable_sort may allocate a buffer)
    for (size_t j = i; j > 0 && a.stride(order[j - 1]) < a.stride(order[j]); --j) std::swap(order[j - 1], order[j]);
  int64_t expect = 1, rows = 1, cols = 1, last_kept = -1;
  bool summed_done = false, any_summed = false;
  for (size_t i = order.size(); i-- > 0;) {  // innermost first: contiguous in this order?
    if (a.stride(order[i]) != expect) return Tensor();
    expect *= a.size(order[i]);
  }
  for (int64_t d : order) {  // outermost first: summed dims, then kept dims in their own order
    if (mask[size_t(d)]) {
      if (summed_done) return Tensor();
      any_summed = true;
      rows *= a.size(d);
    } else {
      if (d < last_kept) return Tensor();
      summed_done = true;
      last_kept = d;
      cols *= a.size(d);
    }
  }
  if (!any_summed || !summed_done) return Tensor();  // nothing summed, or everything: the other paths
  Tensor out = make_empty(reduced_shape(a.sizes(), mask, keepdim), out_dtype, a.device());
  if (out_dtype == kFloat)
    column_sums(a.data_ptr<float>(), rows, cols, out.data_ptr<float>());
  else
    column_sums(a.data_ptr<double>(), rows, cols, out.data_ptr<double>());
  return out;
}

// The cpu kernel: a's sums into acc (zeros, of the accumulation type) through acc_view (a's shape, stride 0 along the
// summed dims).
void sum_into(const Tensor& a, const std::vector<bool>& mask, const Tensor& acc, const Tensor& acc_view) {
  const ScalarType acc_t = acc.scalar_type();
  if (acc.numel() == 1 && acc_t == kFloat && a.scalar_type() == kFloat && a.is_contiguous()) {
    *acc.data_ptr<float>() = sum_all_float(a.data_ptr<float>(), a.numel());
  } else {
    dispatch_all(a.scalar_type(), "sum", [&](auto itag) {
      using I = typename decltype(itag)::type;
      dispatch_all(acc_t, "sum", [&](auto atag) {
        using A = typename decltype(atag)::type;
        if constexpr (std::is_same_v<A, float> || std::is_same_v<A, double> || std::is_same_v<A, int64_t>) {
          StridedLoop loop(acc_view, {&a});
          auto body = [](char** p, const int64_t* s, int64_t n) {
            if (s[0] == 0) {
              A lanes[8] = {};
              int64_t i = 0;
              if (s[1] == int64_t(sizeof(I))) {
                const I* x = reinterpret_cast<const I*>(p[1]);
                for (; i + 8 <= n; i += 8)
                  for (int k = 0; k < 8; ++k) lanes[k] += A(opmath_t<I>(x[i + k]));
              }
              A total = 0;
              for (; i < n; ++i) total += A(opmath_t<I>(*reinterpret_cast<const I*>(p[1] + i * s[1])));
              for (int k = 0; k < 8; ++k) total += lanes[k];
              *reinterpret_cast<A*>(p[0]) += total;
            } else if (s[0] == int64_t(sizeof(A)) && s[1] == int64_t(sizeof(I))) {
              // a row of the input into a row of the result (a bias gradient: sum over the batch): typed pointers
              // the compiler vectorizes
              A* o = reinterpret_cast<A*>(p[0]);
              const I* x = reinterpret_cast<const I*>(p[1]);
              for (int64_t i = 0; i < n; ++i) o[i] += A(opmath_t<I>(x[i]));
            } else {
              for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<A*>(p[0] + i * s[0]) += A(opmath_t<I>(*reinterpret_cast<const I*>(p[1] + i * s[1])));
            }
          };
          // Rows of the output are independent when the outermost dim is kept: split the work across them.
          if (!mask.empty() && !mask[0] && a.size(0) > 1 && a.numel() > kElementwiseGrain) {
            int64_t rows = a.size(0);
            parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
              auto rows_of = [&](const Tensor& t) {
                auto sz = t.sizes().vec();
                sz[0] = e - b;
                return make_view(t, sz, t.strides().vec(), t.storage_offset() + b * t.stride(0));
              };
              Tensor in_rows = rows_of(a);
              Tensor out_rows = rows_of(acc_view);
              StridedLoop l(out_rows, {&in_rows});
              l.run(0, l.numel(), body);
            });
          } else {
            loop.run(0, loop.numel(), body);
          }
        }
      });
    });
  }
}

// The cpu and meta half: the accumulator (meta stops at the allocations), then the kernel.
Tensor sum_cpu(const Tensor& a, const std::vector<bool>& mask, bool keepdim, ScalarType out_dtype) {
  ScalarType acc_t = acc_type_for(out_dtype);
  // The result is allocated in its final shape (never a reshaped view: a gradient that is a view keeps its base
  // alive, and AccumulateGrad must copy it instead of taking its buffer). A reduced dim has stride 0 in the
  // accumulator's view; a contiguous result has the same strides for the others with or without its size-1 dims.
  Tensor acc = zeros(reduced_shape(a.sizes(), mask, keepdim), TensorOptions().dtype(acc_t).device(a.device()));
  std::vector<int64_t> vstrides(mask.size(), 0);
  for (int64_t d = int64_t(mask.size()) - 1, stride = 1; d >= 0; --d) {
    if (mask[size_t(d)]) continue;
    vstrides[size_t(d)] = stride;
    stride *= a.size(d);
  }
  Tensor acc_view = make_view(acc, a.sizes().vec(), vstrides, 0);
  if (a.numel() > 0) run_cpu_kernel("sum", acc, [&] { sum_into(a, mask, acc, acc_view); });
  return acc_t == out_dtype ? acc : acc.to(out_dtype);
}

Tensor sum_kernel(const Tensor& a, const std::vector<bool>& mask, bool keepdim, ScalarType out_dtype) {
  if (Tensor out = try_leading_sum(a, mask, keepdim, out_dtype); out.defined()) {
    op_output(out);
    return out;
  }
  check_device(a, "sum");
  Tensor out = run_op(
      a.device(), [&] { return sum_cpu(a, mask, keepdim, out_dtype); },
      [&] {  // accumulated in the input's accumulation type (cuda/kernels.h), then converted
        Tensor acc = cuda_reduce(a, mask, keepdim, cuda_kernels::ReduceOp::sum);
        return acc.scalar_type() == out_dtype ? acc : acc.to(out_dtype);
      });
  op_output(out);  // the result of the op that called (sum, mean): the kernel opens no scope of its own
  return out;
}

}  // namespace detail

namespace {
ScalarType sum_dtype(const Tensor& a, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_floating_point(a.scalar_type()) ? a.scalar_type() : kInt64;
}
}  // namespace

Tensor sum(const Tensor& a, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  if (!dtype) GB_AUTOCAST(fp32, sum, a, dims, keepdim, dtype);
  detail::OpScope op_scope("sum", {a});
  detail::check_defined(a, "sum");
  auto mask = detail::dim_mask(dims, a.dim(), "sum");
  Tensor out;
  {
    NoGradGuard ng;
    out = detail::sum_kernel(a, mask, keepdim, sum_dtype(a, dtype));
  }
  if (autograd::needs_grad(a))
    autograd::record(dims.empty() ? "SumBackward0" : "SumBackward1", {a}, out, {},
                     [s = DimVector(a.sizes()), mask, keepdim](autograd::BackwardContext& c) {
                       return variable_list{detail::unsqueeze_reduced(c.grad(), mask, keepdim).expand(s)};
                     });
  return out;
}

Tensor sum(const Tensor& a, std::optional<ScalarType> dtype) { return sum(a, IntArrayRef{}, false, dtype); }

Tensor mean(const Tensor& a, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  detail::OpScope op_scope("mean", {a});
  detail::check_defined(a, "mean");
  ScalarType t = dtype.value_or(a.scalar_type());
  GB_CHECK_TYPE(is_floating_point(t),
                "mean(): could not infer output dtype. Input dtype must be either a floating point ",
                "or complex dtype. Got: ", to_string(t), ". Convert first (x.to(gb::kFloat)) or pass dtype.");
  auto mask = detail::dim_mask(dims, a.dim(), "mean");
  int64_t count = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (mask[d]) count *= a.size(d);
  Tensor out;
  {
    NoGradGuard ng;
    out = detail::sum_kernel(a, mask, keepdim, t);
    if (count != 1) out = out.div_(double(count));
  }
  if (autograd::needs_grad(a))
    autograd::record(
        dims.empty() ? "MeanBackward0" : "MeanBackward1", {a}, out, {},
        [s = DimVector(a.sizes()), mask, keepdim, count](autograd::BackwardContext& c) {
          return variable_list{detail::unsqueeze_reduced(c.grad() / double(count), mask, keepdim).expand(s)};
        });
  return out;
}

Tensor mean(const Tensor& a, std::optional<ScalarType> dtype) { return mean(a, IntArrayRef{}, false, dtype); }

Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes() == shape) return g;
  int64_t lead = g.dim() - int64_t(shape.size());
  GB_ASSERT(lead >= 0, "sum_to: cannot reduce ", g.sizes(), " to ", shape);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && g.size(lead + int64_t(i)) != 1) dims.push_back(lead + int64_t(i));
  Tensor r = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  if (lead > 0 || r.sizes() != shape) r = r.reshape(shape);
  return r;
}

}  // namespace gb
