// tests/engine/cuda/device_error_test.cpp — the host side of engine/cuda/device_error.cu on the CPU, a record in
// ordinary memory standing in for a device's: a record is raised only once it is ready (a kernel still writing its
// fields is not read), as gb::IndexError naming the op, the index, the dim, the size and the device, once, and the
// next error is raised too. (tests/engine/cuda/device_error_gpu_test.cpp: kernels writing the real record.)
#include "cuda/device_error.h"
#include "support/check.h"

#ifdef GLASSBOX_WITH_CUDA
TEST_CASE("device-error records: raised once ready, once each, then the next one") {
  namespace ck = gb::cuda_kernels;
  ck::DeviceError record;
  ck::set_device_error_record_for_test(5, &record);
  CHECK_NOTHROW(ck::raise_device_errors());  // nothing recorded

  record.flag = 1;  // a kernel has claimed the record and is writing its fields: not ready, not read
  record.op = "gather";
  CHECK_NOTHROW(ck::raise_device_errors());
  record.dim = 1;
  record.index = -7;
  record.size = 4;
  __atomic_store_n(&record.ready, 1u, __ATOMIC_RELEASE);
  CHECK_THROWS_WITH_AS(ck::raise_device_errors(),
                       doctest::Contains("gather() on cuda:5: index -7 is out of bounds for dimension 1 with size 4"),
                       gb::IndexError);
  CHECK(record.flag == 0);  // free for the next error
  CHECK(record.ready == 0);
  CHECK_NOTHROW(ck::raise_device_errors());

  record.flag = 1;
  record.op = "scatter_add";
  record.index = 9;
  __atomic_store_n(&record.ready, 1u, __ATOMIC_RELEASE);
  CHECK_THROWS_WITH(ck::raise_device_errors(), doctest::Contains("scatter_add() on cuda:5: index 9"));
  ck::set_device_error_record_for_test(5, nullptr);
}
#else
TEST_CASE("without CUDA no device-error record can be made") {
  CHECK_THROWS_WITH(gb::cuda_kernels::device_error(0), doctest::Contains("CUDA is not available"));
}
#endif
