// engine/autograd/gradcheck.cpp — numerical vs analytical Jacobians (torch.autograd.gradcheck's algorithm).
//
// Numerical: perturb each element of each input that requires grad by ±eps (in place, through its strides) and
// take central differences of every output. Analytical: one autograd::grad call per output element with a one-hot
// grad_output (a row of the Jacobian per call). Compared with |a - n| <= atol + rtol * |n|.
#include "glassbox/autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "core/make.h"
#include "glassbox/autograd/autograd.h"
#include "glassbox/ops/factory.h"

namespace gb::autograd {
namespace {

double* element_ptr(const Tensor& t, int64_t flat) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (flat % t.size(d)) * t.stride(d);
    flat /= t.size(d);
  }
  return t.data_ptr<double>() + off;
}

std::vector<double> flat_values(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::string matrix_str(const std::vector<std::vector<double>>& m) {
  std::ostringstream os;
  os.precision(6);
  os << "tensor([";
  for (size_t r = 0; r < m.size(); ++r) {
    os << (r ? ",\n        [" : "[");
    for (size_t c = 0; c < m[r].size(); ++c) os << (c ? ", " : "") << m[r][c];
    os << "]";
  }
  os << "])";
  return os.str();
}

}  // namespace

bool gradcheck(const GradcheckFn& fn, const variable_list& inputs, const GradcheckOptions& o) {
  std::vector<size_t> diff_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined() || !t.requires_grad()) continue;
    GB_CHECK(t.scalar_type() == kDouble, "gradcheck: input ", i, " requires grad but is ", python_name(t.scalar_type()),
             "; finite differences need float64 inputs (use gb::TensorOptions().dtype(gb::kFloat64))");
    for (int64_t d = 0; d < t.dim(); ++d)
      GB_CHECK(t.stride(d) != 0 || t.size(d) <= 1, "gradcheck: input ", i,
               " has overlapping memory (an expanded view); pass a .contiguous() or .clone() of it");
    diff_inputs.push_back(i);
  }
  GB_CHECK(!diff_inputs.empty(), "gradcheck expects at least one input tensor to require gradient");

  variable_list outputs = fn(inputs);
  std::vector<size_t> diff_outputs;
  for (size_t k = 0; k < outputs.size(); ++k)
    if (outputs[k].defined() && outputs[k].is_floating_point()) diff_outputs.push_back(k);

  for (size_t k : diff_outputs) {
    const Tensor& out = outputs[k];
    int64_t n_out = out.numel();
    for (size_t ii : diff_inputs) {
      const Tensor& x = inputs[ii];
      int64_t n_in = x.numel();
      // numerical[j][r]: d out[r] / d x[j]
      std::vector<std::vector<double>> numerical(static_cast<size_t>(n_in), std::vector<double>(static_cast<size_t>(n_out)));
      for (int64_t j = 0; j < n_in; ++j) {
        double* p = element_ptr(x, j);
        double orig = *p;
        std::vector<double> plus, minus;
        {
          *p = orig + o.eps;
          plus = flat_values(fn(inputs)[k]);
          *p = orig - o.eps;
          minus = flat_values(fn(inputs)[k]);
          *p = orig;
        }
        for (int64_t r = 0; r < n_out; ++r) numerical[j][r] = (plus[r] - minus[r]) / (2 * o.eps);
      }
      std::vector<std::vector<double>> analytical(size_t(n_in), std::vector<double>(size_t(n_out), 0.0));
      if (out.requires_grad()) {
        for (int64_t r = 0; r < n_out; ++r) {
          Tensor go = zeros_like(out);
          {
            NoGradGuard ng;
            Tensor flat = go.view({-1});
            flat.narrow(0, r, 1).fill_(1.0);
          }
          variable_list g = grad({out}, {x}, {go}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
          if (!g[0].defined()) continue;
          auto gv = flat_values(g[0]);
          GB_CHECK(int64_t(gv.size()) == n_in, "gradcheck: the gradient for input ", ii, " has ", gv.size(),
                   " elements but the input has ", n_in);
          for (int64_t j = 0; j < n_in; ++j) analytical[j][r] = gv[j];
        }
      }
      for (int64_t j = 0; j < n_in; ++j)
        for (int64_t r = 0; r < n_out; ++r) {
          double a = analytical[j][r], n = numerical[j][r];
          if (!(std::fabs(a - n) <= o.atol + o.rtol * std::fabs(n))) {
            if (!o.raise_exception) return false;
            throw Error(detail::str_cat("Jacobian mismatch for output ", k, " with respect to input ", ii, ",\n",
                                        "numerical:", matrix_str(numerical), "\nanalytical:", matrix_str(analytical),
                                        "\n(first mismatch at input element ", j, ", output element ", r, ": ", a,
                                        " vs ", n, ")"));
          }
        }
    }
  }
  return true;
}

bool gradgradcheck(const GradcheckFn& fn, const variable_list& inputs, const GradcheckOptions& o) {
  variable_list outputs = fn(inputs);
  variable_list grad_outputs;
  for (const auto& out : outputs) {
    Tensor g = randn(out.sizes(), TensorOptions().dtype(kDouble));
    g.requires_grad_(true);
    grad_outputs.push_back(g);
  }
  size_t n_in = inputs.size();
  variable_list all = inputs;
  all.insert(all.end(), grad_outputs.begin(), grad_outputs.end());
  auto first_order = [&](const variable_list& in) {
    variable_list xs(in.begin(), in.begin() + long(n_in));
    variable_list gos(in.begin() + long(n_in), in.end());
    variable_list outs = fn(xs);
    variable_list diff_in;
    for (const auto& x : xs)
      if (x.requires_grad()) diff_in.push_back(x);
    variable_list gs = grad(outs, diff_in, gos, true, true, true);
    variable_list result;
    for (size_t i = 0; i < gs.size(); ++i)
      result.push_back(gs[i].defined() ? gs[i] : zeros_like(diff_in[i]));
    return result;
  };
  return gradcheck(first_order, all, o);
}

}  // namespace gb::autograd
