// samples/lessons/no_grad_memory.cpp — inference under NoGradGuard needs less memory than with grad recording on.
//
// The claim, from PyTorch's autograd tutorial and the torch.no_grad docs ("disabling gradient calculation is useful
// for inference ... it will reduce memory consumption for computations that would otherwise have requires_grad=True"):
// without a graph, no op saves its inputs or outputs for backward, so each intermediate result is freed as soon as
// the next layer has read it, instead of living until the output goes. Measured on an MLP of 4 x (Linear 1024->1024,
// ReLU) then Linear 1024->10, batch 512, float32: the peak of the cpu allocator's allocated bytes during one forward
// (reset_peak_stats before it), with grad on and under gb::NoGradGuard.
//
//   ./build/samples/lessons/lesson_no_grad_memory
//
// Prints each forward's peak and what it still holds with the output alive (bytes above the weights and the input),
// the bytes and percent no_grad saved; the verdict holds when the no_grad peak is lower.
#include <glassbox/glassbox.h>

#include <cstdint>
#include <string>

#include "lesson.h"

namespace {

int64_t allocated() { return gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].current; }
int64_t peak() { return gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].peak; }

struct Forward {
  int64_t peak = 0, held = 0;  // bytes above what was allocated before the forward
};

// One forward with the output kept alive until it has been measured.
Forward measure(gb::nn::Sequential& net, const gb::Tensor& x) {
  const int64_t before = allocated();
  gb::memory::reset_peak_stats(gb::kCPU);
  gb::Tensor out = net->forward(x);  // (N, 10)
  return {peak() - before, allocated() - before};
}

}  // namespace

int main() {
  lesson::Lesson l("no_grad_memory",
                   "a forward under no_grad (gb::NoGradGuard) peaks lower than one that records the graph");
  gb::manual_seed(0);
  gb::nn::Sequential net;
  for (int i = 0; i < 4; ++i) {
    net->push_back(gb::nn::Linear(1024, 1024));
    net->push_back(gb::nn::ReLU());
  }
  net->push_back(gb::nn::Linear(1024, 10));
  gb::Tensor x = gb::randn({512, 1024});  // (N, D)

  const Forward with_grad = measure(net, x);
  Forward no_grad;
  {
    gb::NoGradGuard guard;
    no_grad = measure(net, x);
  }
  l.measured("with grad: peak during the forward",
             lesson::bytes(double(with_grad.peak)) + " (" + std::to_string(with_grad.peak) + " bytes)");
  l.measured("with grad: held while the output lives", lesson::bytes(double(with_grad.held)));
  l.measured("no_grad: peak during the forward",
             lesson::bytes(double(no_grad.peak)) + " (" + std::to_string(no_grad.peak) + " bytes)");
  l.measured("no_grad: held while the output lives", lesson::bytes(double(no_grad.held)));
  const int64_t saved = with_grad.peak - no_grad.peak;
  const double fraction = with_grad.peak > 0 ? double(saved) / double(with_grad.peak) : 0;
  l.measured("peak saved by no_grad", std::to_string(saved) + " bytes, " + lesson::percent(fraction));

  return l.verdict(saved > 0, "no_grad peaked at " + lesson::bytes(double(no_grad.peak)) + " instead of " +
                                  lesson::bytes(double(with_grad.peak)) + ": " + lesson::bytes(double(saved)) + " (" +
                                  lesson::percent(fraction) + ") less");
}
