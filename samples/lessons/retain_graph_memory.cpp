// samples/lessons/retain_graph_memory.cpp — what retain_graph=True in a loop makes grow, measured in bytes.
//
// The claim, from the PyTorch forums' "memory leak with retain_graph=True" threads and RNN tutorials ("detach the
// hidden state; retain_graph=True only hides the error and memory keeps growing"): a loop that carries its state
// from one step to the next and calls backward(retain_graph=True) grows memory every iteration. Precisely: each
// iteration's graph stays reachable through the carried state, so every tensor it saved for backward stays
// allocated. Here each step is h = relu(h * w + x) over (1024, 2048) float32 tensors: relu saves its output, one
// 8 MiB tensor per step. Two loops to compare, 10 iterations each:
//   retain     h carried, loss.backward(retain_graph=true)
//   rebuilt    h.detach() at each step, plain backward: the graph is rebuilt and freed every time
// and, to say what retain_graph itself costs, one graph backwarded 10 times with retain_graph.
//
//   ./build/samples/lessons/lesson_retain_graph_memory
//
// Prints the cpu allocator's allocated bytes after each loop's 2nd and 10th iterations, the growth per iteration,
// and the peak; the verdict holds when the retain loop grows by at least one saved tensor per iteration while the
// rebuilt loop and the one graph backwarded again do not grow.
#include <glassbox/glassbox.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lesson.h"

namespace {

int64_t allocated() { return gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].current; }
int64_t peak() { return gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].peak; }

struct Run {
  std::vector<int64_t> after;  // allocated bytes after each iteration
  int64_t peak = 0;
  // bytes per iteration from the 2nd to the last (the 1st also allocates w.grad)
  double growth() const { return double(after.back() - after[1]) / double(after.size() - 2); }
};

Run measure(const std::function<void(int)>& iteration, int iterations) {
  gb::memory::reset_peak_stats(gb::kCPU);
  Run r;
  for (int i = 0; i < iterations; ++i) {
    iteration(i);
    r.after.push_back(allocated());
  }
  r.peak = peak();
  return r;
}

}  // namespace

int main() {
  lesson::Lesson l("retain_graph_memory",
                   "backward(retain_graph=True) in a loop that carries its state grows memory every iteration: "
                   "each iteration's saved tensors stay allocated");
  const int kIterations = 10;
  gb::manual_seed(0);
  gb::Tensor x = gb::randn({1024, 2048});
  gb::Tensor w = (0.5 * gb::rand({1024, 2048})).requires_grad_();  // in [0, 0.5): h stays bounded
  const double tensor_bytes = double(x.numel() * x.element_size());
  l.measured("one (1024, 2048) float32 tensor",
             lesson::bytes(tensor_bytes) + " (" + std::to_string(int64_t(tensor_bytes)) + " bytes)");
  const int64_t base = allocated();

  auto report = [&](const std::string& name, const Run& r) {
    l.measured(name + ": allocated after iteration 2 -> 10", lesson::bytes(double(r.after[1] - base)) + " -> " +
                                                                 lesson::bytes(double(r.after.back() - base)) +
                                                                 " above the inputs");
    l.measured(name + ": growth per iteration", std::to_string(int64_t(r.growth())) + " bytes");
    l.measured(name + ": peak allocated", lesson::bytes(double(r.peak - base)) + " above the inputs");
  };

  Run retain;
  {
    gb::Tensor h = gb::zeros({1024, 2048});
    retain = measure(
        [&](int) {
          h = gb::relu(h * w + x);
          h.sum().backward({}, /*retain_graph=*/true);
        },
        kIterations);
  }  // h goes: the ten chained graphs and their saved tensors with it
  w.mutable_grad() = gb::Tensor();
  report("retain (state carried)", retain);

  Run rebuilt;
  {
    gb::Tensor h = gb::zeros({1024, 2048});
    rebuilt = measure(
        [&](int) {
          h = gb::relu(h.detach() * w + x);
          h.sum().backward();
        },
        kIterations);
  }
  w.mutable_grad() = gb::Tensor();
  report("rebuilt (state detached)", rebuilt);

  Run same;
  {
    gb::Tensor loss = gb::relu(x * w).sum();
    same = measure([&](int) { loss.backward({}, /*retain_graph=*/true); }, kIterations);
    l.measured("one graph, 10 backwards with retain_graph: held", lesson::bytes(double(same.after.back() - base)) +
                                                                      " above the inputs (its saved relu output "
                                                                      "and w.grad)");
    l.measured("one graph, 10 backwards: growth per backward", std::to_string(int64_t(same.growth())) + " bytes");
  }
  w.mutable_grad() = gb::Tensor();

  const bool grows = retain.growth() >= tensor_bytes;
  const bool flat = rebuilt.growth() == 0 && same.growth() == 0;
  return l.verdict(grows && flat,
                   "with the state carried, memory grew " + lesson::bytes(retain.growth()) + " per iteration (" +
                       lesson::percent(retain.growth() / tensor_bytes) + " of one saved 1024x2048 tensor); rebuilt " +
                       std::to_string(int64_t(rebuilt.growth())) + " bytes, one graph backwarded again " +
                       std::to_string(int64_t(same.growth())) +
                       " bytes per iteration: retain_graph grows memory only while each step's graph stays reachable");
}
