// engine/ops/random.cpp — in-place random fills (uniform_, normal_, bernoulli_) and sampling (normal, bernoulli,
// multinomial), all from the default generator.
//
// Draws are serial, so a seed gives the same numbers whatever the thread count. Like PyTorch, these are
// in-place writes that autograd treats as a fresh value (no gradient flows to what was there before). On cuda the
// draws are the host generator's, copied to the device (as the cuda factories rand/randn make theirs): a seed gives
// the cpu's numbers on any device (dropout's masks come from the devices' Philox generators instead).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/device_kernel.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/core/generator.h"
#include "glassbox/ops/factory.h"
#include "ops/inplace.h"

namespace gb {
namespace {

template <typename Draw>
Tensor& fill_random(Tensor& self, const char* op, const Draw& draw) {
  detail::OpScope op_scope(op, {self});
  detail::check_device(self, op, "self");
  bool grad_needed = GradMode::is_enabled() && self.requires_grad();
  detail::check_inplace(self, grad_needed, op);
  // the draws, in row-major order into a contiguous tensor (meta: none, the generator does not advance)
  auto draw_into = [&](const Tensor& target) {
    detail::run_cpu_kernel(op, target, [&] {
      detail::dispatch_floating(self.scalar_type(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* p = reinterpret_cast<T*>(target.data_ptr());
        Generator& g = default_generator();
        for (int64_t i = 0; i < target.numel(); ++i) p[i] = T(opmath_t<T>(draw(g)));
      });
    });
  };
  auto draw_on = [&](Device d) {  // into a new tensor on d, copied into self
    Tensor target = detail::make_empty(self.sizes(), self.scalar_type(), d);
    draw_into(target);
    detail::copy_into(self, target);
  };
  detail::run_op(
      self.device(), [&] { self.is_contiguous() ? draw_into(self) : draw_on(self.device()); },
      [&] { draw_on(Device(kCPU)); });  // cuda: drawn on the host (the cpu's generator and order), copied over
  detail::bump_version(self);
  op_scope.set_output(self);
  // A fresh value: on a view, the base's history gets a CopySlices that sends no gradient to the old values.
  if (grad_needed && self.unsafe_impl()->view_base) autograd::rebase_view_history(self, nullptr, {}, Tensor());
  return self;
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  return fill_random(self, "uniform_", [&](Generator& g) { return from + (to - from) * g.uniform_double(); });
}

Tensor& Tensor::normal_(double mean, double std) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return fill_random(self, "normal_", [&](Generator& g) { return mean + std * g.normal(); });
}

Tensor& Tensor::bernoulli_(double p) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  GB_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return fill_random(self, "bernoulli_", [&](Generator& g) { return g.uniform_double() < p ? 1.0 : 0.0; });
}

Tensor normal(double mean, double std, IntArrayRef size, const TensorOptions& options) {
  Tensor out = empty(size, options.requires_grad(false));
  out.normal_(mean, std);
  if (options.requires_grad()) out.requires_grad_(true);
  return out;
}

Tensor bernoulli(const Tensor& p) {
  const char* op = "bernoulli";
  detail::OpScope op_scope(op, {p});
  detail::check_device(p, op);  // the probabilities are read on the host
  GB_CHECK_TYPE(is_floating_point(p.scalar_type()), "bernoulli: the probabilities must be floating point, got ",
                to_string(p.scalar_type()), "; convert them with .to(gb::kFloat)");
  detail::check_has_data(p, op, "each draw needs its probability");
  Tensor probs = detail::shallow_alias(p).to(kCPU).to(kDouble).contiguous();
  const double* q = probs.data_ptr<double>();
  Tensor draws = empty(p.sizes(), TensorOptions().dtype(kDouble));
  double* out = draws.data_ptr<double>();
  Generator& g = default_generator();
  for (int64_t i = 0; i < probs.numel(); ++i) {
    GB_CHECK(q[i] >= 0 && q[i] <= 1, "bernoulli: expected all probabilities in [0, 1], got ", q[i], " at flat index ",
             i);
    out[i] = g.uniform_double() < q[i] ? 1.0 : 0.0;
  }
  Tensor result = draws.to(p.scalar_type()).to(p.device());
  op_scope.set_output(result);
  return result;
}

Tensor bernoulli(const Tensor& self, double p) {
  Tensor out = empty_like(self);
  out.bernoulli_(p);
  return out;
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  const char* op = "multinomial";
  detail::OpScope op_scope(op, {probs});
  detail::check_device(probs, op);  // the weights are read on the host
  GB_CHECK(probs.dim() == 1 || probs.dim() == 2, "multinomial: prob_dist must be 1 or 2 dim, got ", probs.dim(),
           " dims (shape ", probs.sizes(), ")");
  GB_CHECK_TYPE(is_floating_point(probs.scalar_type()), "multinomial only supports floating-point dtypes for input, "
                "got ", to_string(probs.scalar_type()), "; convert the weights with .to(gb::kFloat)");
  GB_CHECK(num_samples > 0, "multinomial: cannot sample num_samples=", num_samples, " <= 0 samples");
  detail::check_has_data(probs, op, "the draws need the weights");
  Tensor w = detail::shallow_alias(probs).to(kCPU).to(kDouble).contiguous();
  const int64_t rows = probs.dim() == 1 ? 1 : w.size(0), k = w.size(-1);
  GB_CHECK(replacement || num_samples <= k, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
           "replacement (", num_samples, " > ", k, "); pass replacement=true or draw fewer");
  Tensor result = empty({rows, num_samples}, TensorOptions().dtype(kInt64));
  int64_t* out = result.data_ptr<int64_t>();
  Generator& g = default_generator();
  std::vector<double> weights(static_cast<size_t>(k)), cumulative(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = w.data_ptr<double>() + r * k;
    int64_t positive = 0;
    for (int64_t j = 0; j < k; ++j) {
      GB_CHECK(std::isfinite(row[j]) && row[j] >= 0, "multinomial: probability tensor contains either inf, nan or "
               "element < 0 (", row[j], " in row ", r, ")");
      weights[size_t(j)] = row[j];
      positive += row[j] > 0;
    }
    GB_CHECK(positive > 0, "multinomial: invalid multinomial distribution (sum of probabilities <= 0) in row ", r);
    GB_CHECK(replacement || num_samples <= positive, "multinomial: invalid multinomial distribution (with replacement="
             "False, not enough non-negative category to sample): row ", r, " has ", positive, " nonzero weights for ",
             num_samples, " samples");
    for (int64_t s = 0; s < num_samples; ++s) {
      double total = 0;
      for (int64_t j = 0; j < k; ++j) cumulative[size_t(j)] = total += weights[size_t(j)];
      const double u = g.uniform_double() * total;
      int64_t pick = int64_t(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
      pick = std::min(pick, k - 1);
      while (weights[size_t(pick)] == 0) --pick;  // u at a boundary: the last category with weight up to it
      out[r * num_samples + s] = pick;
      if (!replacement) weights[size_t(pick)] = 0;  // drawn once
    }
  }
  if (probs.dim() == 1) result = result.view({num_samples});
  result = result.to(probs.device());
  op_scope.set_output(result);
  return result;
}

}  // namespace gb
