// TEMPORARY (removed by the linalg/join/index work): throwing placeholders so the library links meanwhile.
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/shape.h"
#define GB_PENDING(name) throw gb::Error(#name ": not implemented yet")
namespace gb {
Tensor mm(const Tensor&, const Tensor&) { GB_PENDING(mm); }
Tensor bmm(const Tensor&, const Tensor&) { GB_PENDING(bmm); }
Tensor matmul(const Tensor&, const Tensor&) { GB_PENDING(matmul); }
Tensor linear(const Tensor&, const Tensor&, const Tensor&) { GB_PENDING(linear); }
Tensor addmm(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&) { GB_PENDING(addmm); }
Tensor dot(const Tensor&, const Tensor&) { GB_PENDING(dot); }
Tensor outer(const Tensor&, const Tensor&) { GB_PENDING(outer); }
Tensor cat(TensorList, int64_t) { GB_PENDING(cat); }
Tensor stack(TensorList, int64_t) { GB_PENDING(stack); }
std::vector<Tensor> split(const Tensor&, int64_t, int64_t) { GB_PENDING(split); }
std::vector<Tensor> split_with_sizes(const Tensor&, IntArrayRef, int64_t) { GB_PENDING(split_with_sizes); }
std::vector<Tensor> chunk(const Tensor&, int64_t, int64_t) { GB_PENDING(chunk); }
std::vector<Tensor> unbind(const Tensor&, int64_t) { GB_PENDING(unbind); }
Tensor index_select(const Tensor&, int64_t, const Tensor&) { GB_PENDING(index_select); }
Tensor gather(const Tensor&, int64_t, const Tensor&) { GB_PENDING(gather); }
Tensor scatter_add(const Tensor&, int64_t, const Tensor&, const Tensor&) { GB_PENDING(scatter_add); }
Tensor embedding(const Tensor&, const Tensor&, int64_t) { GB_PENDING(embedding); }
Tensor one_hot(const Tensor&, int64_t) { GB_PENDING(one_hot); }
}  // namespace gb
