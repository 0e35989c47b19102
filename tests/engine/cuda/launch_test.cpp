// tests/engine/cuda/launch_test.cpp — what a user meets asking for cuda where there is no usable device (this
// machine and CI): one clear error naming the missing piece, from every way in, and no tensor made. (With a
// device, tests/engine/cuda/*_gpu_test.cpp check the kernels themselves.)
#include "cuda/launch.h"

#include <functional>
#include <string>

#include "support/check.h"

namespace {
void check_refused(const std::function<void()>& f) {
  try {
    f();
    FAIL_CHECK("no error");
  } catch (const gb::Error& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find("CUDA is not available: " + gb::cuda::unavailable_reason()) != std::string::npos, what);
  }
}
}  // namespace

TEST_CASE("without a usable device every way to cuda gives the reason") {
  if (gb::cuda::is_available()) return;  // the GPU tier covers this machine
  gb::Tensor x = gb::ones({3});
  gb::nn::Linear lin(2, 2);
  const auto before = gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].current;
  check_refused([] { (void)gb::zeros({2, 3}, gb::kCUDA); });
  check_refused([] { (void)gb::empty({4}, gb::TensorOptions().device("cuda:1")); });
  check_refused([] { (void)gb::randn({2}, gb::TensorOptions().device(gb::kCUDA)); });
  check_refused([] { (void)gb::arange(5, gb::TensorOptions().device(gb::kCUDA)); });
  check_refused([] { (void)gb::tensor({1.0, 2.0}, gb::TensorOptions().device(gb::kCUDA)); });
  check_refused([&] { (void)x.to(gb::kCUDA); });
  check_refused([&] { (void)x.to(gb::Device("cuda:0"), gb::kHalf, /*non_blocking=*/true); });
  check_refused([] { gb::cuda::synchronize(); });
  check_refused([] { (void)gb::cuda::getCurrentCUDAStream(); });
  check_refused([] { (void)gb::cuda::getStreamFromPool(); });
  check_refused([] { (void)gb::cuda::current_device(); });
  check_refused([&] { lin->to(gb::kCUDA); });
  CHECK(lin->weight.device() == gb::Device(gb::kCPU));
  // nothing was left allocated by the refused calls
  CHECK(gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].current == before);
}

TEST_CASE("an op without a CUDA kernel says so and what to do") {
  try {
    gb::detail::throw_no_cuda_kernel("embedding");
    FAIL_CHECK("no error");
  } catch (const gb::Error& e) {
    const std::string what = e.what();
    CHECK(what.rfind("embedding: no CUDA kernel in this build yet", 0) == 0);
    CHECK(what.find(".cpu()") != std::string::npos);
  }
}

TEST_CASE("ops find their kernel by name; parameterised ops name theirs") {
  using gb::cuda_kernels::Pw;
  CHECK(gb::detail::pw_for_name("mul") == Pw::mul);
  CHECK(gb::detail::pw_for_name("mul_") == Pw::mul);
  CHECK(gb::detail::pw_for_name("where") == Pw::where);
  CHECK(gb::detail::pw_for_name("lt") == Pw::lt);
  CHECK(gb::detail::pw_for_name("embedding") == Pw::none);
  CHECK(gb::detail::pw_for_name("_") == Pw::none);
  CHECK(gb::detail::pw_for_name("") == Pw::none);
}

TEST_CASE("a reduction over a run of leading dims of a contiguous input is laid out by columns, with no copy") {
  using gb::detail::column_shape;
  auto x = gb::empty({4096, 1000});
  gb::detail::ColumnShape c = column_shape(x, {true, false});  // a Linear's bias gradient: sum over dim 0
  CHECK(c.outer == 1);
  CHECK(c.len == 4096);
  CHECK(c.inner == 1000);
  c = column_shape(gb::empty({2, 3, 4, 5}), {false, true, true, false});  // a middle run
  CHECK(c.outer == 2);
  CHECK(c.len == 12);
  CHECK(c.inner == 5);
  c = column_shape(gb::empty({2, 1, 3, 4}), {true, false, true, false});  // a kept size-1 dim inside the run
  CHECK(c.len == 6);
  CHECK(c.inner == 4);
  CHECK(column_shape(x, {false, true}).inner == 1);  // trailing dims: rows, as before
  CHECK(column_shape(gb::empty({2, 3, 4}), {true, false, true}).inner == 0);   // two runs: permuted to rows
  CHECK(column_shape(x.t(), {true, false}).inner == 0);                        // not contiguous
  CHECK(column_shape(gb::empty({3, 4}).to(gb::kMeta), {true, false}).inner == 4);  // meta too: shapes only
  CHECK(column_shape(gb::empty({0, 4}), {true, false}).inner == 0);  // empty: the row path (a mean of none is NaN)
}
