// tests/engine/optim/isa_list.h — what the fused optimizer passes' tests share: the instruction sets this CPU runs
// (baseline, AVX2, AVX-512 up to cpu_isa_supported()), each of which a test pins with CpuIsaGuard.
#pragma once

#include <vector>

#include "core/cpu_isa.h"

namespace optim_test {

inline std::vector<gb::detail::CpuIsa> isas() {
  using gb::detail::CpuIsa;
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512})
    if (static_cast<int>(isa) <= static_cast<int>(gb::detail::cpu_isa_supported())) out.push_back(isa);
  return out;
}

}  // namespace optim_test
