// viewer/graph_notes.cpp — what each common backward node saved and why (contract in graph_notes.h). The formulas
// are the derivatives each node computes; what is saved is what those formulas read.
#include "viewer/graph_notes.h"

#include <utility>

namespace gb::viewer {

namespace {
constexpr std::pair<std::string_view, std::string_view> kNotes[] = {
    {"AccumulateGrad", "a leaf (a parameter): saves nothing; adds the incoming gradient into .grad (grad += g)"},
    {"AddBackward0", "saves nothing: d(a + b) = g for both inputs (only their shapes, to undo broadcasting)"},
    {"SubBackward0", "saves nothing: d(a - b) = g and -g"},
    {"MulBackward0", "saves both inputs: d(a * b)/da = g * b and d/db = g * a need the other factor"},
    {"DivBackward0", "saves both inputs: d(a / b) = g / b and -g * a / b^2"},
    {"MmBackward0", "saves both matrices: dA = g @ B^T needs B, dB = A^T @ g needs A"},
    {"AddmmBackward0", "saves the input and the weight (linear): dx = g @ W needs W, dW = g^T @ x needs x; the bias "
                       "gradient is a sum of g and needs nothing"},
    {"LinearBackward0", "saves the input and the weight: dx = g @ W needs W, dW = g^T @ x needs x"},
    {"ReluBackward0", "saves its output: relu's gradient is g * (output > 0), so the output alone is enough"},
    {"GeluBackward0", "saves its input: gelu'(x) is a function of x"},
    {"SigmoidBackward0", "saves its output y: sigmoid' = y * (1 - y)"},
    {"TanhBackward0", "saves its output y: tanh' = 1 - y^2"},
    {"NativeDropoutBackward0", "saves the mask (one byte per element): the gradient is g * mask / (1 - p)"},
    {"NativeLayerNormBackward0", "saves the input, weight, mean and rstd: the gradient re-normalizes with them"},
    {"NllLossBackward0", "saves the targets and total weight: the gradient is -1/N at each target's log-probability"},
    {"LogSoftmaxBackward0", "saves its output: d = g - exp(output) * sum(g)"},
    {"SoftmaxBackward0", "saves its output y: d = y * (g - sum(g * y))"},
    {"ExpBackward0", "saves its output: exp' = exp(x), which is the output"},
    {"LogBackward0", "saves its input: log'(x) = 1 / x"},
    {"PowBackward0", "saves its input: d(x^n) = n * x^(n-1) * g"},
    {"SumBackward0", "saves only the input's shape: the gradient is g broadcast back"},
    {"MeanBackward0", "saves only the input's shape and count: the gradient is g / N broadcast back"},
    {"ViewBackward0", "saves only the input's shape: the gradient is g viewed back"},
    {"TBackward0", "saves nothing: the gradient is g transposed back"},
    {"ConvolutionBackward0", "saves the input and the weight: dx needs the weight, dW needs the input"},
    {"EmbeddingBackward0", "saves the indices: the gradient scatters g rows into the table"},
};
}  // namespace

std::string_view graph_note(std::string_view name) {
  for (const auto& [n, note] : kNotes)
    if (n == name) return note;
  return {};
}

}  // namespace gb::viewer
