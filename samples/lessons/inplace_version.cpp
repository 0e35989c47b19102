// samples/lessons/inplace_version.cpp — an in-place change to a tensor saved for backward breaks backward.
//
// The claim, from PyTorch's "Autograd mechanics" note ("In-place correctness checks: every tensor keeps a version
// counter, incremented every time it is marked dirty in any operation. When a Function saves any tensors for
// backward, a version counter of their containing Tensor is saved as well ... an error is raised if it is greater
// than the saved value"): after y = h * h saves h, `h += 1` bumps h's version from 0 to 1 and y's backward throws
// "one of the variables needed for gradient computation has been modified by an inplace operation ... is at version
// 1; expected version 0 instead". The out-of-place h = h + 1 leaves the saved tensor alone and backward works.
//
//   ./build/samples/lessons/lesson_inplace_version
//
// Prints h's version before and after `h += 1`, the error backward threw, and the gradient of the out-of-place
// variant; the verdict holds when backward threw the version-counter message with those versions.
#include <glassbox/glassbox.h>

#include <string>

#include "lesson.h"

int main() {
  lesson::Lesson l("inplace_version",
                   "`h += 1` on a tensor saved for backward makes backward throw the version-counter error");
  gb::Tensor w = gb::tensor({1.0f, 2.0f, 3.0f}, gb::requires_grad());

  gb::Tensor h = w * 2;
  gb::Tensor y = h * h;  // MulBackward0 saves h (both operands) at its current version
  l.measured("h._version() when y = h * h saved it", double(h._version()));
  h += 1;
  l.measured("h._version() after h += 1", double(h._version()));
  std::string message;
  try {
    y.sum().backward();
  } catch (const gb::Error& e) {
    message = e.what();
  }
  l.measured("y.sum().backward() threw", message.empty() ? "nothing" : "\"" + message + "\"");

  gb::Tensor h2 = w * 2;
  gb::Tensor y2 = h2 * h2;
  h2 = h2 + 1;  // a new tensor: the saved one keeps version 0
  y2.sum().backward();
  l.measured("with h = h + 1 instead, w.grad()", w.grad()[0].item<double>());  // d/dw (2w)^2 = 8w at w = 1

  const bool version_error = message.find("has been modified by an inplace operation") != std::string::npos &&
                             message.find("is at version 1; expected version 0 instead") != std::string::npos;
  const bool out_of_place_ok = w.grad().defined() && w.grad()[0].item<double>() == 8;
  return l.verdict(version_error && out_of_place_ok,
                   std::string(version_error ? "backward threw the version-counter error (version 1, expected 0)"
                                             : "backward did not throw the version-counter error") +
                       (out_of_place_ok ? "; the out-of-place h + 1 backwarded to w.grad[0] = 8"
                                        : "; the out-of-place variant did not give w.grad[0] = 8"));
}
