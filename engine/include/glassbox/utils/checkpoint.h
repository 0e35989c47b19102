// glassbox/utils/checkpoint.h — activation checkpointing (torch.utils.checkpoint, non-reentrant): trade compute
// for memory by not keeping what a block saves for backward, and recomputing it when backward needs it.
//
//   gb::Tensor y = gb::utils::checkpoint([&](const gb::Tensor& x) { return block(x); }, x);
//   gb::Tensor out = gb::utils::checkpoint_sequential(net, /*segments=*/4, x);   // nn::Sequential
//
// Forward runs fn under saved-tensor hooks that keep only an index per saved tensor, so
// fn's intermediate results are freed as soon as nothing else uses them (its outputs and inputs stay, as always).
// The first time backward unpacks one of them, fn runs again on the same inputs — with grad enabled, the default
// generator's state captured at forward (preserve_rng_state: dropout draws the same masks; the generator is
// put back afterwards) and the autocast settings of the forward — and the tensors it saves are kept (detached)
// and handed out by position. Each recomputed tensor is dropped once backward has used it; a second backward
// (retain_graph) recomputes again. Gradients reach fn's inputs and every parameter fn uses; inputs that do not
// require grad are fine. With grad mode off (NoGradGuard) checkpoint just calls fn: nothing would be saved.
//
// fn must be deterministic given its inputs and the RNG: recomputation that saves a different number of tensors,
// or tensors of other sizes, dtypes or devices, throws PyTorch's CheckpointError messages. The inputs are held
// by the checkpoint until the graph is freed. Nested checkpoints are not treated specially (they work, but the
// inner one's inputs stay alive while the outer graph does).
#pragma once

#include <functional>

#include "glassbox/core/tensor.h"
#include "glassbox/nn/modules/sequential.h"

namespace gb::utils {

variable_list checkpoint(std::function<variable_list(const variable_list&)> fn, const variable_list& inputs,
                         bool preserve_rng_state = true);
Tensor checkpoint(std::function<Tensor(const Tensor&)> fn, const Tensor& input, bool preserve_rng_state = true);

// PyTorch's checkpoint_sequential: the modules are split into `segments` runs of size()/segments; every run but
// the last is checkpointed, the last (with the remainder) runs normally. 1 <= segments <= size().
Tensor checkpoint_sequential(const nn::Sequential& sequential, int64_t segments, const Tensor& input,
                             bool preserve_rng_state = true);

}  // namespace gb::utils
