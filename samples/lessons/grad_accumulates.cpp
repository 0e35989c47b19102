// samples/lessons/grad_accumulates.cpp — `.grad` accumulates across backwards until something resets it.
//
// The claim, from PyTorch's "Autograd mechanics" note and every training-loop tutorial ("call optimizer.zero_grad()
// because gradients accumulate by default"): backward adds into a leaf's .grad instead of overwriting it. Three
// backwards of y = x^2 at x = 2 (dy/dx = 4) leave .grad at 4, 8, 12; zeroing it in place (x.grad().zero_()) or an
// optimizer's zero_grad() (set_to_none: .grad becomes undefined, libtorch's default) starts over at 4.
//
//   ./build/samples/lessons/lesson_grad_accumulates
//
// Prints .grad after each backward, after zero_(), after the next backward, after optimizer.zero_grad(), and after
// one more backward; the verdict holds when those are 4, 8, 12, 0, 4, undefined, 4.
#include <glassbox/glassbox.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lesson.h"

namespace {

// One backward of y = x^2; returns x.grad() afterwards (NaN while it is undefined).
double backward_once(const gb::Tensor& x) {
  gb::Tensor y = x * x;
  y.sum().backward();
  return x.grad().item<double>();
}

std::string value(double g) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", g);
  return std::isnan(g) ? "undefined" : buf;
}

}  // namespace

int main() {
  lesson::Lesson l("grad_accumulates",
                   "three backwards of y = x^2 at x = 2 leave .grad at 4, 8, 12; zero_grad resets it");
  gb::Tensor x = gb::tensor({2.0}, gb::requires_grad());

  std::vector<double> seen;
  for (int i = 1; i <= 3; ++i) {
    seen.push_back(backward_once(x));
    l.measured("grad after backward " + std::to_string(i), seen.back());
  }

  x.mutable_grad().zero_();  // in place, as PyTorch's x.grad.zero_()
  seen.push_back(x.grad().item<double>());
  l.measured("grad after x.grad().zero_()", seen.back());
  seen.push_back(backward_once(x));
  l.measured("grad after the next backward", seen.back());

  gb::optim::SGD optimizer({x}, gb::optim::SGDOptions(0.1));
  optimizer.zero_grad();  // set_to_none = true: .grad becomes undefined, the next backward writes a fresh one
  seen.push_back(x.grad().defined() ? x.grad().item<double>() : NAN);
  l.measured("grad after optimizer.zero_grad()", value(seen.back()));
  seen.push_back(backward_once(x));
  l.measured("grad after the next backward", seen.back());

  const bool accumulates = seen[0] == 4 && seen[1] == 8 && seen[2] == 12;
  const bool resets = seen[3] == 0 && seen[4] == 4 && std::isnan(seen[5]) && seen[6] == 4;
  return l.verdict(accumulates && resets, "grad went " + value(seen[0]) + ", " + value(seen[1]) + ", " +
                                              value(seen[2]) + "; zero_() gave " + value(seen[3]) + " then " +
                                              value(seen[4]) + "; zero_grad() left it " + value(seen[5]) + " then " +
                                              value(seen[6]));
}
