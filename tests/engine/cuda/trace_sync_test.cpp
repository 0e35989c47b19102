// tests/engine/cuda/trace_sync_test.cpp — engine/cuda/trace_sync.cpp on the CPU, the device wait injected: the
// trace's end waits for every used device and no other, a device that fails to wait is a warning and the others are
// still waited for, and a bad index the last kernels found stays for the program's next synchronization (the hook
// never reads or clears the device-error records). tests/engine/cuda/trace_sync_gpu_test.cpp runs it on a device.
#include <vector>

#include "cuda/device_error.h"
#include "cuda/used_devices.h"
#include "support/check.h"

namespace {
namespace ts {
std::vector<int> g_waited;
gb::cuda_kernels::DeviceError* g_record = nullptr;  // what "the device" writes while the hook waits for it

void wait_ok(int device) { g_waited.push_back(device); }
void wait_failing_on_1(int device) {
  g_waited.push_back(device);
  if (device == 1) throw gb::Error("cudaDeviceSynchronize failed: an illegal memory access was encountered");
}
#ifdef GLASSBOX_WITH_CUDA
// The last kernel of cuda:2 finds index 10 of a dim of size 10 while the hook waits (device_error.h's protocol).
void wait_finding_bad_index(int device) {
  g_waited.push_back(device);
  g_record->flag = 1;
  g_record->op = "index_select";
  g_record->dim = 0;
  g_record->index = 10;
  g_record->size = 10;
  __atomic_store_n(&g_record->ready, 1u, __ATOMIC_RELEASE);
}
#endif
}  // namespace ts
}  // namespace

TEST_CASE("the trace's end waits for every used device, a failure only warns, and the others are waited for") {
  ts::g_waited.clear();
  gb::cuda_kernels::wait_at_trace_end((1u << 0) | (1u << 3) | (std::uint64_t(1) << 63), ts::wait_ok);
  CHECK(ts::g_waited == std::vector<int>{0, 3, 63});
  ts::g_waited.clear();
  gb::cuda_kernels::wait_at_trace_end(0b111, ts::wait_failing_on_1);  // noexcept: a throw would terminate
  CHECK(ts::g_waited == std::vector<int>{0, 1, 2});
  ts::g_waited.clear();
  gb::cuda_kernels::wait_at_trace_end(0, ts::wait_ok);
  CHECK(ts::g_waited.empty());
}

#ifdef GLASSBOX_WITH_CUDA
TEST_CASE("a bad index found by the trace's last kernels is raised to the program after the trace's end") {
  gb::cuda_kernels::DeviceError record;
  gb::cuda_kernels::set_device_error_record_for_test(2, &record);
  ts::g_record = &record;
  ts::g_waited.clear();
  gb::cuda_kernels::wait_at_trace_end(1u << 2, ts::wait_finding_bad_index);
  CHECK(ts::g_waited == std::vector<int>{2});
  CHECK_THROWS_WITH_AS(gb::cuda_kernels::raise_device_errors(),
                       doctest::Contains("index_select() on cuda:2: index 10 is out of bounds for dimension 0 with "
                                         "size 10"),
                       gb::IndexError);
  CHECK_NOTHROW(gb::cuda_kernels::raise_device_errors());  // raised once
  gb::cuda_kernels::set_device_error_record_for_test(2, nullptr);
}
#endif
