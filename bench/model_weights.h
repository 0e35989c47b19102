// bench/model_weights.h — what the model benchmarks (bench_models on the cpu, gpu/bench_gpu_models on cuda) share:
// a glassbox tensor as a libtorch one on a device, and glassbox's initial weights copied into libtorch's model, so the
// two libraries start from the same point (their first losses are compared). Include after <glassbox/glassbox.h> and
// <torch/torch.h>.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench {

// A host copy of x (float32 or int64) as a libtorch tensor on `device`.
inline torch::Tensor to_torch(const gb::Tensor& x, torch::Device device = torch::kCPU) {
  gb::Tensor c = x.cpu().contiguous();
  torch::Tensor t = c.scalar_type() == gb::kInt64
                        ? torch::from_blob(c.data_ptr<int64_t>(), c.sizes().vec(), torch::kLong).clone()
                        : torch::from_blob(c.data_ptr<float>(), c.sizes().vec(), torch::kFloat).clone();
  return device.is_cpu() ? t : t.to(device);
}

// glassbox's parameters and buffers into libtorch's model, on libtorch's tensors' devices (same source, same order;
// counts and shapes checked: a mismatch ends the benchmark with which one).
template <class G, class T>
void copy_weights(const G& g, const T& t) {
  auto copy = [](const std::vector<gb::Tensor>& from, std::vector<torch::Tensor> to, const char* what) {
    if (from.size() != to.size()) {
      std::fprintf(stderr, "benchmark: %zu %s in glassbox's model, %zu in libtorch's\n", from.size(), what, to.size());
      std::exit(2);
    }
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < from.size(); ++i) {
      if (from[i].sizes().vec() != to[i].sizes().vec()) {
        std::fprintf(stderr, "benchmark: %s %zu differs in shape\n", what, i);
        std::exit(2);
      }
      to[i].copy_(to_torch(from[i], to[i].device()).to(to[i].scalar_type()));
    }
  };
  copy(g->parameters(), t->parameters(), "parameters");
  copy(g->buffers(), t->buffers(), "buffers");
}

}  // namespace bench
