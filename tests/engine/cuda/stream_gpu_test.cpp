// tests/engine/cuda/stream_gpu_test.cpp — GPU tier: streams, guards and events (engine/cuda/stream.cu), and the
// caching allocator's pools per stream: work launched under a CUDAStreamGuard runs on that stream, a block freed on
// one stream is not handed to another, events order two streams and time them.
#include <set>
#include <string>
#include <thread>

#include "support/check.h"

using gbtest::kGpu;

TEST_CASE("the current stream is the default until a guard sets another, per thread") {
  gb::cuda::CUDAStream def = gb::cuda::getDefaultCUDAStream();
  CHECK(gb::cuda::getCurrentCUDAStream() == def);
  CHECK(def.id() == 0);
  gb::cuda::CUDAStream side = gb::cuda::getStreamFromPool();
  CHECK(side != def);
  CHECK(side.device() == kGpu);
  {
    gb::cuda::CUDAStreamGuard guard(side);
    CHECK(gb::cuda::getCurrentCUDAStream() == side);
    CHECK(guard.original_stream() == def);
    std::thread([&] { CHECK(gb::cuda::getCurrentCUDAStream() == def); }).join();  // another thread: its own
  }
  CHECK(gb::cuda::getCurrentCUDAStream() == def);
  // the pool hands out its 32 streams round robin
  std::set<int64_t> ids;
  for (int i = 0; i < 64; ++i) ids.insert(gb::cuda::getStreamFromPool().id());
  CHECK(ids.size() == 32);
  CHECK(gb::cuda::getStreamFromPool(true) != gb::cuda::getStreamFromPool(false));
}

TEST_CASE("kernels under a guard run on its stream, ordered by an event") {
  gb::Tensor x = gb::randn({1 << 20}).to(kGpu);
  gb::cuda::CUDAStream side = gb::cuda::getStreamFromPool();
  gb::cuda::CUDAEvent ready;
  ready.record();  // x is written on the default stream
  gb::Tensor y;
  {
    gb::cuda::CUDAStreamGuard guard(side);
    ready.block(side);
    y = (x * 2 + 1).sum();
  }
  side.synchronize();
  CHECK(side.query());
  CHECK(y.item().to_double() == doctest::Approx((x.cpu() * 2 + 1).sum().item().to_double()).epsilon(1e-5));
}

TEST_CASE("a block freed on one stream is reused on that stream only") {
  gb::memory::empty_cache(kGpu);
  gb::cuda::CUDAStream side = gb::cuda::getStreamFromPool();
  void* on_side = nullptr;
  {
    gb::cuda::CUDAStreamGuard guard(side);
    on_side = gb::empty({1024}, kGpu).data_ptr();  // made and freed on `side`
  }
  void* on_default = gb::empty({1024}, kGpu).data_ptr();
  CHECK(on_default != on_side);  // the default stream got a block of its own
  {
    gb::cuda::CUDAStreamGuard guard(side);
    CHECK(gb::empty({1024}, kGpu).data_ptr() == on_side);  // side's freed block comes back on side
  }
  gb::cuda::synchronize();
}

TEST_CASE("record_stream keeps a block from its own stream until the other stream's work has run") {
  gb::memory::empty_cache(kGpu);
  gb::cuda::CUDAStream side = gb::cuda::getStreamFromPool();
  gb::Tensor big = gb::randn({4096, 4096}).to(kGpu);
  gb::Tensor x = gb::empty({1024}, kGpu);  // made on the default stream
  void* addr = x.data_ptr();
  {
    gb::cuda::CUDAStreamGuard guard(side);
    gb::Tensor acc = big;
    for (int i = 0; i < 20; ++i) acc = gb::mm(acc, big) * 1e-4;  // tens of milliseconds queued on `side`
    x.add_(1);                                                    // x used on `side` too
  }
  x.record_stream(side);
  x = gb::Tensor();  // freed while side's work is still queued
  CHECK(gb::empty({1024}, kGpu).data_ptr() != addr);  // not handed out on the default stream yet
  side.synchronize();
  CHECK(gb::empty({1024}, kGpu).data_ptr() == addr);  // the event completed: back in the pool
  CHECK_THROWS_WITH(gb::ones({2}).record_stream(side), doctest::Contains("expects a tensor on cuda"));
}

TEST_CASE("events time the device's work") {
  gb::cuda::CUDAEvent start(true), end(true);
  gb::Tensor a = gb::randn({1024, 1024}).to(kGpu);
  start.record();
  for (int i = 0; i < 10; ++i) a = gb::mm(a, a) * 1e-3;
  end.record();
  end.synchronize();
  CHECK(end.query());
  CHECK(start.elapsed_time(end) > 0.0f);
  gb::cuda::CUDAEvent untimed;
  untimed.record();
  CHECK_THROWS_WITH(untimed.elapsed_time(end), doctest::Contains("enable_timing=true"));
}

TEST_CASE("devices out of range are refused with the count") {
  const int64_t n = gb::cuda::device_count();
  const std::string want = "this machine has " + std::to_string(n) + " CUDA device(s)";
  CHECK_THROWS_WITH(gb::zeros({1}, gb::Device(gb::kCUDA, int(n))), doctest::Contains(want.c_str()));
  CHECK(gb::cuda::current_device() == 0);
}
