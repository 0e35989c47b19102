// tests/engine/autograd/memory_roles_test.cpp — autograd sets memory categories as roles change (memory_roles.h):
// exact bytes per category for a two-layer model after forward, after backward, with retain_graph, and when a graph
// is dropped without backward.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

namespace mem = gb::memory;
namespace F = gb::nn::functional;
using mem::Category;

namespace {
const gb::Device cpu(gb::kCPU);
int64_t by(Category c) { return mem::memory_stats(cpu).allocated_bytes_by_category[int(c)].current; }
int64_t peak_of(Category c) { return mem::memory_stats(cpu).allocated_bytes_by_category[int(c)].peak; }
}  // namespace

TEST_CASE("categories follow roles: parameters, inputs, activations while saved, gradients, autograd_detail") {
  REQUIRE(mem::memory_stats(cpu).allocated_bytes[mem::kAll].current == 0);
  auto w1 = gb::randn({64, 32}, gb::requires_grad());  // 8 KiB
  auto w2 = gb::randn({16, 64}, gb::requires_grad());  // 4 KiB
  gb::Tensor x;
  {
    mem::CategoryGuard cat(Category::input);
    x = gb::randn({8, 32});  // 1 KiB
  }
  CHECK(by(Category::parameter) == 12288);
  CHECK(by(Category::input) == 1024);
  CHECK(by(Category::temporary) == 0);

  for (bool retain : {false, true}) {
    CAPTURE(retain);
    for (auto* w : {&w1, &w2}) w->mutable_grad() = gb::Tensor();
    mem::reset_peak_stats(cpu);
    auto h = F::relu(F::linear(x, w1));  // (8, 64): saved by relu (its output) and by the second linear (its input)
    auto out = F::linear(h, w2);         // (8, 16): nobody saves it
    auto loss = out.sum();
    CHECK(by(Category::activation) == 2048);  // h, once, however many nodes hold it
    CHECK(by(Category::temporary) == 1024);   // out and loss: 512 B blocks
    CHECK(by(Category::parameter) == 12288);  // saved weights stay parameters
    CHECK(by(Category::input) == 1024);       // a saved input stays an input
    CHECK(by(Category::gradient) == 0);
    loss.backward({}, retain);
    CHECK(by(Category::gradient) == 12288);                  // w1.grad, w2.grad
    CHECK(by(Category::activation) == (retain ? 2048 : 0));  // released after their node ran, unless retained
    CHECK(by(Category::temporary) == (retain ? 1024 : 3072));  // h is an ordinary tensor again
    CHECK(by(Category::autograd_detail) == 0);                  // the engine's buffers are gone...
    CHECK(peak_of(Category::autograd_detail) > 0);              // ...but existed during backward
    CHECK(mem::caching_allocator(cpu).category_of(w1.grad().data_ptr()) == Category::gradient);
    if (retain) {
      loss.backward();  // accumulates in place: no new gradient blocks; now the graph is released
      CHECK(by(Category::gradient) == 12288);
      CHECK(by(Category::activation) == 0);
    }
  }
}

TEST_CASE("a graph dropped without backward gives its activations back to temporary") {
  auto w = gb::randn({128, 128}, gb::requires_grad());
  gb::Tensor x;
  {
    mem::CategoryGuard cat(Category::input);  // else x, saved by linear, would be an activation too
    x = gb::randn({32, 128});
  }
  const int64_t temp0 = by(Category::temporary);
  auto h = F::relu(F::linear(x, w));  // 16 KiB, saved by relu
  auto loss = h.sum();
  CHECK(by(Category::activation) == 16384);
  loss = gb::Tensor();  // frees SumBackward -> ReluBackward and its saved output
  CHECK(by(Category::activation) == 16384);  // h's own grad_fn still holds the relu node
  h = h.detach();  // the last reference to the graph goes; the block lives on in the detached tensor
  CHECK(by(Category::activation) == 0);
  CHECK(by(Category::temporary) == temp0 + 16384);
}

TEST_CASE("optimizer state and inputs are named by the caller with a guard; new allocations default to temporary") {
  CHECK(mem::current_category() == Category::temporary);
  auto w = gb::randn({16, 16}, gb::requires_grad());
  gb::Tensor v;
  {
    mem::CategoryGuard cat(Category::optimizer_state);
    v = gb::zeros_like(w);
  }
  CHECK(mem::caching_allocator(cpu).category_of(v.data_ptr()) == Category::optimizer_state);
  CHECK(mem::caching_allocator(cpu).category_of(w.data_ptr()) == Category::parameter);
  CHECK(mem::caching_allocator(cpu).category_of((w * 2).data_ptr()) == Category::temporary);
}
