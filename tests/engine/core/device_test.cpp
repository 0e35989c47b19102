// tests/engine/core/device_test.cpp — parsing, printing and comparing devices; tensors refuse devices this build
// has no kernels for, with a message that says what to do.
#include <sstream>

#include "support/check.h"

TEST_CASE("devices parse and unknown devices are explained") {
  CHECK(gb::Device("cuda:1").index() == 1);
  CHECK(gb::Device("cuda:1").type() == gb::kCUDA);  // libtorch's accessors
  CHECK(gb::Device(gb::kCPU).type() == gb::DeviceType::CPU);
  CHECK_FALSE(gb::Device(gb::kCPU).has_index());
  gb::Device d(gb::kCUDA);
  d.set_index(2);
  CHECK(d.str() == "cuda:2");
  CHECK(gb::Device("meta").is_meta());
  CHECK(gb::Device("cuda:1").str() == "cuda:1");
  CHECK_THROWS_WITH_AS(gb::Device("tpu"), doctest::Contains("Expected one of cpu, cuda, meta"), gb::Error);
  if (!gb::cuda::is_available())  // with a device the GPU tier checks the copy itself
    CHECK_THROWS_WITH_AS(gb::ones({2}).to(gb::Device("cuda")),
                         doctest::Contains(("cannot use cuda: CUDA is not available: " + gb::cuda::unavailable_reason()).c_str()),
                         gb::Error);
}

TEST_CASE("device strings round-trip and compare") {
  for (const char* s : {"cpu", "cuda", "cuda:0", "cuda:3", "meta"}) CHECK(gb::Device(s).str() == s);
  CHECK(gb::Device("cuda:0") != gb::Device("cuda:1"));
  CHECK(gb::Device(gb::kCUDA, 2) == gb::Device("cuda:2"));
  CHECK_FALSE(gb::Device("cpu").has_index());
  std::ostringstream os;
  os << gb::Device("cuda:1");
  CHECK(os.str() == "cuda:1");
  CHECK_THROWS_WITH_AS(gb::Device("cuda:x"), doctest::Contains("must be a non-negative integer"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::Device("cpu:1"), doctest::Contains("only cuda devices take an index"), gb::Error);
  if (!gb::cuda::is_available())
    CHECK_THROWS_WITH_AS(gb::zeros({2}, gb::Device("cuda")), doctest::Contains("CUDA is not available"), gb::Error);
}
