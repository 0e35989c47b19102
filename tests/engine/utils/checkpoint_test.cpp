// tests/engine/utils/checkpoint_test.cpp — non-reentrant checkpointing: gradients bit for bit equal to the plain
// computation (dropout included), inputs with and without requires_grad, parameters inside fn, retain_graph,
// the memory it saves (allocator peak and activation bytes), and the recomputation errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "glassbox/amp/autocast.h"
#include "glassbox/memory/memory.h"
#include "glassbox/utils/checkpoint.h"
#include "support/check.h"

namespace {

struct BlockImpl : gb::nn::Module {
  BlockImpl(int64_t in, int64_t out, double p) : p(p) {
    weight = register_parameter("weight", gb::randn({out, in}) * (1.0 / std::sqrt(double(in))));
    bias = register_parameter("bias", gb::randn({out}) * 0.1);
  }
  gb::Tensor forward(const gb::Tensor& x) {
    return gb::dropout(gb::relu(gb::linear(x, weight, bias)), p, is_training());
  }
  double p;
  gb::Tensor weight, bias;
};
GB_MODULE(Block);

gb::nn::Sequential make_mlp(int64_t depth, int64_t width, double p, uint64_t seed) {
  gb::manual_seed(seed);
  gb::nn::Sequential net;
  for (int64_t i = 0; i < depth; ++i) net->push_back(Block(width, width, p));
  return net;
}

// Same dtype, shape and bytes.
bool bitwise_equal(const gb::Tensor& a, const gb::Tensor& b) {
  if (!a.defined() || !b.defined() || a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  gb::Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), size_t(ca.numel()) * gb::element_size(ca.scalar_type())) == 0;
}

std::vector<gb::Tensor> grads_of(const gb::nn::Sequential& net) {
  std::vector<gb::Tensor> g;
  for (const auto& p : net->parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : gb::Tensor());
  return g;
}

}  // namespace

TEST_CASE("an MLP with dropout: checkpointed gradients equal the plain ones bit for bit (RNG preserved)") {
  auto net = make_mlp(4, 16, 0.3, 1);
  gb::manual_seed(2);
  auto x0 = gb::randn({8, 16});

  for (bool input_requires_grad : {true, false}) {
    CAPTURE(input_requires_grad);
    gb::Tensor x = x0.clone().requires_grad_(input_requires_grad);
    net->zero_grad();
    gb::manual_seed(42);
    gb::Tensor plain = net(x);
    plain.pow(2).sum().backward();
    auto plain_grads = grads_of(net);
    gb::Tensor plain_xg = input_requires_grad ? x.grad().clone() : gb::Tensor();
    std::string rng_after_plain = gb::default_generator().get_state();

    gb::Tensor x2 = x0.clone().requires_grad_(input_requires_grad);
    net->zero_grad();
    gb::manual_seed(42);
    gb::Tensor ck = gb::utils::checkpoint([&](const gb::Tensor& in) { return net(in); }, x2);
    ck.pow(2).sum().backward();
    CHECK(gb::default_generator().get_state() == rng_after_plain);  // recomputation put the generator back
    CHECK(bitwise_equal(ck, plain));
    auto ck_grads = grads_of(net);
    REQUIRE(ck_grads.size() == 8);
    for (size_t i = 0; i < ck_grads.size(); ++i) {
      CAPTURE(i);
      CHECK(bitwise_equal(ck_grads[i], plain_grads[i]));
    }
    if (input_requires_grad)
      CHECK(bitwise_equal(x2.grad(), plain_xg));
    else
      CHECK(!x2.grad().defined());
  }
}

TEST_CASE("without preserve_rng_state the recomputed dropout masks differ (so the test above can fail)") {
  auto net = make_mlp(2, 16, 0.5, 3);
  gb::manual_seed(4);
  auto x = gb::randn({8, 16});
  net->zero_grad();
  gb::manual_seed(9);
  net(x).sum().backward();
  auto plain = grads_of(net);
  net->zero_grad();
  gb::manual_seed(9);
  gb::utils::checkpoint([&](const gb::Tensor& in) { return net(in); }, x, /*preserve_rng_state=*/false)
      .sum()
      .backward();
  auto ck = grads_of(net);
  CHECK(!bitwise_equal(ck[0], plain[0]));
}

TEST_CASE("several inputs, one without requires_grad, a parameter captured by fn, and retain_graph") {
  auto f64 = gb::TensorOptions().dtype(gb::kDouble);
  auto a = gb::tensor({0.3, -0.7, 1.1}, f64).requires_grad_(true);
  auto b = gb::tensor({2.0, 0.5, -1.0}, f64);  // no grad
  auto w = gb::tensor({1.5, -2.0, 0.25}, f64).requires_grad_(true);
  auto fn = [&](const gb::variable_list& in) {
    gb::Tensor h = gb::tanh(in[0] * w) * in[1];
    return gb::variable_list{h.exp(), h.sin()};
  };
  auto outs = gb::utils::checkpoint(fn, {a, b});
  REQUIRE(outs.size() == 2);
  gb::Tensor loss = (outs[0] + outs[1] * 3).sum();
  loss.backward({}, /*retain_graph=*/true);
  gb::Tensor ga = a.grad().clone(), gw = w.grad().clone();
  // by hand: h = tanh(a w) b; dL/dh = exp(h) + 3 cos(h); dh/da = (1 - tanh^2) w b; dh/dw = (1 - tanh^2) a b
  auto av = gbtest::values(a), bv = gbtest::values(b), wv = gbtest::values(w);
  std::vector<double> ea, ew;
  for (int i = 0; i < 3; ++i) {
    double t = std::tanh(av[i] * wv[i]), h = t * bv[i], dl = std::exp(h) + 3 * std::cos(h);
    ea.push_back(dl * (1 - t * t) * wv[i] * bv[i]);
    ew.push_back(dl * (1 - t * t) * av[i] * bv[i]);
  }
  gbtest::check_values(ga, ea, 1e-12);
  gbtest::check_values(gw, ew, 1e-12);
  CHECK(!b.grad().defined());
  // a second backward through the retained graph recomputes again and accumulates the same amounts
  loss.backward();
  gbtest::check_values(a.grad(), {2 * ea[0], 2 * ea[1], 2 * ea[2]}, 1e-12);
  CHECK_THROWS_WITH_AS(loss.backward(), doctest::Contains("backward through the graph a second time"), gb::Error);
}

TEST_CASE("checkpoint_sequential lowers the allocator's peak and the activation bytes held after forward") {
  // 24 blocks of width 256 on a batch of 512: each block keeps its input, ReLU output and dropout mask (~1.5 MiB)
  const int64_t depth = 24, width = 256, batch = 512;
  auto net = make_mlp(depth, width, 0.1, 5);
  gb::manual_seed(6);
  auto x = gb::randn({batch, width});
  const auto activation = size_t(gb::memory::Category::activation);

  auto run = [&](int64_t segments, int64_t& activation_after_forward, int64_t& peak_over_start) {
    net->zero_grad();
    gb::memory::reset_peak_stats(gb::kCPU);
    int64_t start = gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].current;
    gb::manual_seed(7);
    gb::Tensor out = segments ? gb::utils::checkpoint_sequential(net, segments, x) : net(x);
    activation_after_forward = gb::memory::memory_stats(gb::kCPU).allocated_bytes_by_category[activation].current;
    out.pow(2).mean().backward();
    out = gb::Tensor();
    peak_over_start = gb::memory::memory_stats(gb::kCPU).allocated_bytes[gb::memory::kAll].peak - start;
    return grads_of(net);
  };
  int64_t act_plain = 0, peak_plain = 0, act_ck = 0, peak_ck = 0;
  auto g_plain = run(0, act_plain, peak_plain);
  auto g_ck = run(6, act_ck, peak_ck);
  MESSAGE("activation bytes after forward: plain ", act_plain, ", checkpointed ", act_ck, "; peak over start: plain ",
          peak_plain, ", checkpointed ", peak_ck);
  for (size_t i = 0; i < g_plain.size(); ++i) CHECK(bitwise_equal(g_ck[i], g_plain[i]));
  const int64_t block_bytes = batch * width * 4;  // one (N, D) float32 activation
  // plain: ~3 tensors per block stay saved (input, relu output, mask); checkpointed with 6 segments: the inputs
  // of 5 checkpointed segments plus the 4 uncheckpointed last blocks' saves
  CHECK(act_plain >= 2 * depth * block_bytes);
  CHECK(act_ck <= act_plain / 3);
  // measured: 37.7 MB -> 6.3 MB of activations, peak 39.8 MB -> 13.7 MB; require the peak to at least halve
  CHECK(2 * peak_ck <= peak_plain);
}

TEST_CASE("recomputation that saves a different number or shape of tensors is an error") {
  auto x = gb::tensor({0.5, 1.0}).requires_grad_(true);
  {
    int calls = 0;
    auto fn = [&](const gb::Tensor& in) { return ++calls == 1 ? in.exp() : in.exp().exp(); };
    gb::Tensor y = gb::utils::checkpoint(fn, x);
    CHECK_THROWS_WITH_AS(y.sum().backward(), doctest::Contains("trying to save more tensors during recomputation"),
                         gb::Error);
  }
  {
    int calls = 0;
    auto fn = [&](const gb::Tensor& in) { return ++calls == 1 ? in.exp().exp() : in.exp() * 1.0; };
    gb::Tensor y = gb::utils::checkpoint(fn, x);
    CHECK_THROWS_WITH_AS(y.sum().backward(),
                         doctest::Contains("A different number of tensors was saved during the original forward and "
                                           "recomputation.\nNumber of tensors saved during forward: 2\nNumber of "
                                           "tensors saved during recomputation: 1"),
                         gb::Error);
  }
  {
    int calls = 0;
    auto fn = [&](const gb::Tensor& in) { return ++calls == 1 ? in.exp().sum() : gb::cat({in, in}).exp().sum(); };
    gb::Tensor y = gb::utils::checkpoint(fn, x);
    CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("have different metadata than during the forward pass"),
                         gb::Error);
  }
  auto net = make_mlp(3, 4, 0.0, 8);
  CHECK_THROWS_WITH_AS(gb::utils::checkpoint_sequential(net, 4, gb::randn({2, 4})),
                       doctest::Contains("segments must be between 1 and the number of modules (3)"), gb::Error);
}

TEST_CASE("a checkpoint inside an autocast region recomputes under the same autocast settings") {
  auto net = make_mlp(3, 8, 0.0, 10);
  gb::manual_seed(11);
  auto x = gb::randn({4, 8});
  auto run = [&](bool ck) {
    net->zero_grad();
    gb::Tensor out;
    {
      gb::autocast ac(gb::kCPU);
      out = ck ? gb::utils::checkpoint([&](const gb::Tensor& in) { return net(in); }, x) : net(x);
    }
    CHECK(out.scalar_type() == gb::kBFloat16);
    out.to(gb::kFloat).pow(2).sum().backward();  // outside the region: recomputation must re-enter it
    return grads_of(net);
  };
  auto plain = run(false);
  auto ck = run(true);
  for (size_t i = 0; i < plain.size(); ++i) CHECK(bitwise_equal(ck[i], plain[i]));
}

TEST_CASE("under no_grad checkpoint just runs fn") {
  auto w = gb::tensor({2.0f}).requires_grad_(true);
  int calls = 0;
  gb::NoGradGuard ng;
  gb::Tensor y = gb::utils::checkpoint(
      [&](const gb::Tensor& in) {
        ++calls;
        return in * w;
      },
      gb::tensor({3.0f}));
  CHECK(calls == 1);
  CHECK(!y.requires_grad());
  CHECK(y.item<float>() == 6.0f);
}
