// glassbox/ops/nn.h — the neural-network ops as positional free functions (torch::conv2d, torch::layer_norm, ...).
//
// Most code calls them through gb::nn::functional (glassbox/nn/functional.h) with libtorch's option structs.
// Shapes: N batch, C channels, H/W spatial, L sequence, D features.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "glassbox/core/tensor.h"

namespace gb {

enum class Reduction { None, Mean, Sum };
constexpr Reduction kNone = Reduction::None;
constexpr Reduction kMean = Reduction::Mean;
constexpr Reduction kSum = Reduction::Sum;

// Softmax along dim, computed stably (max subtracted); 16-bit inputs are computed in float.
Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

// x (N,C,H,W), weight (O,C/groups,kH,kW), bias (O) -> (N,O,H',W'); im2col + GEMM per group.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// conv2d's transpose (the gradient of conv2d with respect to its input, as an op): x (N, C_in, H, W) or unbatched,
// weight (C_in, C_out / groups, kH, kW) -> (N, C_out, (H-1)*stride - 2*padding + dilation*(kH-1) + output_padding + 1,
// ...); output_padding < max(stride, dilation) picks among the sizes a strided conv2d maps to the same H.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
// x (N,C,H,W) or (C,H,W). Gradient flows to the max of each window (the first on ties).
// conv1d over (N, C, L) or (C, L), weight (O, C / groups, K): conv2d over a height of 1 (one node chain, its nodes).
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// max_pool1d over (N, C, L) or (C, L): max_pool2d over a height of 1.
Tensor max_pool1d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = 0, IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool2d(const Tensor& x, IntArrayRef output_size);

// x (N,C,*). Training: normalizes with batch statistics and updates running_mean/var in place (unbiased var)
// when given; eval: uses them.
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps);
// Normalizes over the last len(normalized_shape) dims.
Tensor layer_norm(const Tensor& x, IntArrayRef normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// x (N,C,*), C divisible by num_groups.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// Padding, pad = (last dim's left, right, the dim before's left, right, ...): pad.size() even, at most 2 * x.dim().
// constant_pad_nd fills with value; negative pads crop. pad(mode): "constant" (value, default 0), "reflect"
// (mirrors without repeating the edge, pad < size), "replicate" (repeats the edge, size > 0), "circular" (wraps
// around, pad <= size); non-constant modes take no value and no negative pads. All have backward.
Tensor constant_pad_nd(const Tensor& x, IntArrayRef pad, const Scalar& value = 0);
Tensor pad(const Tensor& x, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);
// Zeroes each element with probability p and scales the rest by 1/(1-p) when train; identity otherwise.
Tensor dropout(const Tensor& x, double p, bool train);
Tensor& dropout_(Tensor& x, double p, bool train);
// Channel dropout (Dropout2d/3d's): zeroes whole channels x[n][c] with probability p and scales the rest by 1/(1-p)
// when train; x is (N, C, ...). Backward is MulBackward0 through the (N, C, 1, ...) mask.
Tensor feature_dropout(const Tensor& x, double p, bool train);

// Cosine similarity along dim, x1 and x2 broadcast: sum(x1 x2) / sqrt(max(sum(x1^2) sum(x2^2), eps^2)).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// One LSTM step, as libtorch's lstm_cell: input (N, I) or (I), hx = {h, c}; returns (h', c').
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
// One GRU step, as libtorch's gru_cell: r, z from the summed projections, n = tanh(x_n + r (h W_hn^T + b_hn)).
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih = {},
                const Tensor& b_hh = {});
// A multi-layer LSTM over input (L, N, I), or (N, L, I) with batch_first, or unbatched (L, I), as libtorch's
// torch::lstm: hx = {h0, c0}, each (num_layers * D, N, H) ((num_layers * D, H) unbatched), D = 2 when bidirectional;
// params per layer and direction: w_ih (4H, I), w_hh (4H, H), then b_ih, b_hh (4H) when has_biases. Dropout p
// between layers when train. Returns (output (L, N, D*H) in the input's layout, h_n, c_n). Each layer and direction
// is one fused op on the cpu (lstm_layer, node LstmLayerBackward0), its step ops on cuda and in 16-bit floats.
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train, bool bidirectional,
                                        bool batch_first);

// logits (N,C) or (N,C,d1,...) or (C); target int64 class indices (N) / (N,d1,...) or class probabilities
// (same shape as logits). weight (C) rescales classes. Targets equal to ignore_index add nothing.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                     Reduction reduction = kMean, int64_t ignore_index = -100, double label_smoothing = 0.0);
// ATen's spelling of cross_entropy (at::cross_entropy_loss): reduction 0 none, 1 mean, 2 sum, or a Reduction.
Tensor cross_entropy_loss(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                          int64_t reduction = 1, int64_t ignore_index = -100, double label_smoothing = 0.0);
Tensor cross_entropy_loss(const Tensor& logits, const Tensor& target, const Tensor& weight, Reduction reduction,
                          int64_t ignore_index = -100, double label_smoothing = 0.0);
// log_probs (N,C) or (N,C,d1,...), target int64 (N) / (N,d1,...).
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = {}, Reduction reduction = kMean,
                int64_t ignore_index = -100);
// The pointwise losses of d = input - target (input and target broadcast; kMean divides by the broadcast numel).
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
// |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta. beta >= 0; beta = 0 is l1_loss.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean, double beta = 1.0);
// |d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta). delta > 0.
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean, double delta = 1.0);
// input: probabilities in [0, 1] (anything else throws), target of the same shape; weight broadcasts to the
// input's shape and rescales each element. -w (t log x + (1 - t) log(1 - x)), each log clamped at -100 as in
// PyTorch. Gradients flow to input and target, not to weight.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = kMean);
// logits and target of the same shape; weight and pos_weight broadcast to it (pos_weight: per class, last dim).
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, Reduction reduction = kMean);
// Kullback-Leibler divergence with input = log q: t (log t - input), 0 where t = 0; with log_target, exp(t) (t -
// input). kMean divides by every element (PyTorch's 'mean'); the batch mean (libtorch's kBatchMean, the KL
// divergence proper) is gb::nn::functional::kl_div's.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = kMean, bool log_target = false);
// Resizes the spatial dims (all after the first two) to `size`: mode "nearest" (PyTorch's legacy nearest: source
// floor(dst * scale)), "linear" (3-D input), "bilinear" (4-D), "trilinear" (5-D), with align_corners as PyTorch's.
// scales[i], when given (> 0), is the factor the caller asked for: the source coordinate uses 1 / scales[i] instead
// of in / out, as torch's interpolate does with scale_factor. Separable and composed of index_select and
// multiply-adds, so it is differentiable to any order.
Tensor upsample(const Tensor& x, IntArrayRef size, const std::string& mode, bool align_corners = false,
                const std::vector<double>& scales = {});

}  // namespace gb
