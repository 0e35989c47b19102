// samples/lessons/checkpoint_transformer.cpp — activation checkpointing trades step time for peak memory.
//
// The claim, from the torch.utils.checkpoint docs and the "train large models" tutorials (Hugging Face's
// gradient_checkpointing, PyTorch's activation-checkpointing blog): checkpointing a block keeps only its input in
// forward and recomputes its activations in backward, so a training step's peak memory falls, and the step takes
// longer by about one more forward. Measured on a stack of 4 gb::nn::TransformerEncoderLayer (d_model 64, 4 heads,
// feed-forward 256, no dropout, batch_first), batch 8 x 64 tokens, float32, one forward + backward per step: plain,
// and with every layer under gb::utils::checkpoint (torch.utils.checkpoint, non-reentrant).
//
//   ./build/samples/lessons/lesson_checkpoint_transformer            # 3 timed steps each way
//   ./build/samples/lessons/lesson_checkpoint_transformer 20         # more steps: steadier times
//
// Prints each way's peak allocated bytes during a step (above what the step started with), its fastest step time
// (steps alternate between the two ways, so both see the same machine load), and whether both gave the same
// gradients; the verdict holds when the gradients agree, the peak fell and the time rose.
#include <glassbox/glassbox.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "lesson.h"

namespace {

int64_t allocated() { return gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].current; }
int64_t peak() { return gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].peak; }

struct Step {
  int64_t peak = 0;  // bytes above the allocation at the step's start
  double seconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  lesson::Lesson l("checkpoint_transformer",
                   "checkpointing each Transformer encoder layer lowers a training step's peak memory and makes "
                   "the step slower");
  gb::manual_seed(0);
  std::vector<gb::nn::TransformerEncoderLayer> layers;
  std::vector<gb::Tensor> params;
  for (int i = 0; i < 4; ++i) {
    layers.emplace_back(
        gb::nn::TransformerEncoderLayerOptions(64, 4).dim_feedforward(256).dropout(0.0).batch_first(true));
    for (const auto& p : layers.back()->parameters()) params.push_back(p);
  }
  gb::Tensor x = gb::randn({8, 64, 64});  // (N, L, D)

  auto step = [&](bool checkpointed) {
    for (auto& p : params) p.mutable_grad() = gb::Tensor();  // zero_grad(set_to_none): grads count in the peak
    const int64_t start = allocated();
    gb::memory::reset_peak_stats(gb::kCPU);
    const auto t0 = std::chrono::steady_clock::now();
    gb::Tensor h = x;
    for (auto& layer : layers) {
      if (checkpointed)
        h = gb::utils::checkpoint([&](const gb::Tensor& in) { return layer(in); }, h);
      else
        h = layer(h);
    }
    h.pow(2).mean().backward();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return Step{peak() - start, s};
  };

  step(false);  // warm up: the allocator's cache, the thread pool
  step(true);
  Step plain{0, 1e30}, ckpt{0, 1e30};
  std::vector<gb::Tensor> plain_grads;
  for (int i = 0; i < steps; ++i) {
    const Step a = step(false);
    if (i == 0)
      for (const auto& p : params) plain_grads.push_back(p.grad().clone());
    const Step b = step(true);
    plain = {a.peak, std::min(plain.seconds, a.seconds)};
    ckpt = {b.peak, std::min(ckpt.seconds, b.seconds)};
  }
  double max_diff = 0;  // the checkpointed step's grads against the plain one's (same weights, same input)
  for (size_t i = 0; i < params.size(); ++i)
    max_diff = std::max(max_diff, (params[i].grad() - plain_grads[i]).abs().max().item<double>());

  const double memory_change = double(ckpt.peak - plain.peak) / double(plain.peak);
  const double time_change = ckpt.seconds / plain.seconds - 1;
  l.measured("plain: peak during a step",
             lesson::bytes(double(plain.peak)) + " (" + std::to_string(plain.peak) + " bytes)");
  l.measured("checkpointed: peak during a step",
             lesson::bytes(double(ckpt.peak)) + " (" + std::to_string(ckpt.peak) + " bytes)");
  l.measured("peak change", lesson::percent(memory_change));
  l.measured("plain: fastest of " + std::to_string(steps) + " steps", plain.seconds * 1e3, "ms");
  l.measured("checkpointed: fastest of " + std::to_string(steps) + " steps", ckpt.seconds * 1e3, "ms");
  l.measured("step time change", lesson::percent(time_change));
  l.measured("largest |grad difference| between the two", max_diff);

  const bool same_grads = max_diff < 1e-5;
  return l.verdict(same_grads && memory_change < 0 && time_change > 0,
                   "peak " + lesson::percent(memory_change) + ", step time " + (time_change > 0 ? "+" : "") +
                       lesson::percent(time_change) + (same_grads ? ", same gradients" : ", gradients differ"));
}
