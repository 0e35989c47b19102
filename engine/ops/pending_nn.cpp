// TEMPORARY (removed by the nn ops work): throwing placeholders so the library links while the ops are written.
#include "glassbox/ops/nn.h"
#define GB_PENDING(name) throw gb::Error(#name ": not implemented yet")
namespace gb {
Tensor cross_entropy(const Tensor&, const Tensor&, const Tensor&, Reduction, int64_t, double) { GB_PENDING(cross_entropy); }
Tensor nll_loss(const Tensor&, const Tensor&, const Tensor&, Reduction, int64_t) { GB_PENDING(nll_loss); }
Tensor mse_loss(const Tensor&, const Tensor&, Reduction) { GB_PENDING(mse_loss); }
Tensor l1_loss(const Tensor&, const Tensor&, Reduction) { GB_PENDING(l1_loss); }
Tensor binary_cross_entropy_with_logits(const Tensor&, const Tensor&, const Tensor&, const Tensor&, Reduction) { GB_PENDING(binary_cross_entropy_with_logits); }
}  // namespace gb
