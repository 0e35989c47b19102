// engine/autograd/streams.h — internal: the CUDA streams of a backward pass, by PyTorch's rule.
//
// Each node runs on the stream its forward op ran on (Node::stream, recorded when the op's outputs were attached to
// it): a forward launched on a side stream has its backward there too. A gradient handed from a node on one stream to
// a node on another is accumulated on the receiving node's stream after that stream waits for the sender's (an event:
// the host does not wait), and the gradient's memory is marked as used by that stream (record_stream). Nodes without a
// stream (cpu nodes, AccumulateGrad) run on the calling thread's current stream, and before backward returns that
// stream waits for every other stream backward used, so the caller sees finished .grad values in stream order. Graphs
// without cuda tensors never reach any of this.
#pragma once

#include <optional>
#include <vector>

#include "glassbox/autograd/node.h"
#include "glassbox/core/cuda_stream.h"

namespace gb::autograd {

class BackwardStreams {
 public:
  // The stream node runs on for a gradient on g's device: its forward stream, or the caller's current one; nothing
  // for a cpu gradient.
  std::optional<cuda::CUDAStream> stream_of(const Node& node, const Tensor& g);
  // The node's own stream (nothing when its forward ran on no cuda stream).
  static std::optional<cuda::CUDAStream> forward_stream(const Node& node);
  // `waiter` waits for the work queued on `on` so far (nothing when they are the same stream).
  void wait(const cuda::CUDAStream& waiter, const cuda::CUDAStream& on);
  void used(const cuda::CUDAStream& s);  // s ran backward work: finish() makes the caller wait for it
  // The caller's current streams wait for every other stream used.
  void finish();

 private:
  cuda::CUDAStream caller(int device);
  std::vector<cuda::CUDAStream> callers_;  // the caller's current stream of each device seen
  std::vector<cuda::CUDAStream> used_;
};

}  // namespace gb::autograd
