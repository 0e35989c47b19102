// engine/ops/reduce.cpp — the reductions besides sum/mean (sum.cpp): max/min (all and over a dim), amax/amin,
// argmax/argmin, var/std/var_mean, norm, logsumexp, all/any, prod. Each op's backward sits under its forward.
//
// The kernels run on one driver and a set of reducers (ops/reduce_kernels.h).
// The exp loops vectorize only when GCC may if-convert float compares (clang does so by default).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <cmath>
#include <limits>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/composed.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/launch.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "ops/inplace.h"
#include "ops/loops.h"
#include "ops/reduce_kernels.h"
#include "ops/reduce_util.h"
#include "ops/vec_math.h"

namespace gb {
using namespace detail;  // the driver and reducers of reduce_kernels.h
namespace {

// ---- shared pieces ----

std::vector<bool> all_dims(int64_t ndim) { return std::vector<bool>(size_t(ndim), true); }

std::vector<int64_t> masked_dims(const std::vector<bool>& mask) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) dims.push_back(int64_t(d));
  return dims;
}

int64_t reduced_count(const Tensor& a, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (mask[d]) n *= a.size(d);
  return n;
}

// max/min/amax/argmax have no identity: an empty reduction is an error, in PyTorch's words.
void check_nonempty(const Tensor& a, const std::vector<bool>& mask, bool dims_given, const char* op) {
  if (!dims_given || a.dim() == 0) {
    GB_CHECK_INDEX(a.numel() > 0, op, "(): Expected reduction dim to be specified for input.numel() == 0. Specify the ",
                   "reduction dim with the 'dim' argument (input shape ", a.sizes(), ").");
    return;
  }
  for (int64_t d = 0; d < a.dim(); ++d)
    GB_CHECK_INDEX(!mask[d] || a.size(d) > 0, op, "(): Expected reduction dim ", d,
                   " to have non-zero size (input shape ", a.sizes(), "); reduce over a non-empty dim instead.");
}

void check_floating(const Tensor& a, const char* op) {
  GB_CHECK_TYPE(is_floating_point(a.scalar_type()), op, ": std and var only support floating point and complex dtypes",
                " (got ", to_string(a.scalar_type()), "); convert first, e.g. x.to(gb::kFloat)");
}

// The values and/or indices of the max (or min) over the masked dims.
// The composed path (core/composed.h: cuda) of arg_extreme_kernel: over one dim, or over all of them flattened. The
// extreme by amax/amin, then the first position holding it (NaN is the extreme where there is one, as on the cpu).
void composed_arg_extreme(const Tensor& a, const std::vector<bool>& mask, bool is_max, const Tensor& values,
                          const Tensor& indices) {
  NoGradGuard ng;
  const std::vector<int64_t> dims = masked_dims(mask);
  const bool flat = dims.size() != 1 || a.dim() == 0;
  const Tensor x = flat ? a.reshape({-1}) : a;
  const int64_t d = flat ? 0 : dims[0], n = x.size(d);
  Tensor hit, m;
  if (x.is_floating_point()) {
    const Tensor nan = isnan(x);
    const Tensor any_nan = gt(nan.to(kInt64).sum({d}, true), 0);
    m = where(any_nan, std::numeric_limits<double>::quiet_NaN(), is_max ? amax(x, {d}, true) : amin(x, {d}, true));
    hit = where(any_nan, nan, eq(x, m));
  } else {
    m = is_max ? amax(x, {d}, true) : amin(x, {d}, true);
    hit = eq(x, m);
  }
  std::vector<int64_t> along(size_t(x.dim()), 1);
  along[size_t(d)] = n;
  const Tensor pos = arange(n, TensorOptions().dtype(kInt64).device(x.device())).view(along);
  if (indices.defined()) detail::copy_into(indices, amin(where(hit, pos, n), {d}, true).reshape(indices.sizes()));
  if (values.defined()) detail::copy_into(values, m.to(values.scalar_type()).reshape(values.sizes()));
}

void arg_extreme_kernel(const Tensor& a, const std::vector<bool>& mask, bool is_max, const Tensor& values,
                        const Tensor& indices, const char* op) {
  if (detail::composed_path(a)) return composed_arg_extreme(a, mask, is_max, values, indices);
  Layout l = make_layout(a, mask);
  int64_t* ip = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
  detail::dispatch_all(a.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* vp = values.defined() ? values.data_ptr<T>() : nullptr;
    if (is_max)
      run_reduce(a, l, ArgExtreme<T, true>{vp, ip});
    else
      run_reduce(a, l, ArgExtreme<T, false>{vp, ip});
  });
}

Tensor extreme_kernel(const Tensor& a, const std::vector<bool>& mask, bool keepdim, bool is_max, const char* op) {
  return detail::run_op(
      a.device(),
      [&] {
        Tensor out = detail::make_empty(detail::reduced_shape(a.sizes(), mask, keepdim), a.scalar_type(), a.device());
        Layout l = make_layout(a, mask);
        detail::run_cpu_kernel(op, out, [&] {
          detail::dispatch_all(a.scalar_type(), op, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if (is_max)
              run_reduce(a, l, Extreme<T, true>{out.data_ptr<T>()});
            else
              run_reduce(a, l, Extreme<T, false>{out.data_ptr<T>()});
          });
        });
        return out;
      },
      [&] {  // reduced in opmath (exact for every dtype: max of values is one of them), stored back as a's
        Tensor r =
            detail::cuda_reduce(a, mask, keepdim, is_max ? cuda_kernels::ReduceOp::max : cuda_kernels::ReduceOp::min);
        return r.scalar_type() == a.scalar_type() ? r : r.to(a.scalar_type());
      });
}

// A tensor of `sizes` that is 1 where idx (the keepdim-shaped indices along dim) points and 0 elsewhere. On the
// composed path (cuda) the positions along dim compared with idx, on the device; else written on the host.
Tensor index_mask(IntArrayRef sizes, int64_t dim, const Tensor& idx, ScalarType dtype) {
  if (detail::composed_path(idx)) {
    NoGradGuard ng;
    std::vector<int64_t> along(sizes.size(), 1);
    along[size_t(dim)] = sizes[size_t(dim)];
    const Tensor positions = arange(sizes[size_t(dim)], TensorOptions().dtype(kInt64).device(idx.device()));
    return eq(positions.view(along), idx).to(dtype).expand(sizes).contiguous();
  }
  Tensor out = zeros(sizes, TensorOptions().dtype(dtype).device(idx.device()));
  Tensor ic = idx.contiguous();
  detail::run_cpu_kernel("max_backward", out, [&] {
    const int64_t* ip = ic.data_ptr<int64_t>();
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < int64_t(sizes.size()); ++d) {
      if (d < dim)
        outer *= sizes[d];
      else if (d == dim)
        n = sizes[d];
      else
        inner *= sizes[d];
    }
    detail::dispatch_floating(dtype, "max_backward", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* op = out.data_ptr<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) op[(o * n + ip[o * inner + j]) * inner + j] = T(1.0f);
    });
  });
  return out;
}

// ---- max / min over all elements ----

Tensor extreme_all(const Tensor& a, bool is_max) {
  const char* op = is_max ? "max" : "min";
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op);
  auto mask = all_dims(a.dim());
  check_nonempty(a, mask, false, op);
  Tensor out = extreme_kernel(a, mask, false, is_max, op);
  op_scope.set_output(out);
  // The gradient is split evenly among the elements equal to the result (PyTorch's evenly_distribute_backward).
  if (autograd::needs_grad(a))
    autograd::record(is_max ? "MaxBackward1" : "MinBackward1", {a}, out, {autograd::input(a), autograd::output(out)},
                     [](autograd::BackwardContext& c) {
                       const Tensor& x = c.saved(0);
                       const Tensor& r = c.saved(1);
                       Tensor hit =
                           where(isnan(r), isnan(x), eq(x, r)).to(c.grad().scalar_type());  // no item(): runs on meta
                       return variable_list{hit * (c.grad() / hit.sum())};
                     });
  return out;
}

// ---- max / min over one dim: (values, indices) ----

std::tuple<Tensor, Tensor> extreme_dim(const Tensor& a, int64_t dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "max" : "min";
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op);
  int64_t d = detail::wrap_dim(dim, a.dim(), op);
  auto mask = detail::dim_mask({d}, a.dim(), op);
  check_nonempty(a, mask, true, op);
  auto shape = detail::reduced_shape(a.sizes(), mask, keepdim);
  Tensor values = detail::make_empty(shape, a.scalar_type(), a.device());
  Tensor indices = detail::make_empty(shape, kInt64, a.device());
  arg_extreme_kernel(a, mask, is_max, values, indices, op);
  op_scope.set_output(values);
  // The gradient flows to the index picked.
  if (autograd::needs_grad(a))
    autograd::record(is_max ? "MaxBackward0" : "MinBackward0", autograd::collect_edges({a}), {&values},
                     {autograd::output(indices)},
                     [s = a.sizes().vec(), d, mask, keepdim](autograd::BackwardContext& c) {
                       Tensor idx = detail::unsqueeze_reduced(c.saved(0), mask, keepdim);
                       Tensor g = detail::unsqueeze_reduced(c.grad(), mask, keepdim);
                       return variable_list{g * index_mask(s, d, idx, g.scalar_type())};
                     });
  return {values, indices};
}

// ---- amax / amin ----

Tensor amax_impl(const Tensor& a, IntArrayRef dims, bool keepdim, bool is_max) {
  const char* op = is_max ? "amax" : "amin";
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op);
  auto mask = detail::dim_mask(dims, a.dim(), op);
  check_nonempty(a, mask, !dims.empty(), op);
  Tensor out = extreme_kernel(a, mask, keepdim, is_max, op);
  op_scope.set_output(out);
  // The gradient is split evenly among ties.
  if (autograd::needs_grad(a))
    autograd::record(is_max ? "AmaxBackward0" : "AminBackward0", {a}, out, {autograd::input(a), autograd::output(out)},
                     [mask, keepdim](autograd::BackwardContext& c) {
                       const Tensor& x = c.saved(0);
                       Tensor r = detail::unsqueeze_reduced(c.saved(1), mask, keepdim);
                       Tensor g = detail::unsqueeze_reduced(c.grad(), mask, keepdim);
                       Tensor hit = eq(x, r).to(g.scalar_type());
                       return variable_list{(g / hit.sum(masked_dims(mask), true)) * hit};
                     });
  return out;
}

// ---- argmax / argmin ----

Tensor arg_impl(const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "argmax" : "argmin";
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op);
  std::vector<bool> mask;
  if (dim)
    mask = detail::dim_mask({detail::wrap_dim(*dim, a.dim(), op)}, a.dim(), op);
  else
    mask = all_dims(a.dim());
  check_nonempty(a, mask, dim.has_value(), op);
  Tensor indices = detail::make_empty(detail::reduced_shape(a.sizes(), mask, keepdim), kInt64, a.device());
  arg_extreme_kernel(a, mask, is_max, Tensor(), indices, op);
  op_scope.set_output(indices);
  return indices;
}

// ---- var / std / var_mean ----

struct VarSetup {
  std::vector<bool> mask;
  int64_t n;
  double divisor;  // max(0, n - correction), like PyTorch: 0 gives inf or NaN
};

VarSetup var_setup(const Tensor& a, IntArrayRef dims, int64_t correction, const char* op) {
  detail::check_device(a, op);
  check_floating(a, op);
  VarSetup s;
  s.mask = detail::dim_mask(dims, a.dim(), op);
  s.n = reduced_count(a, s.mask);
  s.divisor = double(std::max<int64_t>(0, s.n - correction));
  return s;
}

void moments_kernel(const Tensor& a, const VarSetup& s, bool take_sqrt, const Tensor& var, const Tensor& mean,
                    const char* op) {
  if (detail::composed_path(a)) {  // two passes as the cpu's: the mean, then the squared deviations from it
    NoGradGuard ng;
    const std::vector<int64_t> dims = masked_dims(s.mask);
    const Tensor m = a.mean(dims, true);
    const Tensor dev = a - m;
    Tensor v = (dev * dev).sum(dims, true) / s.divisor;
    if (take_sqrt) v = v.sqrt();
    if (var.defined()) detail::copy_into(var, v.reshape(var.sizes()));
    if (mean.defined()) detail::copy_into(mean, m.reshape(mean.sizes()));
    return;
  }
  Layout l = make_layout(a, s.mask);
  detail::dispatch_floating(a.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce(a, l,
               Moments<T>{var.defined() ? var.data_ptr<T>() : nullptr, mean.defined() ? mean.data_ptr<T>() : nullptr,
                          s.divisor, take_sqrt});
  });
}

// d var / dx = 2 (x - mean) / (n - correction), with g already unsqueezed to broadcast against x.
Tensor var_backward(const Tensor& g, const Tensor& x, const std::vector<bool>& mask, double divisor) {
  return g * (x - x.mean(masked_dims(mask), true)) * (2.0 / divisor);
}

}  // namespace

Tensor max(const Tensor& a) { return extreme_all(a, true); }
Tensor min(const Tensor& a) { return extreme_all(a, false); }
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_dim(a, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_dim(a, dim, keepdim, false);
}
Tensor amax(const Tensor& a, IntArrayRef dims, bool keepdim) { return amax_impl(a, dims, keepdim, true); }
Tensor amin(const Tensor& a, IntArrayRef dims, bool keepdim) { return amax_impl(a, dims, keepdim, false); }
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return arg_impl(a, dim, keepdim, true); }
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return arg_impl(a, dim, keepdim, false); }

Tensor var(const Tensor& a, IntArrayRef dims, int64_t correction, bool keepdim) {
  detail::OpScope op_scope("var", {a});
  VarSetup s = var_setup(a, dims, correction, "var");
  Tensor out = detail::make_empty(detail::reduced_shape(a.sizes(), s.mask, keepdim), a.scalar_type(), a.device());
  moments_kernel(a, s, false, out, Tensor(), "var");
  op_scope.set_output(out);
  if (autograd::needs_grad(a))
    autograd::record("VarBackward0", {a}, out, {autograd::input(a)},
                     [mask = s.mask, div = s.divisor, keepdim](autograd::BackwardContext& c) {
                       Tensor g = detail::unsqueeze_reduced(c.grad(), mask, keepdim);
                       return variable_list{var_backward(g, c.saved(0), mask, div)};
                     });
  return out;
}

Tensor std(const Tensor& a, IntArrayRef dims, int64_t correction, bool keepdim) {
  detail::OpScope op_scope("std", {a});
  VarSetup s = var_setup(a, dims, correction, "std");
  Tensor out = detail::make_empty(detail::reduced_shape(a.sizes(), s.mask, keepdim), a.scalar_type(), a.device());
  moments_kernel(a, s, true, out, Tensor(), "std");
  op_scope.set_output(out);
  // d std = d var / (2 std), taken as 0 where std is 0 (PyTorch's std_backward).
  if (autograd::needs_grad(a))
    autograd::record(
        "StdBackward0", {a}, out, {autograd::input(a), autograd::output(out)},
        [mask = s.mask, div = s.divisor, keepdim](autograd::BackwardContext& c) {
          const Tensor& r = c.saved(1);
          Tensor gv = masked_fill(c.grad() / (r * 2.0), r == 0.0, 0.0);
          return variable_list{var_backward(detail::unsqueeze_reduced(gv, mask, keepdim), c.saved(0), mask, div)};
        });
  return out;
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& a, IntArrayRef dims, int64_t correction, bool keepdim) {
  detail::OpScope op_scope("var_mean", {a});
  VarSetup s = var_setup(a, dims, correction, "var_mean");
  auto shape = detail::reduced_shape(a.sizes(), s.mask, keepdim);
  Tensor v = detail::make_empty(shape, a.scalar_type(), a.device());
  Tensor m = detail::make_empty(shape, a.scalar_type(), a.device());
  moments_kernel(a, s, false, v, m, "var_mean");
  op_scope.set_output(v);
  if (autograd::needs_grad(a))
    autograd::record(
        "VarMeanBackward0", autograd::collect_edges({a}), {&v, &m}, {autograd::input(a)},
        [mask = s.mask, div = s.divisor, n = s.n, keepdim, sizes = a.sizes().vec()](autograd::BackwardContext& c) {
          Tensor gi;
          if (c.grad(0).defined())
            gi = var_backward(detail::unsqueeze_reduced(c.grad(0), mask, keepdim), c.saved(0), mask, div);
          if (c.grad(1).defined()) {
            Tensor gm = detail::unsqueeze_reduced(c.grad(1) / double(n), mask, keepdim).expand(sizes);
            gi = gi.defined() ? gi + gm : gm;
          }
          return variable_list{gi};
        });
  return {v, m};
}

// ---- norm ----

Tensor norm(const Tensor& a, const Scalar& p, IntArrayRef dims, bool keepdim) {
  GB_AUTOCAST(fp32, norm, a, p, dims, keepdim);
  detail::OpScope op_scope("norm", {a});
  detail::check_device(a, "norm");
  GB_CHECK_TYPE(is_floating_point(a.scalar_type()), "linalg.vector_norm: Expected a floating point or complex tensor ",
                "as input. Got ", to_string(a.scalar_type()), "; convert first, e.g. x.to(gb::kFloat)");
  const double pv = p.to_double();
  GB_CHECK(!(pv < 0) || std::isinf(pv), "norm: p = ", pv, " is not supported; use p > 0, 0, inf or -inf");
  GB_CHECK(!std::isnan(pv), "norm: p must be a number, got NaN");
  auto mask = detail::dim_mask(dims, a.dim(), "norm");
  GB_CHECK_INDEX(!std::isinf(pv) || reduced_count(a, mask) > 0, "linalg.vector_norm cannot compute the ", pv,
                 " norm on an empty tensor because the operation does not have an identity (input shape ", a.sizes(),
                 ")");
  NormKind kind = pv == 0          ? NormKind::zero
                  : pv == 1        ? NormKind::one
                  : pv == 2        ? NormKind::two
                  : std::isinf(pv) ? (pv > 0 ? NormKind::inf : NormKind::neg_inf)
                                   : NormKind::p;
  Tensor out = detail::make_empty(detail::reduced_shape(a.sizes(), mask, keepdim), a.scalar_type(), a.device());
  if (detail::composed_path(a)) {  // accumulated in float64, as the cpu's wide accumulators
    NoGradGuard ng;
    const std::vector<int64_t> d = masked_dims(mask);
    const Tensor x = a.to(kDouble), ax = abs(x);
    Tensor r;
    switch (kind) {
      case NormKind::zero:
        r = ne(x, 0).to(kDouble).sum(d, true);
        break;
      case NormKind::one:
        r = ax.sum(d, true);
        break;
      case NormKind::two:
        r = (x * x).sum(d, true).sqrt();
        break;
      case NormKind::inf:
        r = amax(ax, d, true);
        break;
      case NormKind::neg_inf:
        r = amin(ax, d, true);
        break;
      case NormKind::p:
        r = ax.pow(pv).sum(d, true).pow(1.0 / pv);
        break;
    }
    detail::copy_into(out, r.to(out.scalar_type()).reshape(out.sizes()));
  } else {
  Layout l = make_layout(a, mask);
  detail::dispatch_floating(a.scalar_type(), "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = wide_t<T>;
    T* o = out.data_ptr<T>();
    switch (kind) {
      case NormKind::zero:
        run_reduce(a, l, Norm<T, NormKind::zero>{o, A(pv)});
        break;
      case NormKind::one:
        run_reduce(a, l, Norm<T, NormKind::one>{o, A(pv)});
        break;
      case NormKind::two:
        run_reduce(a, l, Norm<T, NormKind::two>{o, A(pv)});
        break;
      case NormKind::inf:
        run_reduce(a, l, Norm<T, NormKind::inf>{o, A(pv)});
        break;
      case NormKind::neg_inf:
        run_reduce(a, l, Norm<T, NormKind::neg_inf>{o, A(pv)});
        break;
      case NormKind::p:
        run_reduce(a, l, Norm<T, NormKind::p>{o, A(pv)});
        break;
    }
  });
  }
  op_scope.set_output(out);
  // PyTorch's norm_backward; where the norm is 0 the gradient is taken as 0.
  if (autograd::needs_grad(a))
    autograd::record(dims.empty() ? "NormBackward0" : "NormBackward1", {a}, out,
                     {autograd::input(a), autograd::output(out)}, [pv, mask, keepdim](autograd::BackwardContext& c) {
                       const Tensor& x = c.saved(0);
                       Tensor r = detail::unsqueeze_reduced(c.saved(1), mask, keepdim);
                       Tensor g = detail::unsqueeze_reduced(c.grad(), mask, keepdim);
                       Tensor gi;
                       if (pv == 0) {
                         gi = zeros_like(x);
                       } else if (pv == 1) {
                         gi = sign(x) * g;
                       } else if (pv == 2) {
                         gi = x * masked_fill(g / r, r == 0.0, 0.0);
                       } else if (std::isinf(pv)) {
                         Tensor hit = eq(abs(x), r).to(g.scalar_type());
                         gi = sign(x) * (g / hit.sum(masked_dims(mask), true)) * hit;
                       } else {
                         Tensor scale = masked_fill(g / r.pow(pv - 1), r == 0.0, 0.0);
                         gi = pv < 2 ? sign(x) * abs(x).pow(pv - 1) * scale : x * abs(x).pow(pv - 2) * scale;
                       }
                       return variable_list{gi};
                     });
  return out;
}

// ---- logsumexp ----

Tensor logsumexp(const Tensor& a, IntArrayRef dims, bool keepdim) {
  GB_AUTOCAST(fp32, logsumexp, a, dims, keepdim);
  detail::OpScope op_scope("logsumexp", {a});
  detail::check_device(a, "logsumexp");
  auto mask = detail::dim_mask(dims, a.dim(), "logsumexp");
  // Integers and bools are computed in the default float dtype, like PyTorch.
  Tensor x = is_floating_point(a.scalar_type()) ? a : a.to(get_default_dtype());
  Tensor out = detail::make_empty(detail::reduced_shape(x.sizes(), mask, keepdim), x.scalar_type(), x.device());
  if (detail::composed_path(x)) {  // PyTorch's composition: the max (0 where it is infinite) taken out of the sum
    NoGradGuard ng;
    const std::vector<int64_t> d = masked_dims(mask);
    Tensor m = amax(x, d, true);
    m = m.masked_fill(eq(abs(m), INFINITY), 0);
    detail::copy_into(out, (log(exp(x - m).sum(d, true)) + m).reshape(out.sizes()));
  } else {
    Layout l = make_layout(x, mask);
    detail::dispatch_floating(x.scalar_type(), "logsumexp", [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_reduce(x, l, LogSumExp<T>{out.data_ptr<T>()});
    });
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(x))
    autograd::record("LogsumexpBackward0", {x}, out, {autograd::input(x), autograd::output(out)},
                     [mask, keepdim](autograd::BackwardContext& c) {
                       Tensor r = detail::unsqueeze_reduced(c.saved(1), mask, keepdim);
                       Tensor g = detail::unsqueeze_reduced(c.grad(), mask, keepdim);
                       return variable_list{g * exp(c.saved(0) - r)};
                     });
  return out;
}

// ---- all / any / prod ----

namespace {
template <bool kAll>
Tensor logical_reduce(const Tensor& a, const char* op) {
  detail::OpScope op_scope(op, {a});
  detail::check_device(a, op);
  if (detail::composed_path(a)) {  // a count of the zeros (all) or of the non-zeros (any), on the device
    NoGradGuard ng;
    Tensor out = kAll ? eq(eq(a, 0).to(kInt64).sum(), 0) : gt(ne(a, 0).to(kInt64).sum(), 0);
    op_scope.set_output(out);
    return out;
  }
  auto mask = all_dims(a.dim());
  Tensor out = detail::make_empty({}, kBool, a.device());
  Layout l = make_layout(a, mask);
  detail::dispatch_all(a.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce(a, l, Logical<T, kAll>{out.data_ptr<bool>()});
  });
  op_scope.set_output(out);
  return out;
}
}  // namespace

Tensor all(const Tensor& a) { return logical_reduce<true>(a, "all"); }
Tensor any(const Tensor& a) { return logical_reduce<false>(a, "any"); }

namespace {
// The product over the masked dims (int64 for integers and bool, as sum).
Tensor prod_kernel(const Tensor& a, const std::vector<bool>& mask, bool keepdim) {
  ScalarType ot = is_floating_point(a.scalar_type()) ? a.scalar_type() : kInt64;
  return detail::run_op(
      a.device(),
      [&] {
        Tensor out = detail::make_empty(detail::reduced_shape(a.sizes(), mask, keepdim), ot, a.device());
        Layout l = make_layout(a, mask);
        detail::run_cpu_kernel("prod", out, [&] {
          detail::dispatch_all(a.scalar_type(), "prod", [&](auto tag) {
            using T = typename decltype(tag)::type;
            run_reduce(a, l, Prod<T>{out.data_ptr<typename Prod<T>::Out>()});
          });
        });
        return out;
      },
      [&] {  // the row reduction's product (float accumulation for the 16-bit floats and float32)
        Tensor r = detail::cuda_reduce(a, mask, keepdim, cuda_kernels::ReduceOp::prod);
        return r.scalar_type() == ot ? r : r.to(ot);
      });
}
}  // namespace

Tensor prod(const Tensor& a) {
  GB_AUTOCAST(fp32, prod, a);
  detail::OpScope op_scope("prod", {a});
  detail::check_device(a, "prod");
  Tensor out = prod_kernel(a, all_dims(a.dim()), false);
  op_scope.set_output(out);
  // d prod / dx_i = the product of the others: result / x_i without zeros; with one zero only that element gets
  // a gradient (the product of the rest, computed differentiably); with two or more every first derivative is 0.
  if (autograd::needs_grad(a))
    autograd::record("ProdBackward0", {a}, out, {autograd::input(a), autograd::output(out)},
                     [](autograd::BackwardContext& c) {
                       const Tensor& x = c.saved(0);
                       const Tensor& g = c.grad();
                       Tensor zero = x == 0.0;
                       int64_t zeros_n = zero.sum().item<int64_t>();
                       if (zeros_n == 0) return variable_list{g * (c.saved(1) / x)};
                       if (zeros_n > 1) return variable_list{zeros_like(x)};
                       Tensor others = prod(where(zero, 1.0, x));
                       return variable_list{g * where(zero, others, 0.0)};
                     });
  return out;
}

Tensor prod(const Tensor& a, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (dtype && *dtype != a.scalar_type()) return prod(a.to(*dtype), dim, keepdim);  // converted first, as PyTorch
  GB_AUTOCAST(fp32, prod, a, dim, keepdim, dtype);
  detail::OpScope op_scope("prod", {a});
  detail::check_device(a, "prod");
  const int64_t d = a.dim() == 0 ? 0 : detail::wrap_dim(dim, a.dim(), "prod");
  auto mask = a.dim() == 0 ? std::vector<bool>{} : detail::dim_mask({d}, a.dim(), "prod");
  Tensor out = prod_kernel(a, mask, keepdim);
  op_scope.set_output(out);
  // As the full prod's, slice by slice: no zero in the slice, out / x; one zero, that element gets the product of
  // the others; two or more, every first derivative is 0.
  if (autograd::needs_grad(a))
    autograd::record("ProdBackward1", {a}, out, {autograd::input(a), autograd::output(out)},
                     [mask, keepdim, d](autograd::BackwardContext& c) {
                       const Tensor& x = c.saved(0);
                       if (x.dim() == 0) return variable_list{c.grad()};
                       Tensor result = detail::unsqueeze_reduced(c.saved(1), mask, keepdim);
                       Tensor g = detail::unsqueeze_reduced(c.grad(), mask, keepdim);
                       Tensor zero = x == 0.0;
                       Tensor zeros_n = zero.sum({d}, true);
                       Tensor safe = where(zero, 1.0, x);
                       Tensor others = prod(safe, d, true);  // the nonzero elements' product
                       Tensor local = where(zeros_n == 0, result / safe,
                                            where(logical_and(zeros_n == 1, zero), others, 0.0));
                       return variable_list{g * local};
                     });
  return out;
}

}  // namespace gb
