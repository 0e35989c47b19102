// glassbox/nn/modules/rnn.h — recurrent layers, libtorch's: LSTM and GRU over a sequence, LSTMCell and GRUCell for
// one step.
//
//   gb::nn::LSTM lstm(gb::nn::LSTMOptions(16, 32).num_layers(2).batch_first(true));
//   auto [out, state] = lstm(x);              // x (N, L, 16) -> out (N, L, 32); state (h_n, c_n), each (2, N, 32)
//   auto [h, c] = state;
//   gb::nn::GRU gru(gb::nn::GRUOptions(16, 32).bidirectional(true));
//   auto [y, h_n] = gru(x_seq_first);         // (L, N, 16) -> (L, N, 64); h_n (2, N, 32)
//
// Input (L, N, H_in), (N, L, H_in) with batch_first, or unbatched (L, H_in); states (layers * directions, N, H), or
// (layers * directions, H) unbatched; zeros when not given. Gates as PyTorch's: LSTM i, f, g, o; GRU r, z, n with
// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)). Parameters weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k},
// bias_hh_l{k} (and *_reverse for the second direction), all initialized U(-1/sqrt(H), 1/sqrt(H)), so a state dict
// moves between glassbox and PyTorch. dropout applies to each layer's output but the last, in training.
//
// The layers are composed of glassbox's ops (one linear over the whole sequence for the inputs, then per step a
// linear, the gates and their activations): every step's ops and autograd nodes are in the trace, and backward is
// autograd through them. proj_size (LSTM projections) is not supported: a nonzero one is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "glassbox/nn/cloneable.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/options.h"
#include "glassbox/nn/pimpl.h"

namespace gb::nn {

struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GB_ARG(int64_t, input_size);
  GB_ARG(int64_t, hidden_size);
  GB_ARG(int64_t, num_layers) = 1;
  GB_ARG(bool, bias) = true;
  GB_ARG(bool, batch_first) = false;
  GB_ARG(double, dropout) = 0.0;
  GB_ARG(bool, bidirectional) = false;
  GB_ARG(int64_t, proj_size) = 0;
};

struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GB_ARG(int64_t, input_size);
  GB_ARG(int64_t, hidden_size);
  GB_ARG(int64_t, num_layers) = 1;
  GB_ARG(bool, bias) = true;
  GB_ARG(bool, batch_first) = false;
  GB_ARG(double, dropout) = 0.0;
  GB_ARG(bool, bidirectional) = false;
};

namespace detail {
// What LSTM and GRU share: the options they have in common, the parameters per layer and direction, the input and
// state checks.
class RNNBase : public Module {
 public:
  struct Config {
    const char* name;
    int64_t gates, input_size, hidden_size, num_layers;
    bool bias, batch_first, bidirectional;
    double dropout;
  };
  explicit RNNBase(const Config& config);
  void reset_parameters();
  // weight_ih, weight_hh, bias_ih, bias_hh of every layer and direction, in registration order (libtorch's).
  std::vector<Tensor> all_weights() const;
  void pretty_print(std::ostream& stream) const override;

 protected:
  struct Layer {
    Tensor w_ih, w_hh, b_ih, b_hh;
  };
  const Layer& layer(int64_t index, int64_t direction) const { return layers_[size_t(index * directions() + direction)]; }
  int64_t directions() const { return config_.bidirectional ? 2 : 1; }
  // (L, N, H_in) from the input (batch_first and unbatched handled); `batched` says which it was.
  Tensor sequence_first(const Tensor& input, bool& batched) const;
  // A state (layers * directions, N, H) from hx or zeros, checked against the input.
  Tensor initial_state(const Tensor& hx, const Tensor& seq, bool batched, const char* what) const;
  Tensor output_layout(const Tensor& out, bool batched) const;

  Config config_;
  std::vector<Layer> layers_;
};
}  // namespace detail

class LSTMImpl : public detail::Builtin<LSTMImpl, detail::RNNBase> {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  // output, (h_n, c_n)
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  LSTMOptions options;
};
GB_MODULE(LSTM);

class GRUImpl : public detail::Builtin<GRUImpl, detail::RNNBase> {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  // output, h_n
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  GRUOptions options;
};
GB_MODULE(GRU);

struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GB_ARG(int64_t, input_size);
  GB_ARG(int64_t, hidden_size);
  GB_ARG(bool, bias) = true;
};
using GRUCellOptions = LSTMCellOptions;

namespace detail {
class RNNCellBase : public Module {
 public:
  RNNCellBase(const char* name, int64_t gates, const LSTMCellOptions& options);
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  LSTMCellOptions options;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  // input (N, H_in) or (H_in); a state (N, H) or (H) or zeros; `batched` says which.
  Tensor batched_input(const Tensor& input, bool& batched) const;
  Tensor state_or_zeros(const Tensor& h, const Tensor& x, bool batched) const;
  const char* name_;
};
}  // namespace detail

class LSTMCellImpl : public detail::Builtin<LSTMCellImpl, detail::RNNCellBase> {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options) : Builtin("LSTMCell", 4, options) {}
  // (h', c')
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
};
GB_MODULE(LSTMCell);

class GRUCellImpl : public detail::Builtin<GRUCellImpl, detail::RNNCellBase> {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options) : Builtin("GRUCell", 3, options) {}
  Tensor forward(const Tensor& input, Tensor hx = {});  // h'
};
GB_MODULE(GRUCell);

}  // namespace gb::nn
