// tests/engine/memory/memory_test.cpp — the per-device allocators behind tensors: freeing a tensor returns its
// block to the cache, empty_cache returns segments, no_grad lowers the peak, meta tensors have addresses but no
// data, a capacity turns a cpu or meta run into a GPU of that size, and blocks can be re-tagged.
#include <doctest/doctest.h>

#include <sstream>

#include <glassbox/glassbox.h>

#include "memory_test_util.h"

namespace mem = gb::memory;
using gbtest::MiB;
using gbtest::allocated;
using gbtest::reserved;
namespace F = gb::nn::functional;

TEST_CASE("dropping a tensor's last reference returns its block to the cache; empty_cache returns the segment") {
  const gb::Device cpu(gb::kCPU);
  mem::empty_cache(cpu);
  const int64_t a0 = allocated(cpu), r0 = reserved(cpu);
  {
    auto t = gb::empty({1024, 1024});  // 4 MiB of float32: a 20 MiB large-pool segment
    CHECK(allocated(cpu) == a0 + 4 * MiB);
    CHECK(reserved(cpu) == r0 + 20 * MiB);
    auto v = t.view({-1});  // a view shares the block
    t = gb::Tensor();
    CHECK(allocated(cpu) == a0 + 4 * MiB);
  }
  CHECK(allocated(cpu) == a0);
  CHECK(reserved(cpu) == r0 + 20 * MiB);  // cached
  auto again = gb::empty({1024, 1024});   // served from the cache
  CHECK(reserved(cpu) == r0 + 20 * MiB);
  again = gb::Tensor();
  mem::empty_cache(cpu);
  CHECK(reserved(cpu) == r0);
}

TEST_CASE("a forward under NoGradGuard peaks lower than with grad (no saved activations)") {
  const gb::Device cpu(gb::kCPU);
  gb::manual_seed(0);
  auto x = gb::randn({64, 256});
  auto w1 = gb::randn({512, 256}, gb::requires_grad());
  auto w2 = gb::randn({512, 512}, gb::requires_grad());
  auto w3 = gb::randn({10, 512}, gb::requires_grad());
  auto forward = [&] {
    auto h = F::relu(F::linear(x, w1));
    h = (h * h).tanh();
    h = F::relu(F::linear(h, w2));
    return F::linear(h, w3).sum();
  };
  mem::empty_cache(cpu);
  const int64_t base = allocated(cpu);
  mem::reset_peak_stats(cpu);
  int64_t peak_grad = 0, held_grad = 0;
  {
    auto loss = forward();
    held_grad = allocated(cpu) - base;  // the graph keeps the saved activations alive
    peak_grad = mem::memory_stats(cpu).allocated_bytes[mem::kAll].peak - base;
  }
  mem::reset_peak_stats(cpu);
  int64_t peak_no_grad = 0, held_no_grad = 0;
  {
    gb::NoGradGuard no_grad;
    auto loss = forward();
    held_no_grad = allocated(cpu) - base;
    peak_no_grad = mem::memory_stats(cpu).allocated_bytes[mem::kAll].peak - base;
  }
  MESSAGE("peak with grad " << peak_grad << " B, without " << peak_no_grad << " B; held after forward " << held_grad
                            << " vs " << held_no_grad);
  const int64_t hidden = 64 * 512 * 4;  // one (64, 512) float32 activation
  CHECK(held_no_grad == 512);           // just the loss
  CHECK(held_grad == 3 * hidden + 512);  // saved for backward: relu's output, tanh's output, the second relu's output
  // The peaks: with grad, r1, t and r2 are kept while the next op's output is made (4 hidden at once); without,
  // at most an op's input, output, and the tensor still named h (3 hidden).
  CHECK(peak_grad == 4 * hidden);
  CHECK(peak_no_grad == 3 * hidden);
}

TEST_CASE("meta tensors get addresses and allocator numbers but no data; ops run on them; reading is a clear error") {
  const gb::Device meta(gb::kMeta);
  const int64_t a0 = allocated(meta);
  auto t = gb::empty({2, 3}, gb::TensorOptions().device(gb::kMeta));
  CHECK(t.is_meta());
  CHECK(t.data_ptr() != nullptr);
  CHECK(allocated(meta) == a0 + 512);
  std::ostringstream os;
  os << t;
  CHECK(os.str() == "tensor(..., device='meta', size=(2, 3))");
  for (auto u : {gb::zeros({4}, gb::TensorOptions().device(gb::kMeta)), gb::ones({4}, gb::TensorOptions().device(gb::kMeta)),
                 gb::randn({4}, gb::TensorOptions().device(gb::kMeta)), gb::arange(4, gb::TensorOptions().device(gb::kMeta)),
                 gb::eye(2, gb::TensorOptions().device(gb::kMeta)), gb::rand({4}, gb::TensorOptions().device(gb::kMeta)),
                 gb::randint(0, 3, {4}, gb::TensorOptions().device(gb::kMeta)),
                 gb::linspace(0, 1, 4, gb::TensorOptions().device(gb::kMeta))})
    CHECK(u.is_meta());
  auto s = gb::scalar_tensor(1.5, gb::TensorOptions().device(gb::kMeta));
  CHECK_THROWS_WITH_AS(s.item(), doctest::Contains("Tensor.item() cannot be called on meta tensors"), gb::Error);
  auto u = (t + t).sum({1});  // ops run on meta: a (2, 3) and a (2) block more while both live
  CHECK(u.is_meta());
  CHECK(u.sizes() == gb::IntArrayRef{2});
  CHECK(allocated(meta) == a0 + 3 * 512);  // t, s, u (t + t was freed)
  CHECK_THROWS_WITH_AS(t.to(gb::Device(gb::kCPU)), doctest::Contains("Cannot copy out of meta tensor; no data!"), gb::Error);
  t = gb::Tensor();
  s = gb::Tensor();
  u = gb::Tensor();
  CHECK(allocated(meta) == a0);
}

TEST_CASE("a loop that keeps each step's graph grows memory with retain_graph=true; the default does not") {
  // The way users hit it: `total_loss = total_loss + loss` (no .item()) keeps every step's graph alive; with
  // retain_graph=true each kept graph still holds its saved activations, without it they were freed by backward.
  const gb::Device cpu(gb::kCPU);
  auto run = [&](bool retain) {
    auto w = gb::randn({256, 256}, gb::requires_grad());
    auto total_loss = gb::zeros({});
    std::vector<int64_t> after;
    for (int step = 0; step < 4; ++step) {
      auto x = gb::randn({64, 256});  // 64 KiB, saved by linear
      auto loss = F::relu(F::linear(x, w)).sum();  // relu's (64, 256) output: 64 KiB, saved by relu
      loss.backward({}, retain);
      total_loss = total_loss + loss;
      after.push_back(allocated(cpu));
    }
    return after;
  };
  auto kept = run(true), freed = run(false);
  for (size_t i = 1; i < kept.size(); ++i) {
    CHECK(kept[i] - kept[i - 1] == 2 * 64 * 1024);  // x and relu's output of every step stay
    CHECK(freed[i] == freed[i - 1]);                // flat
  }
}

TEST_CASE("a capacity makes the meta device behave like an 80 GiB GPU: OOM, then free and retry smaller") {
  const gb::Device meta(gb::kMeta);
  mem::empty_cache(meta);
  mem::set_capacity(meta, int64_t(80) << 30);
  CHECK(mem::capacity(meta) == (int64_t(80) << 30));
  std::vector<gb::Tensor> batch;
  for (int i = 0; i < 7; ++i) batch.push_back(gb::empty({int64_t(10) << 28}, gb::TensorOptions().device(gb::kMeta)));  // 10 GiB each
  try {
    auto too_much = gb::empty({int64_t(12) << 28}, gb::TensorOptions().device(gb::kMeta));  // 12 GiB: 82 > 80
    FAIL("expected an OutOfMemoryError");
  } catch (const gb::OutOfMemoryError& e) {
    CHECK(std::string(e.what()).rfind("Meta out of memory. Tried to allocate 12.00 GiB. Device meta has a total capacity "
                                      "of 80.00 GiB of which 10.00 GiB is free.", 0) == 0);
    CHECK(e.allocated() == (int64_t(70) << 30));
  }
  batch.pop_back();  // drop one 10 GiB block (cached)
  auto fits = gb::empty({int64_t(12) << 28}, gb::TensorOptions().device(gb::kMeta));  // retry frees the cache: fits
  CHECK(mem::memory_stats(meta).num_alloc_retries >= 2);
  CHECK(allocated(meta) == (int64_t(72) << 30));
  batch.clear();
  fits = gb::Tensor();
  mem::set_capacity(meta, 0);
  mem::empty_cache(meta);
  CHECK(reserved(meta) == 0);
}

TEST_CASE("a tensor's block is tagged with the thread's category and can be re-tagged through its data pointer") {
  const gb::Device cpu(gb::kCPU);
  auto by = [&](mem::Category c) { return mem::memory_stats(cpu).allocated_bytes_by_category[int(c)].current; };
  const int64_t p0 = by(mem::Category::parameter), a0 = by(mem::Category::activation);
  gb::Tensor w;
  {
    mem::CategoryGuard g(mem::Category::parameter);
    w = gb::randn({256, 256});  // 256 KiB
  }
  CHECK(by(mem::Category::parameter) == p0 + 256 * 1024);
  CHECK(mem::set_category(cpu, w.narrow(0, 10, 2).data_ptr(), mem::Category::activation));  // a view's pointer works
  CHECK(by(mem::Category::parameter) == p0);
  CHECK(by(mem::Category::activation) == a0 + 256 * 1024);
  CHECK(mem::caching_allocator(cpu).category_of(w.data_ptr()) == mem::Category::activation);
  w = gb::Tensor();
  CHECK(by(mem::Category::activation) == a0);
}

TEST_CASE("a build without CUDA says so when asked for cuda's allocator; factories refuse cuda tensors") {
  if (gb::cuda::compiled_with_cuda()) return;
  CHECK_THROWS_WITH_AS(mem::caching_allocator(gb::Device("cuda:0")), doctest::Contains("this build of glassbox has no CUDA"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::empty({2}, gb::TensorOptions().device(gb::kCUDA)), doctest::Contains("cannot use cuda: CUDA is not available: this glassbox was built without CUDA"),
                       gb::Error);
}
