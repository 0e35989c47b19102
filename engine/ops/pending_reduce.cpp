// TEMPORARY (removed by the reductions work): throwing placeholders so the library links while the ops are written.
#include "glassbox/ops/nn.h"
#include "glassbox/ops/reduce.h"
#define GB_PENDING(name) throw gb::Error(#name ": not implemented yet")
namespace gb {
Tensor max(const Tensor&) { GB_PENDING(max); }
std::tuple<Tensor, Tensor> max(const Tensor&, int64_t, bool) { GB_PENDING(max); }
Tensor min(const Tensor&) { GB_PENDING(min); }
std::tuple<Tensor, Tensor> min(const Tensor&, int64_t, bool) { GB_PENDING(min); }
Tensor amax(const Tensor&, IntArrayRef, bool) { GB_PENDING(amax); }
Tensor amin(const Tensor&, IntArrayRef, bool) { GB_PENDING(amin); }
Tensor argmax(const Tensor&, std::optional<int64_t>, bool) { GB_PENDING(argmax); }
Tensor argmin(const Tensor&, std::optional<int64_t>, bool) { GB_PENDING(argmin); }
Tensor var(const Tensor&, IntArrayRef, int64_t, bool) { GB_PENDING(var); }
Tensor std(const Tensor&, IntArrayRef, int64_t, bool) { GB_PENDING(std); }
std::tuple<Tensor, Tensor> var_mean(const Tensor&, IntArrayRef, int64_t, bool) { GB_PENDING(var_mean); }
Tensor norm(const Tensor&, const Scalar&, IntArrayRef, bool) { GB_PENDING(norm); }
Tensor logsumexp(const Tensor&, IntArrayRef, bool) { GB_PENDING(logsumexp); }
Tensor all(const Tensor&) { GB_PENDING(all); }
Tensor any(const Tensor&) { GB_PENDING(any); }
Tensor prod(const Tensor&) { GB_PENDING(prod); }
Tensor softmax(const Tensor&, int64_t, std::optional<ScalarType>) { GB_PENDING(softmax); }
Tensor log_softmax(const Tensor&, int64_t, std::optional<ScalarType>) { GB_PENDING(log_softmax); }
}  // namespace gb
