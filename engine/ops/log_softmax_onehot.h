// engine/ops/log_softmax_onehot.h — cross_entropy's backward without its dense one-hot gradient (internal).
//
// cross_entropy(logits, target) is log_softmax then nll_loss: two nodes, LogSoftmaxBackward0 and NllLossBackward0,
// as in PyTorch, and glassbox keeps them (the graph, the node spans and the saved log-probabilities are PyTorch's).
// What it does not keep is the tensor between them: nll_loss's gradient with respect to the log-probabilities is zero
// except at each row's target, and written whole it costs a pass over N x C to zero it and another to read it back
// (two of the four passes of a 32K-class head's backward). For (N, C) float/double logits (cpu, meta or cuda) with
// class-index targets and no label smoothing, cross_entropy records
//   - a LogSoftmaxBackward0 that also accepts the compact form: a 1-D gradient of N values, row i's target entry
//     (0 where the target is ignored), and forms g - exp(y) * sum(g) from it in one pass over y — the very operations
//     of the dense formula on those values, so the same bits (cuda: softmax_backward's kernel, cuda/softmax.cu);
//   - a NllLossBackward0 that sends that compact form when backward runs without create_graph (with it, the dense
//     differentiable scatter, which the LogSoftmaxBackward0 takes as any other).
// The log-probabilities never escape cross_entropy, so no one else can receive or hook that gradient; the monitor
// scans it as sent (its non-finite count and norm equal the dense tensor's). The meta device follows the same path,
// so a meta run still predicts the memory of a real one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::detail {

// Where each row's entry goes, filled by the nll_loss that follows the log_softmax: on the cpu (and meta) row i's
// target column, -1 where ignore_index skips it; on cuda the targets themselves (int64, N, contiguous on the device:
// an ignored row's entry is 0, the same as no entry, and a target outside [0, C) matches no column).
struct OneHotTargets {
  std::vector<int64_t> cols;
  Tensor target;
};

// Whether cross_entropy's logits take the compact backward: 2-D float or double on the cpu, meta or cuda.
bool onehot_backward_applies(const Tensor& logits);

// log_softmax(x, 1) whose LogSoftmaxBackward0 also takes the compact gradient described above (softmax.cpp).
Tensor log_softmax_onehot(const Tensor& x, std::shared_ptr<const OneHotTargets> targets);

}  // namespace gb::detail
