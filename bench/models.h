// bench/models.h — bench/models.inc compiled twice: glassbox's models in namespace `ours` (where `torch` names gb)
// and libtorch's in namespace `peer`, for the model benchmarks (bench_models, gpu/bench_gpu_models). Include after
// <glassbox/glassbox.h> and <torch/torch.h>.
#pragma once

namespace ours {
namespace torch = ::gb;
#define BENCH_MODULE GB_MODULE
#include "models.inc"
#undef BENCH_MODULE
}  // namespace ours

namespace peer {
#define BENCH_MODULE TORCH_MODULE
#include "models.inc"
#undef BENCH_MODULE
}  // namespace peer
