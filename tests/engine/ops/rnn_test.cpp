// tests/engine/ops/rnn_test.cpp — the fused LSTM layer (engine/ops/rnn.cpp): the same outputs and gradients as the
// layer built from its step ops, in both directions, with and without biases, whichever outputs get a gradient;
// gradients against finite differences; the double backward through the step ops; one node; meta; errors.
#include <doctest/doctest.h>

#include <tuple>

#include "glassbox/glassbox.h"
#include "ops/rnn.h"
#include "support/check.h"

namespace {

struct LayerArgs {
  gb::Tensor x, h0, c0, w_ih, w_hh, b_ih, b_hh;
  gb::variable_list list() const { return {x, h0, c0, w_ih, w_hh, b_ih, b_hh}; }
};

LayerArgs make_args(int64_t L, int64_t N, int64_t I, int64_t H, gb::ScalarType dt, bool bias) {
  auto o = gb::TensorOptions().dtype(dt).requires_grad(true);
  LayerArgs a;
  a.x = gb::randn({L, N, I}, o);
  a.h0 = gb::randn({N, H}, o);
  a.c0 = gb::randn({N, H}, o);
  a.w_ih = (gb::randn({4 * H, I}, gb::TensorOptions().dtype(dt)) * 0.5).requires_grad_(true);
  a.w_hh = (gb::randn({4 * H, H}, gb::TensorOptions().dtype(dt)) * 0.5).requires_grad_(true);
  if (bias) {
    a.b_ih = gb::randn({4 * H}, o);
    a.b_hh = gb::randn({4 * H}, o);
  }
  return a;
}

using Layer = std::tuple<gb::Tensor, gb::Tensor, gb::Tensor> (*)(const gb::Tensor&, const gb::Tensor&,
                                                                  const gb::Tensor&, const gb::Tensor&,
                                                                  const gb::Tensor&, const gb::Tensor&,
                                                                  const gb::Tensor&, bool);

// The outputs, and the gradients of a loss that weighs each output differently (which_outputs: bit 0 out, 1 h_n,
// 2 c_n), of layer f.
std::pair<gb::variable_list, gb::variable_list> run(Layer f, const LayerArgs& a, bool reverse, int which_outputs) {
  auto [out, h, c] = f(a.x, a.h0, a.c0, a.w_ih, a.w_hh, a.b_ih, a.b_hh, reverse);
  gb::Tensor loss = gb::zeros({}, a.x.options().requires_grad(false));
  if (which_outputs & 1) loss = loss + (out * gb::linspace(-1, 1, out.numel(), out.options()).view(out.sizes())).sum();
  if (which_outputs & 2) loss = loss + (h * h).sum();
  if (which_outputs & 4) loss = loss + (c * 3.0).sum();
  gb::variable_list inputs;
  for (const auto& t : a.list())
    if (t.defined()) inputs.push_back(t);
  return {{out, h, c}, gb::autograd::grad({loss}, inputs)};
}

}  // namespace

TEST_CASE("lstm_layer: the step ops' outputs and gradients, both directions, with and without biases") {
  gb::manual_seed(4);
  const int threads = gb::get_num_threads();
  // 3 rows: each step's GEMM over the pool; 40 rows on 2 threads: two blocks of rows, each running every step
  for (const auto& setting : {std::pair<int64_t, int>{3, 2}, {40, 2}, {40, 1}})
  for (auto dt : {gb::kFloat64, gb::kFloat32})
    for (bool reverse : {false, true})
      for (bool bias : {true, false})
        for (int which : {1, 2, 4, 7}) {
          const int64_t N = setting.first;  // (no structured binding: CAPTURE's lambda cannot name one in Clang 14)
          const int nthreads = setting.second;
          gb::set_num_threads(nthreads);
          CAPTURE(N);
          CAPTURE(nthreads);
          CAPTURE(gb::to_string(dt));
          CAPTURE(reverse);
          CAPTURE(bias);
          CAPTURE(which);
          LayerArgs a = make_args(5, N, 4, 6, dt, bias);
          auto [fused_out, fused_grads] = run(gb::detail::lstm_layer, a, reverse, which);
          auto [steps_out, steps_grads] = run(gb::detail::lstm_layer_steps, a, reverse, which);
          const double tol = dt == gb::kFloat64 ? 1e-12 : 2e-5;
          for (size_t k = 0; k < 3; ++k) gbtest::check_close(fused_out[k], steps_out[k], tol, tol);
          REQUIRE(fused_grads.size() == steps_grads.size());
          for (size_t k = 0; k < fused_grads.size(); ++k) {
            CAPTURE(k);
            gbtest::check_close(fused_grads[k], steps_grads[k], tol, tol);
          }
        }
  gb::set_num_threads(threads);
}

TEST_CASE("lstm_layer: gradients against finite differences (float64), one node for the layer") {
  gb::manual_seed(5);
  LayerArgs a = make_args(3, 2, 3, 2, gb::kFloat64, true);
  CHECK(gbtest::gradcheck1(
      [](const gb::variable_list& v) {
        auto [out, h, c] = gb::detail::lstm_layer(v[0], v[1], v[2], v[3], v[4], v[5], v[6], false);
        return gb::cat({out.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
      },
      a.list()));
  auto [out, h, c] = gb::detail::lstm_layer(a.x, a.h0, a.c0, a.w_ih, a.w_hh, a.b_ih, a.b_hh, false);
  REQUIRE(out.grad_fn());
  CHECK(out.grad_fn()->name() == "LstmLayerBackward0");
  CHECK(h.grad_fn() == out.grad_fn());  // one node, three outputs
  CHECK(c.grad_fn() == out.grad_fn());
  CHECK(out.grad_fn()->next_edges().size() == 7);
}

TEST_CASE("lstm_layer: the double backward (create_graph) is the step ops' double backward") {
  gb::manual_seed(6);
  LayerArgs a = make_args(3, 2, 3, 2, gb::kFloat64, true);
  CHECK(gbtest::gradgradcheck1(
      [](const gb::variable_list& v) {
        auto [out, h, c] = gb::detail::lstm_layer(v[0], v[1], v[2], v[3], v[4], v[5], v[6], true);
        return out.sum() + (c * c).sum();
      },
      {a.x, a.h0, a.c0, a.w_ih, a.w_hh, a.b_ih, a.b_hh}));
}

TEST_CASE("lstm_layer: on meta the shapes and no values; errors name the argument and the shape expected") {
  auto m = gb::TensorOptions().device(gb::kMeta);
  auto [out, h, c] = gb::detail::lstm_layer(gb::empty({7, 3, 4}, m), gb::empty({3, 5}, m), gb::empty({3, 5}, m),
                                            gb::empty({20, 4}, m), gb::empty({20, 5}, m), gb::empty({20}, m),
                                            gb::empty({20}, m), false);
  CHECK(out.sizes() == gb::IntArrayRef({7, 3, 5}));
  CHECK(h.sizes() == gb::IntArrayRef({3, 5}));
  CHECK(c.device().is_meta());

  LayerArgs a = make_args(2, 3, 4, 5, gb::kFloat32, true);
  CHECK_THROWS_WITH(gb::detail::lstm_layer(a.x, a.h0, a.c0, a.w_hh, a.w_hh, a.b_ih, a.b_hh, false),
                    doctest::Contains("weight_ih should be (4H, I) = (20, 4), but got [20, 5]"));
  CHECK_THROWS_WITH(gb::detail::lstm_layer(a.x, a.h0.t(), a.c0, a.w_ih, a.w_hh, a.b_ih, a.b_hh, false),
                    doctest::Contains("the initial states should be (N, H) = (3, 5)"));
  CHECK_THROWS_WITH(gb::detail::lstm_layer(a.x, a.h0, a.c0, a.w_ih, a.w_hh, a.b_ih, {}, false),
                    doctest::Contains("give both biases or neither"));
  CHECK_THROWS_WITH(gb::detail::lstm_layer(a.x, a.h0, a.c0, a.w_ih, a.w_hh.to(gb::kFloat64), a.b_ih, a.b_hh, false),
                    doctest::Contains("should be of the input's dtype"));
}
