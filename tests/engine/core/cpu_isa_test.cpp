// tests/engine/core/cpu_isa_test.cpp — the kernels' instruction set: names, the scoped guard, and a set wider than
// the CPU's refused. (Each kernel's paths are tested with its op: tests/engine/ops/softmax_test.cpp.)
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <cstdlib>
#include <string>

#include "core/cpu_isa.h"

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
