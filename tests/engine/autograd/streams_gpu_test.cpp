// GPU tier for engine/autograd/streams.cpp: backward runs each node on the stream its forward ran on (PyTorch's
// rule), gradients handed across streams wait for their sender, and the caller's stream sees finished .grad values.
#include "support/check.h"

using gbtest::kGpu;

namespace {

// Doubles its input; its backward notes the stream it ran on.
cudaStream_t g_backward_stream = nullptr;
struct Twice : gb::autograd::Function<Twice> {
  static gb::Tensor forward(gb::autograd::AutogradContext*, gb::Tensor x) { return x * 2; }
  static gb::variable_list backward(gb::autograd::AutogradContext*, gb::variable_list grads) {
    g_backward_stream = gb::cuda::getCurrentCUDAStream().stream();
    return {grads[0] * 2};
  }
};

}  // namespace

TEST_CASE("gpu: a forward on a side stream has its backward there; the caller's stream sees the gradients") {
  gb::manual_seed(71);
  const gb::cuda::CUDAStream side = gb::cuda::getStreamFromPool();
  const gb::cuda::CUDAStream caller = gb::cuda::getCurrentCUDAStream();
  REQUIRE(side != caller);
  gb::Tensor w = gb::randn({512, 512}).to(kGpu).requires_grad_(true);
  gb::Tensor x = gb::randn({256, 512}).to(kGpu);
  gb::Tensor y;
  {
    gb::cuda::CUDAStreamGuard guard(side);
    y = Twice::apply(x.mm(w)).tanh();  // recorded on `side`
  }
  CHECK(y.grad_fn()->stream == static_cast<void*>(side.stream()));
  CHECK(y.grad_fn()->stream_device == side.device_index());
  y.sum().backward();  // from the caller's (default) stream
  CHECK(g_backward_stream == side.stream());
  CHECK(gb::cuda::getCurrentCUDAStream() == caller);  // restored
  // no explicit synchronize: the copy to the host runs on the caller's stream, which waited for `side`
  gb::Tensor wc = w.detach().cpu().requires_grad_(true);
  (gb::tanh(x.cpu().mm(wc) * 2)).sum().backward();
  gbtest::check_close(w.grad().cpu(), wc.grad(), 1e-4, 1e-4);
}

TEST_CASE("gpu: two branches on two streams meet in one node; the sum waits for both") {
  gb::manual_seed(72);
  const gb::cuda::CUDAStream s1 = gb::cuda::getStreamFromPool(), s2 = gb::cuda::getStreamFromPool();
  gb::Tensor a = gb::randn({1024, 1024}).to(kGpu).requires_grad_(true);
  gb::Tensor b1, b2;
  {
    gb::cuda::CUDAStreamGuard g(s1);
    b1 = a.mm(a).sin();
  }
  {
    gb::cuda::CUDAStreamGuard g(s2);
    b2 = a.mm(a.t()).cos();
  }
  (b1 + b2).sum().backward();
  gb::Tensor ac = a.detach().cpu().requires_grad_(true);
  (ac.mm(ac).sin() + ac.mm(ac.t()).cos()).sum().backward();
  gbtest::check_close(a.grad().cpu(), ac.grad(), 1e-3, 1e-3);
}
