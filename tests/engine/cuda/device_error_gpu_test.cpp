// GPU tier for engine/cuda/device_error.cu: a kernel's bad index is raised once, at the next synchronization, as
// gb::IndexError naming the op, the index, the dim and its size; the record is cleared, so a later error is raised
// too, and the device keeps working in between and after (no device-side assert: the context stays usable).
#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("gpu: device errors are raised at the next synchronization, once each, and the device goes on") {
  gb::Tensor a = gb::arange(10).to(gb::kFloat).to(kGpu);
  gb::Tensor bad = gb::index_select(a, 0, gb::tensor(std::vector<int64_t>{2, 10}).to(kGpu));  // no wait here
  CHECK_THROWS_AS(gb::cuda::synchronize(), gb::IndexError);
  gb::cuda::synchronize();  // raised once: nothing left
  CHECK(gb::index_select(a, 0, gb::tensor(std::vector<int64_t>{9}).to(kGpu)).item<float>() == 9.0f);
  gb::gather(a, 0, gb::tensor(std::vector<int64_t>{-1}).to(kGpu));
  CHECK_THROWS_WITH(gb::cuda::getCurrentCUDAStream().synchronize(),
                    doctest::Contains("gather() on cuda:0: index -1 is out of bounds for dimension 0 with size 10"));
  gb::index_select(a, 0, gb::tensor(std::vector<int64_t>{11}).to(kGpu));
  CHECK_THROWS_WITH(a.sum().item<float>(), doctest::Contains("index 11"));  // a blocking copy raises it too
  // recovered: the context was never poisoned, kernels of every kind run and read back right
  gb::Tensor m = gb::mm(a.view({10, 1}), a.view({1, 10}));
  CHECK(m.sum().item<float>() == 2025.0f);
  CHECK(gb::index_select(a, 0, gb::tensor(std::vector<int64_t>{0, 9}).to(kGpu)).cpu().sum().item<float>() == 9.0f);
  gb::cuda::synchronize();
}
