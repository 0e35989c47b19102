// tests/support/op_cases_families.h — internal to the op table's cases (op_cases.h): what the family files
// (op_cases_elementwise.cpp, op_cases_shapes.cpp, op_cases_nn.cpp) share, and their lists, which op_cases.cpp's
// cases() joins in the op table's order of families.
#pragma once

#include <limits>
#include <string_view>
#include <vector>

#include "support/op_cases.h"

namespace gbtest::op_cases::families {

namespace F = gb::nn::functional;
using G = Inputs;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An int64 tensor of these values on like's device (a case's constants live where its inputs do).
inline gb::Tensor longs(std::vector<int64_t> v, const gb::Tensor& like) {
  return gb::tensor(gb::ArrayRef<int64_t>(v), gb::kLong).to(like.device());
}

// The rows oneDNN's (cpu, float32) and cuDNN's (cuda) convolutions open inside conv2d and conv_transpose2d.
inline const std::vector<std::string_view> kConvKernels = {"onednn_convolution_forward",
                                                    "onednn_convolution_backward_data",
                                                    "onednn_convolution_backward_weights",
                                                    "onednn_reorder",
                                                    "onednn_weight_grad_sum",
                                                    "cudnn_convolution_forward",
                                                    "cudnn_convolution_backward_data",
                                                    "cudnn_convolution_backward_filter"};

std::vector<Case> pointwise_cases();
std::vector<Case> compare_cases();
std::vector<Case> inplace_cases();
std::vector<Case> everyday_cases();
std::vector<Case> reduction_cases();
std::vector<Case> more_reduction_linalg_cases();
std::vector<Case> linalg_shape_cases();
std::vector<Case> sort_shape_copy_cases();
std::vector<Case> advanced_index_cases();
std::vector<Case> view_copy_cases();
std::vector<Case> nn_cases();
std::vector<Case> random_cases();
std::vector<Case> optimizer_cases();

}  // namespace gbtest::op_cases::families
