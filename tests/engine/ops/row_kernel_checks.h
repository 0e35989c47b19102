// tests/engine/ops/row_kernel_checks.h — the two checks the row kernels' tests share (softmax_test, norm_test):
// the same bits under every instruction set this CPU has, and the same bits through streaming stores as through
// plain ones. `run` computes the values to compare (outputs and gradients), as vectors of doubles.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "core/cpu_isa.h"
#include "ops/vec_math.h"
#include "support/check.h"

namespace gbtest {

using Values = std::vector<std::vector<double>>;

// run() under each instruction set, each result equal to the baseline's, bit for bit.
inline void check_same_bits_on_every_isa(const std::function<Values()>& run) {
  using gb::detail::CpuIsa;
  Values base;
  for (CpuIsa isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512}) {
    if (static_cast<int>(isa) > static_cast<int>(gb::detail::cpu_isa_supported())) continue;  // not on this CPU
    gb::detail::CpuIsaGuard guard(isa);
    CAPTURE(gb::detail::cpu_isa_name(isa));
    Values got = run();
    if (base.empty()) {
      base = got;
      continue;
    }
    REQUIRE(got.size() == base.size());
    for (size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      CHECK(got[k] == base[k]);
    }
  }
}

// run() with every output written through non-temporal stores (the threshold at 0) equals run() with plain stores.
inline void check_streamed_equals_plain(const std::function<Values()>& run) {
  int64_t& threshold = gb::detail::stream_output_threshold();
  const int64_t saved = threshold;
  threshold = std::numeric_limits<int64_t>::max();
  Values plain = run();
  threshold = 0;
  Values streamed = run();
  threshold = saved;
  REQUIRE(plain.size() == streamed.size());
  for (size_t k = 0; k < plain.size(); ++k) {
    CAPTURE(k);
    CHECK(streamed[k] == plain[k]);
  }
}

}  // namespace gbtest
