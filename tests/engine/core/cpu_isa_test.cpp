// tests/engine/core/cpu_isa_test.cpp — the kernels' instruction set: names, the scoped guard, and a set wider than
// the CPU's refused; the last-level cache's size. (Each kernel's paths are tested with its op:
// tests/engine/ops/softmax_test.cpp.)
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>

#include <cblas.h>

#include "core/cpu_isa.h"
#include "support/trace_meta.h"
#include "traces/temp_dir.h"

TEST_CASE("names, the guard restores, and a set wider than the CPU's is refused") {
  using gb::detail::CpuIsa;
  const CpuIsa before = gb::detail::cpu_isa();
  {
    gb::detail::CpuIsaGuard guard(CpuIsa::baseline);
    CHECK(gb::detail::cpu_isa() == CpuIsa::baseline);
  }
  CHECK(gb::detail::cpu_isa() == before);
  CHECK(std::string(gb::detail::cpu_isa_name(CpuIsa::avx2)) == "avx2");
  if (gb::detail::cpu_isa_supported() != CpuIsa::avx512)
    CHECK_THROWS_WITH_AS(gb::detail::set_cpu_isa(CpuIsa::avx512), doctest::Contains("this CPU runs up to"), gb::Error);
}

TEST_CASE("the set in effect is the CPU's widest unless GLASSBOX_CPU_CAPABILITY narrows it") {
  const char* env = std::getenv("GLASSBOX_CPU_CAPABILITY");
  if (!env || !*env) CHECK(gb::detail::cpu_isa() == gb::detail::cpu_isa_supported());
  else CHECK(std::string(gb::detail::cpu_isa_name(gb::detail::cpu_isa())) == (std::string(env) == "default" ? "baseline" : env));
}

#ifndef GLASSBOX_NO_PROBES
using gbtest::trace_meta;
#endif

#ifndef GLASSBOX_NO_PROBES  // a build without probes writes no meta (make test-options)
TEST_CASE("a trace records the set the kernels used and the CPU's widest, rewritten when a program changes it") {
  TempDir tmp;
  const std::string first = tmp.file("first.db"), second = tmp.file("second.db");
  {
    gb::trace::Session session(first);
    gb::randn({4, 8}).softmax(1);
  }
  CHECK(trace_meta(first, "cpu_isa") == gb::detail::cpu_isa_name(gb::detail::cpu_isa()));
  CHECK(trace_meta(first, "cpu_isa_supported") == gb::detail::cpu_isa_name(gb::detail::cpu_isa_supported()));
  CHECK(trace_meta(first, "blas_core") == openblas_get_corename());
  {
    gb::trace::Session session(second);
    gb::detail::CpuIsaGuard guard(gb::detail::CpuIsa::baseline);
    gb::randn({4, 8}).softmax(1);
  }
  // restored at the guard's end
  CHECK(trace_meta(second, "cpu_isa") == gb::detail::cpu_isa_name(gb::detail::cpu_isa()));
}
#endif

TEST_CASE("the last-level cache is the one core 0 shares, as sysfs says (not glibc's whole-package figure)") {
  const int64_t bytes = gb::detail::last_level_cache_bytes();
  CHECK(bytes >= (int64_t(256) << 10));
  // the highest cache level sysfs lists for cpu0, read independently of the engine's parser
  int best_level = 0;
  int64_t want = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lf(dir + "level"), sf(dir + "size");
    int level = 0;
    std::string size;
    if (!(lf >> level) || !(sf >> size)) continue;
    const char unit = size.back();
    int64_t v = std::stoll(size.substr(0, size.size() - (std::isdigit(unsigned(unit)) ? 0 : 1)));
    if (unit == 'K') v *= 1024;
    if (unit == 'M') v *= 1024 * 1024;
    if (level > best_level) best_level = level, want = v;
  }
  if (want > 0) CHECK(bytes == want);
  CHECK(gb::detail::last_level_cache_bytes() == bytes);  // read once
}
