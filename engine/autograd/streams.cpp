// engine/autograd/streams.cpp — backward's CUDA streams (streams.h).
#include "autograd/streams.h"

#include <algorithm>

namespace gb::autograd {

cuda::CUDAStream BackwardStreams::caller(int device) {
  for (const auto& s : callers_)
    if (s.device_index() == device) return s;
  callers_.push_back(cuda::getCurrentCUDAStream(device));
  return callers_.back();
}

std::optional<cuda::CUDAStream> BackwardStreams::forward_stream(const Node& node) {
  if (node.stream_device < 0) return std::nullopt;
  return cuda::CUDAStream(Device(kCUDA, node.stream_device), static_cast<cudaStream_t>(node.stream));
}

std::optional<cuda::CUDAStream> BackwardStreams::stream_of(const Node& node, const Tensor& g) {
  if (!g.defined() || !g.is_cuda()) return std::nullopt;
  const int device = g.device().index();
  if (node.stream_device == device) return forward_stream(node);
  return caller(device);
}

void BackwardStreams::wait(const cuda::CUDAStream& waiter, const cuda::CUDAStream& on) {
  if (waiter == on) return;
  cuda::CUDAEvent ready;
  ready.record(on);
  ready.block(waiter);
}

void BackwardStreams::used(const cuda::CUDAStream& s) {
  if (std::find(used_.begin(), used_.end(), s) == used_.end()) used_.push_back(s);
}

void BackwardStreams::finish() {
  const std::vector<cuda::CUDAStream> used = used_;  // caller() may grow callers_, never used_
  for (const auto& s : used) wait(caller(s.device_index()), s);
}

}  // namespace gb::autograd
