// engine/nn/rnn.cpp — LSTM, GRU, LSTMCell, GRUCell as compositions of glassbox ops (see glassbox/nn/modules/rnn.h).
#include "glassbox/nn/modules/rnn.h"

#include <cmath>

#include "glassbox/nn/init.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/shape.h"
#include "ops/rnn.h"

namespace gb::nn {
namespace {

void check_sizes(const char* name, int64_t input_size, int64_t hidden_size) {
  GB_CHECK(input_size > 0 && hidden_size > 0, name, ": input_size and hidden_size must be positive, got ", input_size,
           " and ", hidden_size);
}

}  // namespace

namespace detail {

RNNBase::RNNBase(const Config& config) : config_(config) {
  const auto& c = config_;
  check_sizes(c.name, c.input_size, c.hidden_size);
  GB_CHECK(c.num_layers > 0, c.name, ": num_layers must be positive, got ", c.num_layers);
  GB_CHECK(c.dropout >= 0 && c.dropout <= 1, c.name, ": dropout should be a number in range [0, 1] representing the "
           "probability of an element being zeroed, got ", c.dropout);
  for (int64_t l = 0; l < c.num_layers; ++l)
    for (int64_t d = 0; d < directions(); ++d) {
      const int64_t in = l == 0 ? c.input_size : c.hidden_size * directions();
      const std::string suffix = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      Layer layer;
      layer.w_ih = register_parameter("weight_ih" + suffix, gb::empty({c.gates * c.hidden_size, in}));
      layer.w_hh = register_parameter("weight_hh" + suffix, gb::empty({c.gates * c.hidden_size, c.hidden_size}));
      if (c.bias) {
        layer.b_ih = register_parameter("bias_ih" + suffix, gb::empty({c.gates * c.hidden_size}));
        layer.b_hh = register_parameter("bias_hh" + suffix, gb::empty({c.gates * c.hidden_size}));
      }
      layers_.push_back(layer);
    }
  reset_parameters();
}

void RNNBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(double(config_.hidden_size));
  for (const Tensor& p : all_weights()) init::uniform_(p, -stdv, stdv);
}

std::vector<Tensor> RNNBase::all_weights() const {
  std::vector<Tensor> out;
  for (const Layer& l : layers_)
    for (const Tensor& t : {l.w_ih, l.w_hh, l.b_ih, l.b_hh})
      if (t.defined()) out.push_back(t);
  return out;
}

void RNNBase::pretty_print(std::ostream& stream) const {
  const auto& c = config_;
  stream << std::boolalpha << c.name << "(input_size=" << c.input_size << ", hidden_size=" << c.hidden_size
         << ", num_layers=" << c.num_layers << ", bias=" << c.bias << ", batch_first=" << c.batch_first
         << ", dropout=" << c.dropout << ", bidirectional=" << c.bidirectional << ")";
}

Tensor RNNBase::sequence_first(const Tensor& input, bool& batched) const {
  GB_CHECK(input.defined() && (input.dim() == 3 || input.dim() == 2), config_.name,
           ": Expected input to be 2D (unbatched: L, H_in) or 3D (", config_.batch_first ? "N, L, H_in" : "L, N, H_in",
           "), got ", input.defined() ? std::to_string(input.dim()) + "D" : std::string("an undefined tensor"));
  GB_CHECK(input.size(-1) == config_.input_size, config_.name, ": input.size(-1) must be equal to input_size. Expected ",
           config_.input_size, ", got ", input.size(-1));
  batched = input.dim() == 3;
  if (!batched) return input.unsqueeze(1);
  return config_.batch_first ? input.transpose(0, 1) : input;
}

Tensor RNNBase::initial_state(const Tensor& hx, const Tensor& seq, bool batched, const char* what) const {
  const int64_t n = seq.size(1), layers = config_.num_layers * directions();
  if (!hx.defined()) return gb::zeros({layers, n, config_.hidden_size}, seq.options().requires_grad(false));
  Tensor h = batched ? hx : hx.unsqueeze(1);
  GB_CHECK(h.dim() == 3 && h.size(0) == layers && h.size(1) == n && h.size(2) == config_.hidden_size, config_.name,
           ": Expected ", what, " size (", layers, ", ", n, ", ", config_.hidden_size, "), got ", hx.sizes(),
           batched ? "" : " (unbatched input: the state has no batch dim)");
  return h;
}

Tensor RNNBase::output_layout(const Tensor& out, bool batched) const {
  if (!batched) return out.squeeze(1);
  return config_.batch_first ? out.transpose(0, 1) : out;
}

}  // namespace detail

LSTMImpl::LSTMImpl(const LSTMOptions& o)
    : Builtin(Config{"LSTM", 4, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.bidirectional(),
               o.dropout()}),
      options(o) {
  GB_CHECK(o.proj_size() == 0, "LSTM: proj_size ", o.proj_size(),
           " is not supported by glassbox; leave it 0 and add a Linear after the LSTM");
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  nn::detail::ModuleCallScope scope(*this);
  bool batched = true;
  Tensor seq = sequence_first(input, batched);
  Tensor h0 = initial_state(hx_opt ? std::get<0>(*hx_opt) : Tensor(), seq, batched, "hidden[0]");
  Tensor c0 = initial_state(hx_opt ? std::get<1>(*hx_opt) : Tensor(), seq, batched, "hidden[1]");
  const int64_t D = directions();
  std::vector<Tensor> hn, cn;
  Tensor x = seq;
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    std::vector<Tensor> outs_by_dir;
    for (int64_t d = 0; d < D; ++d) {
      const Layer& p = layer(l, d);
      auto [out, h, c] = gb::detail::lstm_layer(x, h0[l * D + d], c0[l * D + d], p.w_ih, p.w_hh, p.b_ih, p.b_hh,
                                                /*reverse=*/d == 1);
      outs_by_dir.push_back(out);
      hn.push_back(h);
      cn.push_back(c);
    }
    x = D == 2 ? gb::cat(outs_by_dir, 2) : outs_by_dir[0];
    if (config_.dropout > 0 && is_training() && l + 1 < config_.num_layers) x = gb::dropout(x, config_.dropout, true);
  }
  Tensor h_n = gb::stack(hn, 0), c_n = gb::stack(cn, 0);
  if (!batched) {
    h_n = h_n.squeeze(1);
    c_n = c_n.squeeze(1);
  }
  return {output_layout(x, batched), {h_n, c_n}};
}

GRUImpl::GRUImpl(const GRUOptions& o)
    : Builtin(Config{"GRU", 3, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.bidirectional(),
               o.dropout()}),
      options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  nn::detail::ModuleCallScope scope(*this);
  bool batched = true;
  Tensor seq = sequence_first(input, batched);
  Tensor h0 = initial_state(hx, seq, batched, "hidden");
  const int64_t L = seq.size(0), D = directions();
  std::vector<Tensor> hn;
  Tensor x = seq;
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    std::vector<Tensor> outs_by_dir;
    for (int64_t d = 0; d < D; ++d) {
      const Layer& p = layer(l, d);
      Tensor proj = gb::linear(x, p.w_ih, p.b_ih);
      Tensor h = h0[l * D + d];
      std::vector<Tensor> outs(static_cast<size_t>(L));
      for (int64_t s = 0; s < L; ++s) {
        const int64_t t = d == 0 ? s : L - 1 - s;
        h = gb::detail::gru_step(proj[t], h, p.w_hh, p.b_hh);
        outs[size_t(t)] = h;
      }
      outs_by_dir.push_back(gb::stack(outs, 0));
      hn.push_back(h);
    }
    x = D == 2 ? gb::cat(outs_by_dir, 2) : outs_by_dir[0];
    if (config_.dropout > 0 && is_training() && l + 1 < config_.num_layers) x = gb::dropout(x, config_.dropout, true);
  }
  Tensor h_n = gb::stack(hn, 0);
  return {output_layout(x, batched), batched ? h_n : h_n.squeeze(1)};
}

namespace detail {

RNNCellBase::RNNCellBase(const char* name, int64_t gates, const LSTMCellOptions& o) : options(o), name_(name) {
  check_sizes(name, o.input_size(), o.hidden_size());
  weight_ih = register_parameter("weight_ih", gb::empty({gates * o.hidden_size(), o.input_size()}));
  weight_hh = register_parameter("weight_hh", gb::empty({gates * o.hidden_size(), o.hidden_size()}));
  bias_ih = register_parameter("bias_ih", o.bias() ? gb::empty({gates * o.hidden_size()}) : Tensor(), o.bias());
  bias_hh = register_parameter("bias_hh", o.bias() ? gb::empty({gates * o.hidden_size()}) : Tensor(), o.bias());
  reset_parameters();
}

void RNNCellBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(double(options.hidden_size()));
  for (Tensor* p : {&weight_ih, &weight_hh, &bias_ih, &bias_hh})
    if (p->defined()) init::uniform_(*p, -stdv, stdv);
}

void RNNCellBase::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << name_ << "(" << options.input_size() << ", " << options.hidden_size();
  if (!options.bias()) stream << ", bias=false";
  stream << ")";
}

Tensor RNNCellBase::batched_input(const Tensor& input, bool& batched) const {
  GB_CHECK(input.defined() && (input.dim() == 1 || input.dim() == 2), name_,
           ": Expected input to be 1D or 2D, got ",
           input.defined() ? std::to_string(input.dim()) + "D" : std::string("an undefined tensor"));
  GB_CHECK(input.size(-1) == options.input_size(), name_, ": input has inconsistent input_size: got ",
           input.size(-1), " expected ", options.input_size());
  batched = input.dim() == 2;
  return batched ? input : input.unsqueeze(0);
}

Tensor RNNCellBase::state_or_zeros(const Tensor& h, const Tensor& x, bool batched) const {
  if (!h.defined()) return gb::zeros({x.size(0), options.hidden_size()}, x.options().requires_grad(false));
  Tensor hb = batched ? h : h.unsqueeze(0);
  GB_CHECK(hb.dim() == 2 && hb.size(0) == x.size(0) && hb.size(1) == options.hidden_size(), name_,
           ": Expected a hidden state of size (", x.size(0), ", ", options.hidden_size(), "), got ", h.sizes());
  return hb;
}

}  // namespace detail

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  nn::detail::ModuleCallScope scope(*this);
  bool batched = true;
  Tensor x = batched_input(input, batched);
  Tensor h = state_or_zeros(hx_opt ? std::get<0>(*hx_opt) : Tensor(), x, batched);
  Tensor c = state_or_zeros(hx_opt ? std::get<1>(*hx_opt) : Tensor(), x, batched);
  auto [h1, c1] = gb::detail::lstm_step(gb::linear(x, weight_ih, bias_ih), h, c, weight_hh, bias_hh);
  if (!batched) return {h1.squeeze(0), c1.squeeze(0)};
  return {h1, c1};
}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  nn::detail::ModuleCallScope scope(*this);
  bool batched = true;
  Tensor x = batched_input(input, batched);
  Tensor h = gb::detail::gru_step(gb::linear(x, weight_ih, bias_ih), state_or_zeros(hx, x, batched), weight_hh, bias_hh);
  return batched ? h : h.squeeze(0);
}

}  // namespace gb::nn
