// engine/ops/loss.cpp — nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, kl_div.
//
// nll_loss is a raw gather with weights; its backward (a scatter) and that backward's backward (nll_loss again)
// record each other, so it is differentiable to any order. cross_entropy is composed as PyTorch composes it:
// log_softmax + nll_loss, plus PyTorch's label-smoothing terms, or the class-probability formula. The pointwise
// losses compute forward with raw loops and record one node with a differentiable gb-op backward. kl_div is
// composed of gb ops, as PyTorch 1.13 composes it (its gradients are those of the composition).
// Weights (class weights, pos_weight) receive gradients only in binary_cross_entropy_with_logits, as in PyTorch.
#include <cmath>
#include <memory>
#include <vector>

#include "amp/autocast_hook.h"
#include "autograd/record.h"
#include "core/composed.h"
#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "cuda/ops.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "ops/log_softmax_onehot.h"
#include "ops/loops.h"
#include "ops/nn_util.h"

namespace gb {
namespace {

Tensor reduce_loss(const Tensor& t, Reduction r) {
  switch (r) {
    case Reduction::None:
      return t;
    case Reduction::Mean:
      return t.mean();
    case Reduction::Sum:
      return t.sum();
  }
  return t;
}

// ---- nll_loss ----

// Where each target points in the (B, C, S) input and with what weight; fixed by target, weight, ignore_index.
struct NllPlan {
  std::vector<int64_t> pos;                  // offset of input[b, target, s] in a contiguous input, -1 when ignored
  std::vector<double> w;                     // weight[target] (0 when ignored)
  std::vector<int64_t> in_shape, out_shape;  // out_shape: the target's shape (used for Reduction::None)
  Reduction red;
  double total_weight = 0;  // sum of w: the divisor of the mean
};

Tensor nll_scatter(const Tensor& g, const std::shared_ptr<const NllPlan>& plan);
Tensor nll_target_grads(const Tensor& g, const std::shared_ptr<const NllPlan>& plan);

// loss_i = -w_i * x[pos_i], reduced. Runs inside an nll_loss scope (nll_loss's, or its own in double backward).
// compact_backward: x is cross_entropy's log-probabilities, whose LogSoftmaxBackward0 takes the target entries alone
// (log_softmax_onehot.h); sent so unless backward records a graph.
Tensor nll_gather(const Tensor& x, const std::shared_ptr<const NllPlan>& plan, bool compact_backward = false) {
  const ScalarType ct = detail::compute_type(x.scalar_type());
  Tensor xc = detail::raw_contiguous(x, ct);
  const int64_t n = int64_t(plan->pos.size());
  Tensor out =
      detail::make_empty(plan->red == Reduction::None ? IntArrayRef(plan->out_shape) : IntArrayRef{}, ct, x.device());
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* xp = xc.data_ptr<T>();
    T* op = out.data_ptr<T>();
    double acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = plan->pos[i] < 0 ? 0.0 : -plan->w[i] * double(xp[plan->pos[i]]);
      if (plan->red == Reduction::None)
        op[i] = T(v);
      else
        acc += v;
    }
    if (plan->red == Reduction::Sum) op[0] = T(acc);
    if (plan->red == Reduction::Mean) op[0] = T(acc / plan->total_weight);  // all ignored: 0/0 = nan, as PyTorch
  };
  detail::run_cpu_kernel("nll_loss", out, [&] { ct == kDouble ? run(double{}) : run(float{}); });
  if (ct != x.scalar_type()) out = out.to(x.scalar_type());
  detail::op_output(out);
  if (autograd::needs_grad(x))
    autograd::record(plan->in_shape.size() >= 3 ? "NllLoss2DBackward0" : "NllLossBackward0", {x}, out, {},
                     [plan, compact_backward](autograd::BackwardContext& c) {
                       if (compact_backward && !GradMode::is_enabled())
                         return variable_list{nll_target_grads(c.grad(), plan)};
                       return variable_list{nll_scatter(c.grad(), plan)};
                     });
  return out;
}

// The adjoint's nonzero entries, -w_i * g_i (g a scalar for Sum, g / total_weight for Mean), each written to
// out[at(i)] in the compute type (ignored targets skipped). g is gc, contiguous in that type.
template <typename At>
void nll_adjoint(const Tensor& gc, const NllPlan& plan, Tensor& out, At at) {
  const int64_t n = int64_t(plan.pos.size());
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* gp = gc.data_ptr<T>();
    T* op = out.data_ptr<T>();
    const double scale = plan.red == Reduction::Mean ? 1.0 / plan.total_weight : 1.0;
    for (int64_t i = 0; i < n; ++i) {
      if (plan.pos[i] < 0) continue;
      const double gi = plan.red == Reduction::None ? double(gp[i]) : double(gp[0]) * scale;
      op[at(i)] = T(-plan.w[i] * gi);
    }
  };
  detail::run_cpu_kernel("nll_loss_backward", out,
                         [&] { out.scalar_type() == kDouble ? run(double{}) : run(float{}); });
}

// The compact form of the adjoint (log_softmax_onehot.h): row i's target entry, 0 where ignored; not differentiable
// (sent only when backward records no graph).
Tensor nll_target_grads(const Tensor& g, const std::shared_ptr<const NllPlan>& plan) {
  detail::OpScope op_scope("nll_loss_backward", {g});  // runs in backward
  const ScalarType ct = detail::compute_type(g.scalar_type());
  Tensor gc = detail::raw_contiguous(g, ct);
  Tensor gt = zeros({int64_t(plan->pos.size())}, TensorOptions().dtype(ct).device(g.device()));
  nll_adjoint(gc, *plan, gt, [](int64_t i) { return i; });
  if (ct != g.scalar_type()) gt = gt.to(g.scalar_type());
  op_scope.set_output(gt);
  return gt;
}

// The adjoint: gx[pos_i] = -w_i * g_i (g a scalar for Sum, g / total_weight for Mean).
Tensor nll_scatter(const Tensor& g, const std::shared_ptr<const NllPlan>& plan) {
  detail::OpScope op_scope("nll_loss_backward", {g});  // runs in backward
  const ScalarType ct = detail::compute_type(g.scalar_type());
  Tensor gc = detail::raw_contiguous(g, ct);
  Tensor gx = zeros(plan->in_shape, TensorOptions().dtype(ct).device(g.device()));
  nll_adjoint(gc, *plan, gx, [&](int64_t i) { return plan->pos[i]; });
  if (ct != g.scalar_type()) gx = gx.to(g.scalar_type());
  op_scope.set_output(gx);
  if (autograd::needs_grad(g))
    autograd::record("NllLossBackwardBackward0", {g}, gx, {}, [plan](autograd::BackwardContext& c) {
      detail::OpScope op_scope("nll_loss", {c.grad()});
      return variable_list{nll_gather(c.grad(), plan)};
    });
  return gx;
}

// Checks input/target/weight the way PyTorch does (on any device; the CPU plan and the CUDA form check their own).
void check_nll(const Tensor& input, const Tensor& target, const Tensor& weight, const char* op) {
  detail::check_defined(input, op);
  detail::check_defined(target, op, "target");
  detail::check_device(input, op);
  detail::check_device(target, op, "target", input);
  GB_CHECK(input.dim() >= 1, op, ": input tensor should be 1D or more (C), (N, C) or (N, C, d1, ...), but got ",
           input.sizes());
  GB_CHECK(input.is_floating_point(), op, ": expected a floating-point input, but got ",
           to_string(input.scalar_type()));
  GB_CHECK_TYPE(target.scalar_type() == kInt64, op,
                ": expected target of scalar type Long (int64 class indices) but found ",
                detail::torch_type_name(target.scalar_type()), ". Convert it with target.to(gb::kInt64).");
  if (input.dim() <= 2) {
    GB_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported (input ", input.sizes(),
             ", target ", target.sizes(), ")");
    const int64_t in_batch = input.dim() == 1 ? 1 : input.size(0);
    const int64_t t_batch = target.dim() == 0 ? 1 : target.size(0);
    GB_CHECK(in_batch == t_batch && (input.dim() == 2 || target.dim() == 0), "Expected input batch_size (", in_batch,
             ") to match target batch_size (", t_batch, ").");
  } else {
    GB_CHECK(target.dim() == input.dim() - 1 && target.size(0) == input.size(0), "Expected input batch_size (",
             input.size(0), ") to match target batch_size (", target.dim() ? target.size(0) : 1, ").");
    std::vector<int64_t> want{input.size(0)};
    for (int64_t d = 2; d < input.dim(); ++d) want.push_back(input.size(d));
    GB_CHECK(target.sizes() == IntArrayRef(want), "Expected target size ", IntArrayRef(want), ", got ", target.sizes());
  }
  const int64_t C = input.dim() == 1 ? input.size(0) : input.size(1);
  if (weight.defined()) {
    detail::check_device(weight, op, "weight", input);
    GB_CHECK(weight.numel() == C, "weight tensor should be defined either for all ", C,
             " classes or no classes but got weight tensor of shape: ", weight.sizes());
  }
}

// Works out where every target points (cpu and meta: the targets are read on the host).
std::shared_ptr<NllPlan> nll_plan(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction red,
                                  int64_t ignore_index, const char* op) {
  check_nll(input, target, weight, op);
  detail::check_cpu_meta_device(input, op);
  const int64_t C = input.dim() == 1 ? input.size(0) : input.size(1);
  auto plan = std::make_shared<NllPlan>();
  plan->in_shape = input.sizes().vec();
  plan->out_shape = target.sizes().vec();
  plan->red = red;
  const int64_t B = input.dim() == 1 ? 1 : input.size(0);
  const int64_t S = input.dim() <= 2 ? 1 : input.numel() / std::max<int64_t>(B * C, 1);
  Tensor tc = detail::raw_contiguous(target, kInt64);
  // meta: targets and weights have no values; plan as if every target were class 0 with weight 1 (the plan steers
  // values only, never which tensors are made)
  const bool meta = !detail::has_memory(tc);
  const int64_t* tp = meta ? nullptr : tc.data_ptr<int64_t>();
  std::vector<double> wv;
  if (weight.defined())
    wv = [&] {
      Tensor wc = detail::raw_contiguous(weight, kDouble);
      if (meta) return std::vector<double>(size_t(C), 1.0);
      return std::vector<double>(wc.data_ptr<double>(), wc.data_ptr<double>() + C);
    }();
  const int64_t n = B * S;
  plan->pos.resize(size_t(n));
  plan->w.resize(size_t(n));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t i = b * S + s, t = meta ? 0 : tp[i];
      if (t == ignore_index) {
        plan->pos[i] = -1;
        plan->w[i] = 0;
        continue;
      }
      GB_CHECK_INDEX(t >= 0 && t < C, "Target ", t, " is out of bounds.");
      plan->pos[i] = (b * C + t) * S + s;
      plan->w[i] = wv.empty() ? 1.0 : wv[size_t(t)];
      plan->total_weight += plan->w[i];
    }
  return plan;
}

// A tensor of target's shape, dtype dt: 1 where target != ignore_index, else 0.
Tensor keep_mask(const Tensor& target, int64_t ignore_index, ScalarType dt) {
  return detail::run_op(
      target.device(),
      [&] {
        Tensor tc = detail::raw_contiguous(target, kInt64);
        Tensor m = detail::make_empty(target.sizes(), kDouble, target.device());
        detail::run_cpu_kernel("cross_entropy", m, [&] {
          const int64_t* tp = tc.data_ptr<int64_t>();
          double* mp = m.data_ptr<double>();
          for (int64_t i = 0; i < m.numel(); ++i) mp[i] = tp[i] == ignore_index ? 0.0 : 1.0;
        });
        return m.to(dt);
      },
      [&] { return ne(target, ignore_index).to(dt); });
}

}  // namespace

// On cuda:N the same two functions on the device (cuda/loss.cu): the targets stay there and are checked there (a bad
// one is raised at the next synchronization, cuda/device_error.h); the mean's divisor is a device scalar.
namespace {

struct NllCudaPlan : cuda_ops::NllTargets {  // target (int64, contiguous, B * S), weight (the compute dtype), B, C, S
  Tensor total_weight;  // 0-dim, the compute dtype: set by the first gather (the divisor of the mean)
  std::vector<int64_t> in_shape, out_shape;
  Reduction red = Reduction::Mean;
  ScalarType ct = kFloat;
};

std::shared_ptr<NllCudaPlan> nll_cuda_plan(const Tensor& input, const Tensor& target, const Tensor& weight,
                                           Reduction red, int64_t ignore_index, const char* op) {
  check_nll(input, target, weight, op);
  auto plan = std::make_shared<NllCudaPlan>();
  plan->ct = detail::compute_type(input.scalar_type());
  plan->in_shape = input.sizes().vec();
  plan->out_shape = target.sizes().vec();
  plan->red = red;
  plan->ignore_index = ignore_index;
  plan->C = input.dim() == 1 ? input.size(0) : input.size(1);
  plan->B = input.dim() == 1 ? 1 : input.size(0);
  plan->S = input.dim() <= 2 ? 1 : input.numel() / std::max<int64_t>(plan->B * plan->C, 1);
  plan->target = detail::shallow_alias(target).reshape({-1}).contiguous();
  if (weight.defined()) plan->weight = detail::shallow_alias(weight).to(plan->ct).contiguous();
  return plan;
}

Tensor nll_scatter_cuda(const Tensor& g, const std::shared_ptr<NllCudaPlan>& plan, bool compact = false);

// The per-position losses -w_t * x[b, t, s] of the target's shape, in the compute dtype, no autograd; the plan's
// total weight on first use.
Tensor nll_positions_cuda(const Tensor& x, NllCudaPlan& plan) {
  NoGradGuard ng;
  Tensor xc = detail::shallow_alias(x).to(plan.ct).contiguous();
  Tensor loss = detail::make_empty(plan.out_shape, plan.ct, x.device());
  Tensor w = empty({plan.B * plan.S}, TensorOptions().dtype(plan.ct).device(x.device()));
  cuda_ops::nll_forward(plan, xc, loss, w);
  if (!plan.total_weight.defined()) plan.total_weight = w.sum();
  return loss;
}

// nll_gather on the device. Runs inside an nll_loss scope. compact_backward: as nll_gather's.
Tensor nll_gather_cuda(const Tensor& x, const std::shared_ptr<NllCudaPlan>& plan, bool compact_backward = false) {
  Tensor out;
  {
    NoGradGuard ng;
    Tensor loss = nll_positions_cuda(x, *plan);
    out = plan->red == Reduction::None ? loss
          : plan->red == Reduction::Sum ? loss.sum()
                                        : loss.sum() / plan->total_weight;  // all ignored: 0/0 = nan, as PyTorch
    if (out.scalar_type() != x.scalar_type()) out = out.to(x.scalar_type());
  }
  detail::op_output(out);
  if (autograd::needs_grad(x))
    autograd::record(plan->in_shape.size() >= 3 ? "NllLoss2DBackward0" : "NllLossBackward0", {x}, out, {},
                     [plan, compact_backward](autograd::BackwardContext& c) {
                       const bool compact = compact_backward && !GradMode::is_enabled();
                       return variable_list{nll_scatter_cuda(c.grad(), plan, compact)};
                     });
  return out;
}

// nll_scatter on the device: the zeroed gradient gets -w * g (g / total_weight for the mean) at each target; compact:
// the n target entries alone, not differentiable (nll_target_grads' form).
Tensor nll_scatter_cuda(const Tensor& g, const std::shared_ptr<NllCudaPlan>& plan, bool compact) {
  detail::OpScope op_scope("nll_loss_backward", {g});  // runs in backward
  Tensor gx;
  {
    NoGradGuard ng;
    Tensor gc = detail::shallow_alias(g).to(plan->ct).contiguous();
    gx = compact ? zeros({plan->B * plan->S}, TensorOptions().dtype(plan->ct).device(g.device()))
                 : zeros(plan->in_shape, TensorOptions().dtype(plan->ct).device(g.device()));
    cuda_ops::nll_backward(*plan, gc, plan->red != Reduction::None,
                           plan->red == Reduction::Mean ? plan->total_weight : Tensor(), gx, compact);
    if (gx.scalar_type() != g.scalar_type()) gx = gx.to(g.scalar_type());
  }
  op_scope.set_output(gx);
  if (autograd::needs_grad(g) && !compact)
    autograd::record("NllLossBackwardBackward0", {g}, gx, {}, [plan](autograd::BackwardContext& c) {
      detail::OpScope op_scope("nll_loss", {c.grad()});
      return variable_list{nll_gather_cuda(c.grad(), plan)};
    });
  return gx;
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                int64_t ignore_index) {
  GB_AUTOCAST(fp32, nll_loss, input, target, weight, reduction, ignore_index);
  detail::OpScope op_scope("nll_loss", {input, target, weight});
  detail::check_defined(input, "nll_loss");
  return detail::run_op(
      input.device(),
      [&] { return nll_gather(input, nll_plan(input, target, weight, reduction, ignore_index, "nll_loss")); },
      [&] {
        return nll_gather_cuda(input, nll_cuda_plan(input, target, weight, reduction, ignore_index, "nll_loss"));
      });
}

// ---- cross_entropy ----

namespace {

// log_softmax, then nll_loss (or the class-probability form) and label smoothing: each part records its own node.
Tensor cross_entropy_parts(const Tensor& logits, const Tensor& target, const Tensor& weight, Reduction reduction,
                           int64_t ignore_index, double label_smoothing) {
  const char* op = "cross_entropy";
  detail::check_defined(logits, op);
  detail::check_defined(target, op, "target");
  GB_CHECK(logits.dim() >= 1, op, ": expected logits of shape (C), (N, C) or (N, C, d1, ...), but got ",
           logits.sizes());
  GB_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
           "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  const int64_t class_dim = logits.dim() == 1 ? 0 : 1;
  const int64_t C = logits.size(class_dim);
  // weight broadcast against logits: (C) for 1-D and 2-D logits, (1, C, 1, ...) beyond
  Tensor w_b;
  if (weight.defined()) {
    GB_CHECK(weight.numel() == C, "weight tensor should be defined either for all ", C,
             " classes or no classes but got weight tensor of shape: ", weight.sizes());
    std::vector<int64_t> shape(size_t(std::max<int64_t>(logits.dim() - class_dim, 1)), 1);
    shape[0] = C;
    w_b = weight.reshape(shape);
  }
  const bool class_probabilities = logits.sizes() == target.sizes() && target.dim() > 0;
  if (!class_probabilities && label_smoothing <= 0 && detail::onehot_backward_applies(logits) && target.defined()) {
    // the usual classifier head: nll_loss's backward hands its gradient over compactly (log_softmax_onehot.h)
    auto onehot = std::make_shared<detail::OneHotTargets>();
    Tensor lp = detail::log_softmax_onehot(logits, onehot);
    detail::OpScope nll_scope("nll_loss", {lp, target, weight});
    return detail::run_op(
        lp.device(),
        [&] {  // the targets' columns on the host
          auto plan = nll_plan(lp, target, weight, reduction, ignore_index, "nll_loss");
          onehot->cols.resize(plan->pos.size());
          for (size_t i = 0; i < plan->pos.size(); ++i)
            onehot->cols[i] = plan->pos[i] < 0 ? -1 : plan->pos[i] - int64_t(i) * C;
          return nll_gather(lp, plan, /*compact_backward=*/true);
        },
        [&] {  // the targets stay on the device
          auto plan = nll_cuda_plan(lp, target, weight, reduction, ignore_index, "nll_loss");
          onehot->target = plan->target;
          return nll_gather_cuda(lp, plan, /*compact_backward=*/true);
        });
  }
  Tensor lp = log_softmax(logits, class_dim);

  if (class_probabilities) {
    GB_CHECK_TYPE(target.is_floating_point(), "Expected floating point type for target with class probabilities, got ",
                  detail::torch_type_name(target.scalar_type()));
    GB_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    Tensor t = label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / double(C) : target;
    Tensor terms = w_b.defined() ? lp * t * w_b : lp * t;
    switch (reduction) {
      case Reduction::Mean:
        return terms.sum() * (-double(C) / double(logits.numel()));
      case Reduction::Sum:
        return terms.sum() * -1.0;
      case Reduction::None:
        return terms.sum({class_dim}) * -1.0;
    }
  }

  Tensor nll = nll_loss(lp, target, weight, reduction, ignore_index);
  if (label_smoothing <= 0) return nll;
  // PyTorch's smoothing term: -sum_c log p_c (weighted), zero at ignored targets; its mean divides by the weight of
  // the non-ignored targets when there are weights, and by the number of targets (ignored included) otherwise.
  Tensor smooth = (w_b.defined() ? lp * w_b : lp).sum({class_dim}) * -1.0;
  Tensor keep = keep_mask(target, ignore_index, smooth.scalar_type());
  smooth = smooth * keep;
  Tensor ret;
  switch (reduction) {
    case Reduction::Mean:
      if (w_b.defined()) {
        ret = detail::run_op(
            lp.device(),
            [&] { return smooth.sum() / nll_plan(lp, target, weight, Reduction::Sum, ignore_index, op)->total_weight; },
            [&] {
              auto plan = nll_cuda_plan(lp, target, weight, Reduction::Sum, ignore_index, op);
              nll_positions_cuda(lp, *plan);  // the plan's total weight, on the device
              return smooth.sum() / plan->total_weight;
            });
      } else {
        ret = smooth.mean();
      }
      break;
    case Reduction::Sum:
      ret = smooth.sum();
      break;
    case Reduction::None:
      ret = smooth;
      break;
  }
  return nll * (1 - label_smoothing) + ret * (label_smoothing / double(C));
}

}  // namespace

Tensor cross_entropy_loss(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t reduction,
                          int64_t ignore_index, double label_smoothing) {
  GB_CHECK(reduction >= 0 && reduction <= 2, "cross_entropy_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), but got ",
           reduction);
  const Reduction r = reduction == 0 ? Reduction::None : reduction == 1 ? Reduction::Mean : Reduction::Sum;
  return cross_entropy(logits, target, weight, r, ignore_index, label_smoothing);
}
Tensor cross_entropy_loss(const Tensor& logits, const Tensor& target, const Tensor& weight, Reduction reduction,
                          int64_t ignore_index, double label_smoothing) {
  return cross_entropy(logits, target, weight, reduction, ignore_index, label_smoothing);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, Reduction reduction,
                     int64_t ignore_index, double label_smoothing) {
  GB_AUTOCAST(fp32, cross_entropy, logits, target, weight, reduction, ignore_index, label_smoothing);
  detail::OpScope op_scope("cross_entropy", {logits, target, weight});
  Tensor out = cross_entropy_parts(logits, target, weight, reduction, ignore_index, label_smoothing);
  op_scope.set_output(out);
  return out;
}

// ---- mse_loss, l1_loss ----

namespace {

// on_cuda: the loss computes through diff_map, which has a cuda path.
void check_pointwise_loss(const Tensor& input, const Tensor& target, const char* op, bool on_cuda = false) {
  detail::check_defined(input, op);
  detail::check_defined(target, op, "target");
  if (on_cuda) {
    detail::check_device(input, op);
    detail::check_device(target, op, "target", input);
  } else {
    detail::check_cpu_meta_device(input, op);
    detail::check_cpu_meta_device(target, op, "target", input);
  }
  GB_CHECK(input.is_floating_point() && target.is_floating_point(), op,
           ": expected floating-point input and target, but got ", to_string(input.scalar_type()), " and ",
           to_string(target.scalar_type()));
}

// f(input - target) elementwise over the broadcast shape, in the promoted dtype, without autograd. On the composed
// path (cuda), tf(d) of the tensor d = input - target in the compute dtype, made of the pointwise kernels.
template <typename F, typename TF>
Tensor diff_map(const Tensor& input, const Tensor& target, const char* op, const F& f, const TF& tf) {
  ScalarType dt = result_type(input, target);
  if (detail::composed_path(input)) {
    NoGradGuard ng;
    const ScalarType ct = detail::compute_type(dt);
    Tensor r = tf(input.to(ct) - target.to(ct));
    return r.scalar_type() == dt ? r : r.to(dt);
  }
  auto shape = broadcast_shapes(input.sizes(), target.sizes(), op);
  Tensor a = detail::shallow_alias(input), b = detail::shallow_alias(target);
  if (a.scalar_type() != dt) a = a.to(dt);
  if (b.scalar_type() != dt) b = b.to(dt);
  Tensor out = detail::make_empty(shape, dt, input.device());
  detail::dispatch_floating(dt, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    detail::binary_loop<T, T, T>(out, a, b, [&](T x, T y) { return T(f(M(x) - M(y))); });
  });
  return out;
}

// The gradient of a pointwise loss, dL/d(input - target) = g * dl (dl in the broadcast shape), split into input's
// and target's gradients.
variable_list pointwise_loss_grads(autograd::BackwardContext& c, const Tensor& dl, Reduction red, int64_t n,
                                   const std::vector<int64_t>& in_shape, const std::vector<int64_t>& t_shape) {
  Tensor g = red == Reduction::Mean ? c.grad() / double(n) : c.grad();
  Tensor gd = g * dl;
  return {c.needs(0) ? sum_to(gd, in_shape) : Tensor(), c.needs(1) ? sum_to(gd * -1.0, t_shape) : Tensor()};
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  GB_AUTOCAST(fp32, mse_loss, input, target, reduction);
  detail::OpScope op_scope("mse_loss", {input, target});
  check_pointwise_loss(input, target, "mse_loss", true);
  Tensor out;
  {
    NoGradGuard ng;
    out = reduce_loss(
        diff_map(input, target, "mse_loss", [](auto d) { return d * d; }, [](const Tensor& d) { return d * d; }),
        reduction);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(input, target)) {
    int64_t n = detail::numel_of(broadcast_shapes(input.sizes(), target.sizes(), "mse_loss"));
    autograd::record("MseLossBackward0", {input, target}, out, {autograd::input(input), autograd::input(target)},
                     [reduction, n, is = input.sizes().vec(), ts = target.sizes().vec()](autograd::BackwardContext& c) {
                       Tensor d = (c.saved(0) - c.saved(1)) * 2.0;
                       return pointwise_loss_grads(c, d, reduction, n, is, ts);
                     });
  }
  return out;
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  GB_AUTOCAST(fp32, l1_loss, input, target, reduction);
  detail::OpScope op_scope("l1_loss", {input, target});
  check_pointwise_loss(input, target, "l1_loss", true);
  Tensor out;
  {
    NoGradGuard ng;
    out = reduce_loss(diff_map(
                          input, target, "l1_loss", [](auto d) { return d < 0 ? -d : d; },
                          [](const Tensor& d) { return abs(d); }),
                      reduction);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(input, target)) {
    int64_t n = detail::numel_of(broadcast_shapes(input.sizes(), target.sizes(), "l1_loss"));
    autograd::record("L1LossBackward0", {input, target}, out, {autograd::input(input), autograd::input(target)},
                     [reduction, n, is = input.sizes().vec(), ts = target.sizes().vec()](autograd::BackwardContext& c) {
                       // sign(input - target): piecewise constant, so a constant here is exact at any order
                       Tensor s = diff_map(
                           c.saved(0), c.saved(1), "l1_loss",
                           [](auto d) { return decltype(d)(d > 0 ? 1 : d < 0 ? -1 : 0); },
                           [](const Tensor& d) { return sign(d); });
                       return pointwise_loss_grads(c, s, reduction, n, is, ts);
                     });
  }
  return out;
}

// ---- smooth_l1_loss, huber_loss ----

namespace {

// The quadratic-near-zero losses: with d = input - target and threshold th (beta, delta),
//   smooth_l1: |d| < th ? 0.5 d^2 / th : |d| - 0.5 th        huber: |d| < th ? 0.5 d^2 : th (|d| - 0.5 th)
// (huber = th * smooth_l1). Their derivative in d is d / th (d) inside, sign(d) (th sign(d)) outside.
Tensor quadratic_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double th, bool huber,
                         const char* op, const char* node) {
  check_pointwise_loss(input, target, op, true);
  Tensor out;
  {
    NoGradGuard ng;
    out = reduce_loss(diff_map(
                          input, target, op,
                          [th, huber](auto d) {
                            using M = decltype(d);
                            const M a = d < 0 ? -d : d, t = M(th);
                            if (huber) return a < t ? M(0.5) * d * d : t * (a - M(0.5) * t);
                            return a < t ? M(0.5) * d * d / t : a - M(0.5) * t;
                          },
                          [th, huber](const Tensor& d) {
                            const Tensor a = abs(d), sq = d * d * 0.5;
                            return huber ? where(a < th, sq, (a - 0.5 * th) * th) : where(a < th, sq / th, a - 0.5 * th);
                          }),
                      reduction);
  }
  detail::op_output(out);
  if (autograd::needs_grad(input, target)) {
    int64_t n = detail::numel_of(broadcast_shapes(input.sizes(), target.sizes(), op));
    autograd::record(node, {input, target}, out, {autograd::input(input), autograd::input(target)},
                     [reduction, n, th, huber, is = input.sizes().vec(),
                      ts = target.sizes().vec()](autograd::BackwardContext& c) {
                       // differentiable in d inside the threshold (second derivative 1/th or 1), constant outside
                       Tensor d = c.saved(0) - c.saved(1);
                       Tensor inside = d.abs() < th;
                       Tensor dl = huber ? where(inside, d, d.sign() * th) : where(inside, d / th, d.sign());
                       return pointwise_loss_grads(c, dl, reduction, n, is, ts);
                     });
  }
  return out;
}

}  // namespace

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  GB_AUTOCAST(fp32, smooth_l1_loss, input, target, reduction, beta);
  detail::OpScope op_scope("smooth_l1_loss", {input, target});
  GB_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta. Got beta=", beta,
           "; pass beta >= 0 (beta = 0 is l1_loss).");
  if (beta == 0) return l1_loss(input, target, reduction);  // as PyTorch: L1LossBackward0
  return quadratic_l1_loss(input, target, reduction, beta, false, "smooth_l1_loss", "SmoothL1LossBackward0");
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  GB_AUTOCAST(fp32, huber_loss, input, target, reduction, delta);
  detail::OpScope op_scope("huber_loss", {input, target});
  GB_CHECK(delta > 0, "huber_loss does not support non-positive values for delta. Got delta=", delta,
           "; pass delta > 0.");
  return quadratic_l1_loss(input, target, reduction, delta, true, "huber_loss", "HuberLossBackward0");
}

// ---- binary_cross_entropy ----

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  GB_AUTOCAST(fp32, binary_cross_entropy, input, target, weight, reduction);
  const char* op = "binary_cross_entropy";
  detail::OpScope op_scope(op, {input, target, weight});
  check_pointwise_loss(input, target, op, true);
  GB_CHECK(input.sizes() == target.sizes(), "Using a target size (", target.sizes(),
           ") that is different to the input size (", input.sizes(),
           ") is deprecated. Please ensure they have the same size.");
  const ScalarType dt = result_type(input, target);
  const ScalarType ct = detail::compute_type(dt);
  auto shape = input.sizes().vec();
  if (weight.defined()) {
    detail::check_device(weight, op, "weight", input);
    GB_CHECK(broadcast_shapes(shape, weight.sizes(), op) == shape, op, ": weight of shape ", weight.sizes(),
             " does not broadcast to the input's shape ", input.sizes(),
             "; give one weight per element, or a shape that expands to the input's");
  }
  // loss = -w (t max(log x, -100) + (1 - t) max(log(1 - x), -100)), PyTorch's clamp keeping log(0) finite
  Tensor out;
  {
    NoGradGuard ng;
    auto full = [&](const Tensor& t) { return detail::raw_contiguous(t.expand(shape), ct); };
    Tensor x = full(input), t = full(target), w = weight.defined() ? full(weight) : Tensor();
    Tensor l = detail::make_empty(shape, ct, input.device());
    auto run = [&](auto zero) {
      using T = decltype(zero);
      const T *xp = x.data_ptr<T>(), *tp = t.data_ptr<T>();
      const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
      T* lp = l.data_ptr<T>();
      for (int64_t i = 0; i < l.numel(); ++i) {
        const T xi = xp[i], ti = tp[i];
        GB_CHECK(xi >= T(0) && xi <= T(1), "all elements of input should be between 0 and 1 (found ", double(xi),
                 "). binary_cross_entropy takes probabilities: apply sigmoid first, or pass the logits to "
                 "binary_cross_entropy_with_logits, which is also more stable.");
        const T v = (ti - T(1)) * std::max(T(std::log1p(-xi)), T(-100)) - ti * std::max(T(std::log(xi)), T(-100));
        lp[i] = wp ? v * wp[i] : v;
      }
    };
    if (detail::composed_path(x)) {  // the same formula from the pointwise kernels; the range check reads back
      GB_CHECK(!logical_or(lt(x, 0), gt(x, 1)).any().item<bool>(),
               "all elements of input should be between 0 and 1. binary_cross_entropy takes probabilities: apply "
               "sigmoid first, or pass the logits to binary_cross_entropy_with_logits, which is also more stable.");
      l = (t - 1.0) * clamp(log1p(-x), -100.0, std::nullopt) - t * clamp(log(x), -100.0, std::nullopt);
      if (w.defined()) l = l * w;
    } else {
      detail::run_cpu_kernel(op, l, [&] { ct == kDouble ? run(double{}) : run(float{}); });
    }
    out = reduce_loss(l, reduction);
    if (out.scalar_type() != dt) out = out.to(dt);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(input, target)) {
    const int64_t n = input.numel();
    autograd::record("BinaryCrossEntropyBackward0", {input, target}, out,
                     {autograd::input(input), autograd::input(target), autograd::input(weight)},
                     [reduction, n](autograd::BackwardContext& c) {
                       const Tensor &x = c.saved(0), &t = c.saved(1), &w = c.saved(2);
                       Tensor g = reduction == Reduction::Mean ? c.grad() / double(n) : c.grad();
                       if (w.defined()) g = g * w;
                       Tensor gx, gt;
                       // d/dx = (x - t) / max(x (1 - x), 1e-12); d/dt = max(log(1 - x), -100) - max(log x, -100)
                       if (c.needs(0)) gx = sum_to(g * (x - t) / clamp((1.0 - x) * x, 1e-12, std::nullopt), x.sizes());
                       if (c.needs(1))
                         gt = sum_to(g * (clamp(log1p(-x), -100.0, std::nullopt) - clamp(log(x), -100.0, std::nullopt)),
                                     t.sizes());
                       return variable_list{gx, gt};
                     });
  }
  return out;
}

// ---- binary_cross_entropy_with_logits ----

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  GB_AUTOCAST(fp32, binary_cross_entropy_with_logits, logits, target, weight, pos_weight, reduction);
  const char* op = "binary_cross_entropy_with_logits";
  detail::OpScope op_scope(op, {logits, target, weight, pos_weight});
  check_pointwise_loss(logits, target, op, true);
  GB_CHECK(logits.sizes() == target.sizes(), "Target size (", target.sizes(), ") must be the same as input size (",
           logits.sizes(), ")");
  ScalarType dt = logits.scalar_type();
  auto shape = logits.sizes().vec();
  if (weight.defined()) broadcast_shapes(shape, weight.sizes(), op);  // throws when it does not broadcast
  if (pos_weight.defined()) broadcast_shapes(shape, pos_weight.sizes(), op);
  // loss = (1 - t) x - lw * log_sigmoid(x), lw = 1 + (pos_weight - 1) t; log_sigmoid(x) = min(x, 0) - log1p(e^-|x|)
  Tensor out;
  {
    NoGradGuard ng;
    auto full = [&](const Tensor& t) { return detail::raw_contiguous(t.expand(shape), detail::compute_type(dt)); };
    const ScalarType ct = detail::compute_type(dt);
    Tensor x = full(logits), t = full(target);
    Tensor w = weight.defined() ? full(weight) : Tensor(), pw = pos_weight.defined() ? full(pos_weight) : Tensor();
    Tensor l = detail::make_empty(shape, ct, logits.device());
    auto run = [&](auto zero) {
      using T = decltype(zero);
      const T *xp = x.data_ptr<T>(), *tp = t.data_ptr<T>();
      const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
      const T* pp = pw.defined() ? pw.data_ptr<T>() : nullptr;
      T* lp = l.data_ptr<T>();
      for (int64_t i = 0; i < l.numel(); ++i) {
        const T xi = xp[i], ti = tp[i];
        const T ls = std::min(xi, T(0)) - std::log1p(std::exp(-std::fabs(xi)));
        const T lw = pp ? T(1) + (pp[i] - T(1)) * ti : T(1);
        T v = (T(1) - ti) * xi - lw * ls;
        lp[i] = wp ? v * wp[i] : v;
      }
    };
    if (detail::composed_path(x)) {  // the same formula from the pointwise kernels
      const Tensor ls = where(lt(x, 0), x, 0.0) - log1p(exp(-abs(x)));
      l = (1.0 - t) * x - (pw.defined() ? (pw - 1.0) * t + 1.0 : ones_like(x)) * ls;
      if (w.defined()) l = l * w;
    } else {
      detail::run_cpu_kernel(op, l, [&] { ct == kDouble ? run(double{}) : run(float{}); });
    }
    out = reduce_loss(l, reduction);
    if (out.scalar_type() != dt) out = out.to(dt);
  }
  op_scope.set_output(out);
  if (autograd::needs_grad(logits, target, weight, pos_weight)) {
    const int64_t n = logits.numel();
    autograd::record(
        "BinaryCrossEntropyWithLogitsBackward0", autograd::collect_edges({logits, target, weight, pos_weight}), {&out},
        {autograd::input(logits), autograd::input(target), autograd::input(weight), autograd::input(pos_weight)},
        [reduction, n](autograd::BackwardContext& c) {
          const Tensor &x = c.saved(0), &t = c.saved(1), &w = c.saved(2), &pw = c.saved(3);
          Tensor g = reduction == Reduction::Mean ? c.grad() / double(n) : c.grad();
          if (w.defined()) g = g * w;
          Tensor gx, gt, gw, gpw;
          // d/dx = (lw * sigmoid(x) - pw t) with lw = 1 + (pw - 1) t;  (sigmoid(x) - t) without pos_weight
          if (c.needs(0)) {
            Tensor s = sigmoid(x);
            gx = pw.defined() ? ((pw * t + 1.0 - t) * s - pw * t) * g : (s - t) * g;
            gx = sum_to(gx, x.sizes());
          }
          Tensor ls;  // log_sigmoid(x), stable
          if (c.needs(1) || c.needs(2) || c.needs(3)) ls = minimum(x, zeros_like(x)) - log1p(exp(-abs(x)));
          // d/dt = -x - (pw - 1) log_sigmoid(x)
          if (c.needs(1)) gt = sum_to((pw.defined() ? -x - (pw - 1.0) * ls : -x) * g, t.sizes());
          if (c.needs(2)) {
            Tensor lw = pw.defined() ? (pw - 1.0) * t + 1.0 : Tensor();
            Tensor unweighted = (1.0 - t) * x - (lw.defined() ? lw * ls : ls);
            Tensor gg = reduction == Reduction::Mean ? c.grad() / double(n) : c.grad();
            gw = sum_to(unweighted * gg, w.sizes());
          }
          if (c.needs(3)) gpw = sum_to(-t * ls * g, pw.sizes());
          return variable_list{gx, gt, gw, gpw};
        });
  }
  return out;
}

// ---- kl_div ----

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  GB_AUTOCAST(fp32, kl_div, input, target, reduction, log_target);
  detail::OpScope op_scope("kl_div", {input, target});
  check_pointwise_loss(input, target, "kl_div", true);  // composed of ops: cuda too
  broadcast_shapes(input.sizes(), target.sizes(), "kl_div");  // throws when they do not broadcast
  // PyTorch's composition: exp(t) (t - x) for log targets, xlogy(t, t) - t x otherwise (0 where t = 0)
  Tensor out;
  if (log_target) {
    out = exp(target) * (target - input);
  } else {
    Tensor t_log_t = where(target == 0, 0.0, target * log(target));  // NaN for t < 0, as xlogy
    out = t_log_t - target * input;
  }
  out = reduce_loss(out, reduction);
  op_scope.set_output(out);
  return out;
}

}  // namespace gb
