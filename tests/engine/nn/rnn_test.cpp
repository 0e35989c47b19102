// tests/engine/nn/rnn_test.cpp — LSTM, GRU and their cells: parameter names and shapes (PyTorch's), the layouts
// (batch_first, unbatched, bidirectional), a hand-checked step, gradients against finite differences, errors.
#include <doctest/doctest.h>

#include <sstream>

#include "glassbox/glassbox.h"
#include "support/check.h"

namespace nn = gb::nn;

TEST_CASE("LSTM: PyTorch's parameter names and shapes, init bound 1/sqrt(H), output and state shapes") {
  gb::manual_seed(1);
  nn::LSTM lstm(nn::LSTMOptions(5, 4).num_layers(2).bidirectional(true));
  CHECK(lstm->named_parameters().keys() ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                 "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                 "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
                                 "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse",
                                 "bias_hh_l1_reverse"});
  CHECK(lstm->named_parameters()["weight_ih_l1"].sizes() == gb::IntArrayRef({16, 8}));  // input: 2 directions x 4
  for (const auto& p : lstm->parameters()) CHECK(p.abs().max().item<double>() <= 0.5);  // 1/sqrt(4)
  auto [y, state] = lstm(gb::randn({6, 3, 5}));
  CHECK(y.sizes() == gb::IntArrayRef({6, 3, 8}));
  CHECK(std::get<0>(state).sizes() == gb::IntArrayRef({4, 3, 4}));
  CHECK(std::get<1>(state).sizes() == gb::IntArrayRef({4, 3, 4}));
  // the forward direction's last output is its final state; the reverse direction's first output is its final state
  CHECK(gb::allclose(y[5].narrow(1, 0, 4), std::get<0>(state)[2]));
  CHECK(gb::allclose(y[0].narrow(1, 4, 4), std::get<0>(state)[3]));
  std::ostringstream os;
  os << *lstm;
  CHECK(os.str() == "LSTM(input_size=5, hidden_size=4, num_layers=2, bias=true, batch_first=false, dropout=0, "
                    "bidirectional=true)");
}

TEST_CASE("one LSTM step by hand; GRU step by hand") {
  nn::LSTM lstm(nn::LSTMOptions(1, 1).bias(false));
  gb::NoGradGuard ng;
  lstm->named_parameters()["weight_ih_l0"].copy_(gb::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({4, 1}));
  lstm->named_parameters()["weight_hh_l0"].zero_();
  auto [y, s] = lstm(gb::full({1, 1, 1}, 0.5));
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  const double c = sig(0.5) * std::tanh(1.5);  // i * g, f * c0 = 0
  CHECK(std::get<1>(s).item<double>() == doctest::Approx(c).epsilon(1e-6));
  CHECK(y.item<double>() == doctest::Approx(sig(2.0) * std::tanh(c)).epsilon(1e-6));

  nn::GRU gru(nn::GRUOptions(1, 1).bias(false));
  gru->named_parameters()["weight_ih_l0"].copy_(gb::tensor({1.0f, 2.0f, 3.0f}).view({3, 1}));
  gru->named_parameters()["weight_hh_l0"].copy_(gb::tensor({0.5f, 0.5f, 0.5f}).view({3, 1}));
  auto [gy, gh] = gru(gb::full({1, 1, 1}, 1.0), gb::full({1, 1, 1}, 2.0));
  const double r = sig(1 + 1), z = sig(2 + 1), n = std::tanh(3 + r * 1.0);
  CHECK(gh.item<double>() == doctest::Approx((1 - z) * n + z * 2).epsilon(1e-6));
  CHECK(gy.item<double>() == doctest::Approx(gh.item<double>()));
}

TEST_CASE("batch_first and unbatched inputs give the same numbers as the sequence-first batch") {
  gb::manual_seed(2);
  nn::GRU seq_first(nn::GRUOptions(3, 2).num_layers(2));
  nn::GRU batch_first(nn::GRUOptions(3, 2).num_layers(2).batch_first(true));
  batch_first->load_state_dict(seq_first->state_dict());
  gb::Tensor x = gb::randn({5, 2, 3});
  auto [a, ha] = seq_first(x);
  auto [b, hb] = batch_first(x.transpose(0, 1));
  CHECK(gb::allclose(a, b.transpose(0, 1)));
  CHECK(gb::allclose(ha, hb));
  auto [u, hu] = seq_first(x.select(1, 1));  // unbatched: (L, H_in)
  CHECK(u.sizes() == gb::IntArrayRef({5, 2}));
  CHECK(hu.sizes() == gb::IntArrayRef({2, 2}));
  CHECK(gb::allclose(u, a.select(1, 1), 1e-5, 1e-6));
}

TEST_CASE("gradients of LSTM, GRU and the cells against finite differences (float64)") {
  gb::manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(3, 2).bidirectional(true));
  lstm->to(gb::kDouble);
  CHECK(gbtest::gradcheck1(
      [&](const gb::variable_list& v) {
        auto [y, s] = lstm(v[0], std::make_tuple(v[1], v[2]));
        return y.sum() + std::get<1>(s).pow(2).sum();
      },
      {gb::randn({4, 2, 3}, gbtest::f64_grad()), gb::randn({2, 2, 2}, gbtest::f64_grad()),
       gb::randn({2, 2, 2}, gbtest::f64_grad())}));
  nn::GRU gru(nn::GRUOptions(3, 2).num_layers(2));
  gru->to(gb::kDouble);
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return std::get<0>(gru(v[0])); },
                           {gb::randn({3, 2, 3}, gbtest::f64_grad())}));
  nn::LSTMCell cell(3, 2);
  cell->to(gb::kDouble);
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return std::get<1>(cell(v[0])); },
                           {gb::randn({2, 3}, gbtest::f64_grad())}));
  nn::GRUCell gcell(3, 2);
  gcell->to(gb::kDouble);
  CHECK(gbtest::gradcheck1([&](const gb::variable_list& v) { return gcell(v[0], v[1]); },
                           {gb::randn({3}, gbtest::f64_grad()), gb::randn({2}, gbtest::f64_grad())}));
}

TEST_CASE("errors name the shape that was expected") {
  nn::LSTM lstm(nn::LSTMOptions(3, 2).num_layers(2));
  CHECK_THROWS_WITH(lstm(gb::randn({4, 2, 5})),
                    doctest::Contains("input.size(-1) must be equal to input_size. Expected 3, got 5"));
  CHECK_THROWS_WITH(lstm(gb::randn({4, 2, 3}), std::make_tuple(gb::zeros({1, 2, 2}), gb::zeros({2, 2, 2}))),
                    doctest::Contains("Expected hidden[0] size (2, 2, 2), got [1, 2, 2]"));
  CHECK_THROWS_WITH(lstm(gb::randn({3})), doctest::Contains("Expected input to be 2D (unbatched: L, H_in) or 3D"));
  CHECK_THROWS_WITH(nn::LSTM(nn::LSTMOptions(3, 2).proj_size(1)), doctest::Contains("proj_size 1 is not supported"));
  CHECK_THROWS_WITH(nn::GRUCell(3, 2)(gb::randn({2, 4})), doctest::Contains("input has inconsistent input_size"));
}
