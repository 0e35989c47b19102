// tests/engine/cuda/conv_cudnn_test.cpp — torch.backends.cudnn's answers on any machine: the build has cuDNN
// exactly when the configure found it (GLASSBOX_EXPECT_CUDNN, from tests/CMakeLists.txt), the library that loads is
// a cuDNN 9 (asked of libcudnn itself: no GPU needed), is_available() needs a device too, and the switches start as
// PyTorch's. The convolutions themselves are in the GPU tier (conv_cudnn_gpu_test.cpp).
#include <cstdlib>
#include <string>

#include "cuda/batch_norm_cudnn.h"
#include "cuda/conv_cudnn.h"
#include "support/check.h"

TEST_CASE("the build has cuDNN exactly when the configure found it, and says which version loads") {
  const bool built = gb::detail::cudnn_built();
  if (const char* expect = std::getenv("GLASSBOX_EXPECT_CUDNN")) CHECK(built == (std::string(expect) == "1"));
  if (!gb::cuda::compiled_with_cuda()) CHECK_FALSE(built);
  const int64_t v = gb::backends::cudnn::version();
  if (built) {
    CHECK(v / 10000 == 9);  // cudnnGetVersion of the libcudnn.so.9 this process loaded: 9.minor.patch
    CHECK(v >= 90000);
  } else {
    CHECK(v == 0);
  }
  CHECK(gb::backends::cudnn::is_available() == (built && gb::cuda::is_available()));
}

TEST_CASE("the switches start as torch.backends.cudnn's, and no algorithm is cached before a convolution") {
  CHECK_FALSE(gb::backends::cudnn::benchmark);
  CHECK_FALSE(gb::backends::cudnn::deterministic);
  CHECK(gb::backends::cudnn::allow_tf32);  // on, unlike torch.backends.cuda.matmul.allow_tf32
  CHECK_FALSE(gb::backends::cuda::matmul::allow_tf32);
  const gb::detail::CudnnCacheStats s = gb::detail::cudnn_cache_stats();
  CHECK(s.cached == 0);
  CHECK(s.timed == 0);
}

TEST_CASE("conv2d on the cpu and meta devices is untouched by the cuDNN path") {
  gb::manual_seed(31);
  gb::Tensor x = gb::randn({2, 3, 7, 7}), w = gb::randn({4, 3, 3, 3}), b = gb::randn({4});
  gb::Tensor y = gb::conv2d(x, w, b, 2, 1);
  CHECK(y.sizes() == std::vector<int64_t>{2, 4, 4, 4});
  gb::Tensor m = gb::conv2d(x.to(gb::kMeta), w.to(gb::kMeta), b.to(gb::kMeta), 2, 1);
  CHECK(m.sizes() == y.sizes());
  CHECK(m.is_meta());
  CHECK(gb::detail::cudnn_cache_stats().cached == 0);
}

TEST_CASE("a build without cuDNN: convolution and batch_norm on cuda say what to install instead of failing later") {
  if (gb::detail::cudnn_built()) {
    MESSAGE("this build has cuDNN (GLASSBOX_HAS_CUDNN): the no-cuDNN errors are checked by a build without it");
    CHECK(gb::backends::cudnn::version() > 0);
    return;
  }
  // Without cuDNN the entries throw before reading any operand, so cpu tensors stand in for cuda ones here.
  const gb::detail::ConvGeom g{1, 1, 3, 3, 1, 1, 1, 3, 3, 1, 1, 0, 0, 1, 1, 1};
  gb::Tensor x = gb::zeros({1, 1, 3, 3}), w = gb::zeros({1, 1, 1, 1});
  CHECK_THROWS_WITH_AS(gb::detail::cudnn_conv_forward(g, x, w, gb::Tensor(), x),
                       doctest::Contains("conv2d on cuda: this build of glassbox has no cuDNN"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::detail::cudnn_conv_backward(g, x, w, x, x, w), doctest::Contains("Install cuDNN 9"),
                       gb::Error);
  gb::Tensor c = gb::zeros({1});
  CHECK_THROWS_WITH_AS(gb::detail::cudnn_batch_norm_forward(x, c, c, x, c, c, true, 0.1, 1e-5, c, c),
                       doctest::Contains("batch_norm on cuda: this build of glassbox has no cuDNN"), gb::Error);
  CHECK(gb::backends::cudnn::version() == 0);
  CHECK_FALSE(gb::backends::cudnn::is_available());
}
