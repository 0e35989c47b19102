// samples/lessons/detach_cuts_graph.cpp — detach() cuts the graph: nothing behind it can be differentiated.
//
// The claim, from PyTorch's autograd tutorial and the Tensor.detach docs ("returns a new Tensor, detached from the
// current graph; the result will never require gradient"): a loss computed only from a detached tensor has no
// grad_fn, so its backward fails with "element 0 of tensors does not require grad and does not have a grad_fn".
// Whereas the same loss without detach() reaches w.grad.
//
//   ./build/samples/lessons/lesson_detach_cuts_graph
//
// Prints requires_grad and grad_fn of the detached tensor, the error message the backward threw (gb::Error, the
// same words as PyTorch's RuntimeError), and w.grad of the graph that was not cut.
#include <glassbox/glassbox.h>

#include <string>

#include "lesson.h"

int main() {
  lesson::Lesson l("detach_cuts_graph",
                   "backward through a detach()ed tensor fails: \"element 0 of tensors does not require grad and "
                   "does not have a grad_fn\"");
  gb::Tensor w = gb::tensor({1.0, 2.0, 3.0}, gb::requires_grad());
  gb::Tensor h = (w * 2).detach();  // same values, no history
  l.measured("h = (w * 2).detach(): requires_grad", h.requires_grad() ? "true" : "false");
  l.measured("h.grad_fn()", h.grad_fn() ? h.grad_fn()->name() : "none");

  std::string message;
  try {
    (h * h).sum().backward();
  } catch (const gb::Error& e) {
    message = e.what();
  }
  l.measured("(h * h).sum().backward() threw", message.empty() ? "nothing" : "\"" + message + "\"");

  (w * 2 * (w * 2)).sum().backward();  // the same loss without detach(): d/dw (2w)^2 = 8w
  l.measured("without detach, w.grad()[0]", w.grad()[0].item<double>());

  const bool cut =
      message.find("element 0 of tensors does not require grad and does not have a grad_fn") != std::string::npos;
  const bool uncut = w.grad().defined() && w.grad()[0].item<double>() == 8;
  return l.verdict(cut && uncut, std::string(cut ? "backward behind detach() threw PyTorch's message"
                                                 : "backward behind detach() did not throw PyTorch's message") +
                                     (uncut ? "; without detach() w.grad[0] = 8 as d/dw (2w)^2 says"
                                            : "; without detach() w.grad[0] was not 8"));
}
