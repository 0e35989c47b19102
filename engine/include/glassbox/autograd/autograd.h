// glassbox/autograd/autograd.h — running backward: Tensor::backward and gb::autograd::grad.
//
//   auto [gx] = gb::autograd::grad({y}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true);  // .grad untouched
//   auto gxx = gb::autograd::grad({gx.sum()}, {x});                                             // second order
//
// The engine counts dependencies from the roots, runs a ready queue ordered by sequence number (newest first),
// sums gradients where a tensor was used twice, accumulates into leaves, and frees saved tensors unless
// retain_graph. Its three phases (graph discovery, execution, release) are timed for traces.
#pragma once

#include <optional>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/autograd/node.h"
#include "glassbox/core/tensor.h"

namespace gb::autograd {

// Accumulates d(sum of tensors * grad_tensors)/d(leaf) into every leaf's .grad() (or only `inputs` when given).
// retain_graph defaults to create_graph.
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const variable_list& inputs = {});

// Returns the gradients of outputs w.r.t. inputs without touching .grad(). An input the outputs do not depend on
// is an error unless allow_unused, in which case its gradient is undefined.
variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                   bool allow_unused = false);

// Timings of the most recent backward on this thread (ns), for instrumentation and tests.
struct BackwardStats {
  int64_t discovery_ns = 0;
  int64_t execution_ns = 0;
  int64_t release_ns = 0;
  int64_t nodes_executed = 0;
};
const BackwardStats& last_backward_stats();

}  // namespace gb::autograd
