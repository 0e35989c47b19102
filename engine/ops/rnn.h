// engine/ops/rnn.h — one LSTM layer over a whole sequence as one op (internal; nn::LSTM runs its layers through it).
#pragma once

#include <tuple>

#include "glassbox/core/tensor.h"

namespace gb::detail {

// One direction of one LSTM layer (PyTorch's gate order i, f, g, o): x (L, N, I) any strides, h0 and c0 (N, H),
// w_ih (4H, I), w_hh (4H, H), b_ih and b_hh (4H) or both undefined; reverse: the sequence runs from L-1 to 0.
// Returns (out (L, N, H), h_n, c_n (N, H)), fresh tensors.
//
// On the cpu (and meta) in float32 and float64 it is one op, `lstm_layer`, with one node, LstmLayerBackward0: the
// input projection of every step in one GEMM, then per step one GEMM (h W_hh^T) and one fused pass over the gates;
// its backward runs the steps back with one GEMM and one fused pass each, and the weight gradients as three GEMMs over
// the whole sequence. Saved for backward: the gates' activations, the cell states and their tanh (3 x (L, N, H) + the
// output). A double backward (create_graph) recomputes the layer from the same ops nn::LSTMCell uses and
// differentiates that. On cuda and in the 16-bit floats the layer is those ops, step by step (no fused kernel).
std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_ih,
                                              const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                                              bool reverse);

// One LSTM step from the step ops: gates = x_proj + h W_hh^T + b_hh (x_proj holds x W_ih^T + b_ih), order i, f, g,
// o; returns (h', c'). One GRU step: r, z from the summed projections, n = tanh(x_n + r (h W_hn^T + b_hn)).
std::tuple<Tensor, Tensor> lstm_step(const Tensor& x_proj, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                                     const Tensor& b_hh);
Tensor gru_step(const Tensor& x_proj, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh);

// The same layer from the step ops (linear, sigmoid, tanh, mul, add): each step records its own nodes.
std::tuple<Tensor, Tensor, Tensor> lstm_layer_steps(const Tensor& x, const Tensor& h0, const Tensor& c0,
                                                    const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                                    const Tensor& b_hh, bool reverse);

}  // namespace gb::detail
