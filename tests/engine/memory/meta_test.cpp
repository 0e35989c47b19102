// tests/engine/memory/meta_test.cpp — the meta device end to end: every op runs on meta through the same op entries
// as on the cpu (engine/core/make.h: check_cpu_meta_device admits cpu and meta, skip_kernel stops the innermost loops), so a
// program's allocator numbers on meta equal a real cpu run's exactly: stats and snapshots (sizes, offsets, states,
// categories, ops) at every checkpoint of an MLP training step and of a conv net's forward/backward. Ops that must
// read values refuse meta tensors with a clear error; mixing cpu and meta is PyTorch's same-device error.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <glassbox/glassbox.h>

#include "memory_test_util.h"

namespace mem = gb::memory;
using gbtest::allocated;
namespace F = gb::nn::functional;

namespace {

gb::TensorOptions on(gb::Device d) { return gb::TensorOptions().device(d); }

// An allocator's state as text, without what differs between devices by design: addresses (meta's are fake),
// segment ids (per allocator) and the running totals from before the program started (subtracted).
class Recorder {
 public:
  explicit Recorder(gb::Device d) : d_(d) {
    mem::empty_cache(d);
    mem::reset_peak_stats(d);
    start_ = mem::memory_stats_map(d);
  }
  void check(const std::string& where) {
    std::ostringstream os;
    os << "== " << where << "\n";
    for (const auto& [key, value] : mem::memory_stats_map(d_)) {
      const bool running = key.ends_with(".allocated") || key.ends_with(".freed") || key == "num_alloc_retries" ||
                           key == "num_ooms";
      os << key << " " << (running ? value - start_[key] : value) << "\n";
    }
    int seg = 0;
    for (const auto& s : mem::snapshot(d_).segments) {
      os << "segment " << seg++ << " size " << s.total_size << " allocated " << s.allocated_size << " requested "
         << s.requested_size << " stream " << s.stream << (s.is_small ? " small" : " large") << "\n";
      for (const auto& b : s.blocks)
        os << "  +" << b.offset << " " << b.size << " req " << b.requested_size << " " << mem::to_string(b.state) << " "
           << mem::to_string(b.category) << " op '" << b.op << "' module '" << b.module << "'\n";
    }
    marks.push_back(os.str());
  }
  std::vector<std::string> marks;

 private:
  gb::Device d_;
  std::map<std::string, int64_t> start_;
};

// Two training steps of a 3-layer MLP written out like samples/train_mlp.cpp: forward, cross_entropy, backward,
// SGD with momentum. Values do not matter (and do not exist on meta); sizes and order do.
std::vector<std::string> mlp_program(gb::Device d) {
  Recorder rec(d);
  {
    gb::manual_seed(0);
    const int64_t N = 64, D = 784, H = 1024, C = 10;  // 3-4 MiB weights: large-pool segments too
    auto param = [&](std::vector<int64_t> s) { return (gb::rand(s, on(d)) * 0.2 - 0.1).requires_grad_(); };
    std::vector<gb::Tensor> params = {param({H, D}), param({H}), param({H, H}), param({H}), param({C, H}), param({C})};
    std::vector<gb::Tensor> velocity;
    {
      mem::CategoryGuard cat(mem::Category::optimizer_state);
      for (auto& p : params) velocity.push_back(gb::zeros_like(p));
    }
    rec.check("model");
    for (int step = 0; step < 2; ++step) {
      gb::Tensor x, y;
      {
        mem::CategoryGuard cat(mem::Category::input);
        x = gb::randn({N, D}, on(d));
        y = gb::randint(0, C, {N}, on(d).dtype(gb::kInt64));
      }
      auto h = F::relu(F::linear(x, params[0], params[1]));
      h = gb::dropout(F::relu(F::linear(h, params[2], params[3])), 0.1, true);
      auto loss = F::cross_entropy(F::linear(h, params[4], params[5]), y);
      rec.check("forward " + std::to_string(step));
      for (auto& p : params) p.mutable_grad() = gb::Tensor();
      loss.backward();
      rec.check("backward " + std::to_string(step));
      {
        gb::NoGradGuard no_grad;
        for (size_t i = 0; i < params.size(); ++i) {
          velocity[i].mul_(0.9).add_(params[i].grad());
          params[i].sub_(velocity[i], 0.1);
        }
      }
      rec.check("update " + std::to_string(step));
    }
  }
  rec.check("freed");
  mem::empty_cache(d);
  rec.check("empty_cache");
  return rec.marks;
}

// A small conv net: conv-bn-relu-pool twice, then a linear head; forward, cross_entropy, backward.
std::vector<std::string> conv_program(gb::Device d) {
  Recorder rec(d);
  {
    const int64_t N = 32, C = 10;  // 2 MiB feature maps: large-pool segments too
    auto param = [&](std::vector<int64_t> s) { return gb::randn(s, on(d)).requires_grad_(); };
    auto w1 = param({16, 3, 3, 3}), b1 = param({16}), g1 = param({16}), be1 = param({16});
    auto w2 = param({32, 16, 3, 3}), b2 = param({32});
    auto w3 = param({C, 32}), b3 = param({C});
    auto rm = gb::zeros({16}, on(d)), rv = gb::ones({16}, on(d));
    auto x = gb::randn({N, 3, 32, 32}, on(d));
    auto y = gb::randint(0, C, {N}, on(d).dtype(gb::kInt64));
    auto h = gb::conv2d(x, w1, b1, {1}, {1});
    h = gb::max_pool2d(F::relu(gb::batch_norm(h, g1, be1, rm, rv, true, 0.1, 1e-5)), {2});
    h = gb::avg_pool2d(gb::gelu(gb::conv2d(h, w2, b2, {2}, {1})), {2});
    h = gb::adaptive_avg_pool2d(h, {1, 1}).flatten(1);
    auto loss = gb::cross_entropy(F::linear(h, w3, b3), y, {}, gb::kMean, -100, 0.1);
    rec.check("forward");
    loss.backward();
    rec.check("backward");
  }
  rec.check("freed");
  return rec.marks;
}

void check_equal(const std::vector<std::string>& cpu, const std::vector<std::string>& meta) {
  REQUIRE(cpu.size() == meta.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    CAPTURE(i);
    CHECK(cpu[i] == meta[i]);
  }
}

}  // namespace

TEST_CASE("an MLP training step on meta gives the cpu run's stats and snapshots exactly, and computes nothing") {
  const gb::Device cpu(gb::kCPU), meta(gb::kMeta);
  REQUIRE(allocated(cpu) == 0);  // the comparison needs both allocators to start empty
  REQUIRE(allocated(meta) == 0);
  auto on_cpu = mlp_program(cpu);
  const int64_t cpu_allocs_before = mem::memory_stats(cpu).allocation[mem::kAll].allocated;
  auto on_meta = mlp_program(meta);
  CHECK(mem::memory_stats(cpu).allocation[mem::kAll].allocated == cpu_allocs_before);  // nothing leaked to the cpu
  check_equal(on_cpu, on_meta);
  if (std::getenv("GLASSBOX_DUMP_META_TEST")) std::fputs(on_meta[2].c_str(), stdout);  // evidence, on request
  // The checkpoints are not trivially equal: they saw real memory (parameters, activations, gradients, momentum).
  CHECK(on_cpu[1].find("allocated_bytes.by_category.activation.current 0\n") == std::string::npos);
  CHECK(on_cpu[2].find("allocated_bytes.by_category.gradient.current 0\n") == std::string::npos);
  CHECK(on_cpu[3].find("allocated_bytes.by_category.optimizer_state.current 0\n") == std::string::npos);
  CHECK(on_meta.back().find("reserved_bytes.all.current 0\n") != std::string::npos);
}

TEST_CASE("a conv net's forward and backward on meta gives the cpu run's stats and snapshots exactly") {
  const gb::Device cpu(gb::kCPU), meta(gb::kMeta);
  REQUIRE(allocated(cpu) == 0);
  REQUIRE(allocated(meta) == 0);
  auto on_cpu = conv_program(cpu);
  auto on_meta = conv_program(meta);
  check_equal(on_cpu, on_meta);
  CHECK(on_cpu[0].find("allocated_bytes.by_category.activation.current 0\n") == std::string::npos);
}

TEST_CASE("ops run on meta: shapes, dtypes and autograd as on the cpu, no values") {
  auto a = gb::randn({4, 8}, on(gb::kMeta).requires_grad(true));
  auto b = gb::randn({8, 3}, on(gb::kMeta));
  auto c = (a.matmul(b).relu() + 1.0).softmax(1);
  CHECK(c.is_meta());
  CHECK(c.sizes() == gb::IntArrayRef{4, 3});
  CHECK(c.grad_fn() != nullptr);
  c.sum().backward();
  CHECK(a.grad().is_meta());
  CHECK(a.grad().sizes() == a.sizes());
  auto cpu_a = gb::randn({2, 3});
  auto moved = cpu_a.to(gb::Device(gb::kMeta));  // an allocation on meta, no copy
  CHECK(moved.is_meta());
  CHECK(moved.sizes() == cpu_a.sizes());
  moved.copy_(cpu_a);  // into meta: allowed, writes nothing
}

TEST_CASE("ops that must read values refuse meta tensors, naming the op; mixing devices is PyTorch's error") {
  auto t = gb::randn({2, 3}, on(gb::kMeta));
  auto cpu_t = gb::randn({2, 3});
  CHECK_THROWS_WITH_AS(t.sum().item(), doctest::Contains("Tensor.item() cannot be called on meta tensors"), gb::Error);
  CHECK_THROWS_WITH_AS(t.to(gb::Device(gb::kCPU)), doctest::Contains("Cannot copy out of meta tensor; no data!"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(cpu_t.copy_(t), doctest::Contains("copy_: Cannot copy out of meta tensor; no data!"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::equal(t, t), doctest::Contains("equal: Cannot read the values of a meta tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(gb::allclose(t, t), doctest::Contains("allclose: Cannot read the values of a meta tensor"),
                       gb::Error);
  auto idx = gb::randint(0, 3, {4}, on(gb::kMeta).dtype(gb::kInt64));
  CHECK_THROWS_WITH_AS(F::one_hot(idx), doctest::Contains("one_hot: Cannot read the values of a meta tensor"),
                       gb::Error);
  CHECK(F::one_hot(idx, 5).sizes() == gb::IntArrayRef{4, 5});  // with num_classes the shape is known
  CHECK_THROWS_WITH_AS(t.masked_select(t > 0),
                       doctest::Contains("masked_select: Cannot read the values of a meta tensor"), gb::Error);
  CHECK_THROWS_WITH_AS(t + cpu_t, doctest::Contains("add: Expected all tensors to be on the same device, but found at "
                                                    "least two devices, meta and cpu!"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(t.matmul(cpu_t.t()), doctest::Contains("Expected all tensors to be on the same device"),
                       gb::Error);
  CHECK_THROWS_WITH_AS(gb::cat({t, cpu_t}), doctest::Contains("Expected all tensors to be on the same device"),
                       gb::Error);
}
