// samples/lessons/straight_through.cpp — a straight-through estimator trains through rounding; plain rounding does not.
//
// The claim, from quantization-aware-training tutorials and the torch.autograd.Function docs' custom-op examples:
// rounding is flat almost everywhere, so its gradient is zero and nothing before it learns; a custom Function
// whose forward rounds and whose backward passes the gradient through unchanged (the straight-through estimator,
// Bengio et al. 2013) lets the weights train. A tiny regression y = x q(w), with q(w) = round(w / 0.25) * 0.25, x
// (64, 8), a target made from quantized weights, 40 steps of SGD, once with plain rounding and once with the
// straight-through Function (gb::autograd::Function, libtorch's torch::autograd::Function).
//
// Plain rounding is gb::round (torch::round: halves to even), whose gradient is zero (RoundBackward0).
//
//   ./build/samples/lessons/lesson_straight_through
//
// Prints, for each way, the gradient norm of the first step and the loss before and after training; the verdict
// holds when plain rounding's gradient is zero and its loss unchanged while the straight-through loss falls by half.
#include <glassbox/glassbox.h>

#include <cstdio>
#include <string>

#include "lesson.h"

namespace {

constexpr double kStep = 0.25;  // the quantization step

// round(v / kStep) * kStep.
gb::Tensor quantize(const gb::Tensor& v) { return gb::round(v / kStep) * kStep; }

// Forward quantizes, backward is the identity: the straight-through estimator.
struct QuantizeSTE : gb::autograd::Function<QuantizeSTE> {
  static gb::Tensor forward(gb::autograd::AutogradContext*, gb::Tensor v) { return quantize(v); }
  static gb::variable_list backward(gb::autograd::AutogradContext*, gb::variable_list grad_outputs) {
    return {grad_outputs[0]};
  }
};

struct Training {
  double first_grad_norm = 0, loss_before = 0, loss_after = 0;
  bool grad_defined = false;  // did the first backward reach w at all
};

template <class Quantize>
Training train(const gb::Tensor& x, const gb::Tensor& y, Quantize q) {
  gb::Tensor w = gb::full({8, 1}, 0.05f).requires_grad_();  // quantizes to 0: every weight starts wrong
  gb::optim::SGD optimizer({w}, gb::optim::SGDOptions(0.05));
  Training t;
  for (int step = 0; step < 40; ++step) {
    gb::Tensor loss = (gb::matmul(x, q(w)) - y).pow(2).mean();  // (N, 1) predictions
    optimizer.zero_grad();
    loss.backward();
    if (step == 0) {
      t.loss_before = loss.item<double>();
      t.grad_defined = w.grad().defined();
      t.first_grad_norm = t.grad_defined ? w.grad().norm().item<double>() : 0;
    }
    optimizer.step();
  }
  gb::NoGradGuard no_grad;
  t.loss_after = (gb::matmul(x, quantize(w)) - y).pow(2).mean().item<double>();
  return t;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

int main() {
  lesson::Lesson l("straight_through",
                   "plain rounding gives zero gradients and does not train; a straight-through Function does");
  gb::manual_seed(0);
  gb::Tensor x = gb::randn({64, 8});  // (N, D)
  gb::Tensor w_true = gb::tensor({1.0f, -0.5f, 0.75f, 0.25f, -1.25f, 0.5f, -0.25f, 1.5f}).view({8, 1});
  gb::Tensor y = gb::matmul(x, w_true);  // (N, 1)

  const Training plain = train(x, y, [](const gb::Tensor& w) { return quantize(w); });
  const Training ste = train(x, y, [](const gb::Tensor& w) { return QuantizeSTE::apply(w); });
  l.measured("plain rounding: grad norm at step 1",
             fmt(plain.first_grad_norm) + (plain.grad_defined ? " (w.grad defined)" : " (w.grad undefined)"));
  l.measured("plain rounding: loss before -> after 40 steps", fmt(plain.loss_before) + " -> " + fmt(plain.loss_after));
  l.measured("straight-through: grad norm at step 1", ste.first_grad_norm);
  l.measured("straight-through: loss before -> after 40 steps", fmt(ste.loss_before) + " -> " + fmt(ste.loss_after));

  const bool plain_stuck = plain.first_grad_norm == 0 && plain.loss_after == plain.loss_before;
  const bool ste_trains = ste.first_grad_norm > 0 && ste.loss_after < 0.5 * ste.loss_before;
  return l.verdict(plain_stuck && ste_trains, "plain rounding's gradient norm was " + fmt(plain.first_grad_norm) +
                                                  " and its loss stayed " + fmt(plain.loss_after) +
                                                  "; straight-through went from " + fmt(ste.loss_before) + " to " +
                                                  fmt(ste.loss_after));
}
