// bench/bench_conv.cpp — conv2d forward + backward (input and weight gradients) shape by shape: glassbox as it
// chooses (oneDNN or im2col + GEMM, conv.cpp), each of its two paths forced, and libtorch, in the same run.
//
// The shapes are the convolutions of bench_models' small CNN and ResNet stack, of samples/train_images, and of a
// larger ResNet stage, from one input channel to 128, 3x3 and 1x1, strided and not. One JSON line per shape and
// pass: value = glassbox as it chooses (ms), peer_value = libtorch (its faster of 1 and `threads` intra-op threads),
// and im2col_ms, glassbox with oneDNN turned off (gb::backends::mkldnn::enabled = false). Where glassbox chooses
// oneDNN, value below im2col_ms is the choice paying; where it chooses im2col the two are the same path.
//   ./build/bench/bench_conv [threads]
#include <glassbox/glassbox.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.h"

namespace {

struct Shape {
  int64_t n, c, o, hw, k, stride, pad, groups = 1;
};

std::string name_of(const Shape& s) {
  return "n" + std::to_string(s.n) + "_c" + std::to_string(s.c) + "_o" + std::to_string(s.o) + "_" +
         std::to_string(s.hw) + "x" + std::to_string(s.hw) + "_k" + std::to_string(s.k) + "_s" +
         std::to_string(s.stride) + (s.groups > 1 ? "_g" + std::to_string(s.groups) : "");
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  gb::set_num_threads(threads);
  const std::vector<Shape> shapes = {
      {64, 1, 16, 28, 3, 1, 1},   {64, 16, 32, 14, 3, 1, 1},  // bench_models' small CNN
      {32, 3, 32, 16, 3, 1, 1},   {32, 32, 32, 16, 3, 1, 1},  // its ResNet stack
      {64, 1, 8, 16, 3, 1, 1},    {64, 8, 16, 8, 3, 1, 1},    // train_images --model small
      {64, 16, 32, 16, 3, 2, 1},  {64, 16, 32, 16, 1, 2, 0},  // train_images --model resnet: a strided block
      {64, 64, 64, 4, 3, 1, 1},                               // its last stage
      {32, 32, 32, 16, 3, 1, 1, 32},                          // depthwise (MobileNet's)
      {8, 64, 64, 56, 3, 1, 1},   {16, 128, 128, 28, 3, 1, 1}, {16, 256, 64, 14, 1, 1, 0},  // a larger ResNet
  };
  for (const Shape& s : shapes) {
    gb::manual_seed(0);
    gb::Tensor x = gb::randn({s.n, s.c, s.hw, s.hw}).requires_grad_();
    gb::Tensor w = (gb::randn({s.o, s.c / s.groups, s.k, s.k}) * 0.1).requires_grad_();
    torch::Tensor tx = torch::randn({s.n, s.c, s.hw, s.hw}).requires_grad_();
    torch::Tensor tw = (torch::randn({s.o, s.c / s.groups, s.k, s.k}) * 0.1).requires_grad_();
    auto ours = [&] {
      gb::Tensor y = gb::conv2d(x, w, {}, s.stride, s.pad, 1, s.groups);
      y.backward(gb::ones_like(y));
      x.mutable_grad() = gb::Tensor();
      w.mutable_grad() = gb::Tensor();
    };
    auto peer = [&] {
      torch::Tensor y = torch::conv2d(tx, tw, {}, s.stride, s.pad, 1, s.groups);
      y.backward(torch::ones_like(y));
      tx.mutable_grad().reset();
      tw.mutable_grad().reset();
    };
    const int inner = s.n * s.c * s.hw * s.hw * s.o * s.k * s.k > (int64_t(1) << 26) ? 1 : 5;
    double chosen = 1e30, im2col = 1e30, lt = 1e30;
    for (int round = 0; round < 2; ++round) {
      gb::backends::mkldnn::enabled = true;
      chosen = std::min(chosen, bench::time_per_call(ours, inner, 0.3));
      gb::backends::mkldnn::enabled = false;
      im2col = std::min(im2col, bench::time_per_call(ours, inner, 0.3));
      gb::backends::mkldnn::enabled = true;
      for (int t : {1, threads}) {
        torch::set_num_threads(t);
        lt = std::min(lt, bench::time_per_call(peer, inner, 0.3));
      }
    }
    char extra[160];
    std::snprintf(extra, sizeof extra, "\"im2col_ms\": %.4f, \"threads\": %d", im2col * 1e3, threads);
    bench::emit("conv", "conv_" + name_of(s) + "_fwd_bwd_ms", chosen * 1e3, "ms", lt * 1e3, extra);
  }
  return 0;
}
