// engine/core/cpu_isa.cpp — the CPU's vector instruction sets and the one the kernels use (cpu_isa.h).
#include "core/cpu_isa.h"

#include <cblas.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include "glassbox/core/error.h"
#include "instrument/probe.h"

namespace gb::detail {

namespace {

CpuIsa detect() {
#if GB_HAS_ISA_VARIANTS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
    return CpuIsa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::avx2;
#endif
  return CpuIsa::baseline;
}

CpuIsa from_environment() {
  const CpuIsa supported = cpu_isa_supported();
  const char* v = std::getenv("GLASSBOX_CPU_CAPABILITY");
  if (!v || !*v) return supported;
  std::string s(v);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CpuIsa want;
  if (s == "baseline" || s == "default")
    want = CpuIsa::baseline;
  else if (s == "avx2")
    want = CpuIsa::avx2;
  else if (s == "avx512")
    want = CpuIsa::avx512;
  else
    GB_CHECK(false, "GLASSBOX_CPU_CAPABILITY=", v, " is not a choice: use baseline, avx2 or avx512 (this CPU runs up to ",
             cpu_isa_name(supported), "), or unset it to use the widest");
  GB_CHECK(static_cast<int>(want) <= static_cast<int>(supported), "GLASSBOX_CPU_CAPABILITY=", v,
           " asks for instructions this CPU does not have (it runs up to ", cpu_isa_name(supported),
           "): choose that or a narrower set, or unset it");
  return want;
}

std::atomic<int>& current() {
  static std::atomic<int> isa{static_cast<int>(from_environment())};
  return isa;
}

// A trace says which instruction sets the kernels used and which the CPU had (meta cpu_isa, cpu_isa_supported), and
// which of OpenBLAS's kernel sets its GEMMs ran (blas_core: OPENBLAS_CORETYPE can hold it narrower than the CPU):
// step times from two machines, or from two settings, are compared knowing that.
void write_meta() {
  const char* blas = openblas_get_corename();
  trace::set_meta("blas_core", blas && *blas ? blas : "unknown");
  trace::set_meta("cpu_isa_supported", cpu_isa_name(cpu_isa_supported()));
  try {
    trace::set_meta("cpu_isa", cpu_isa_name(cpu_isa()));
  } catch (const std::exception& e) {  // a bad GLASSBOX_CPU_CAPABILITY: the first kernel call says so
    trace::set_meta("cpu_isa", std::string("unset: ") + e.what());
  }
}

const bool g_connected = [] {
  trace::add_session_hook(write_meta, nullptr);
  return true;
}();

}  // namespace

CpuIsa cpu_isa_supported() {
  static const CpuIsa isa = detect();
  return isa;
}

CpuIsa cpu_isa() { return static_cast<CpuIsa>(current().load(std::memory_order_relaxed)); }

void set_cpu_isa(CpuIsa isa) {
  GB_CHECK(static_cast<int>(isa) <= static_cast<int>(cpu_isa_supported()), "set_cpu_isa: this CPU runs up to ",
           cpu_isa_name(cpu_isa_supported()), ", not ", cpu_isa_name(isa));
  current().store(static_cast<int>(isa), std::memory_order_relaxed);
  trace::set_meta("cpu_isa", cpu_isa_name(isa));
}

int64_t last_level_cache_bytes() {
  static const int64_t bytes = [] {
    int best_level = 0;
    int64_t best = 0;
    for (int i = 0; i < 16; ++i) {
      const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
      std::ifstream level_file(dir + "level"), size_file(dir + "size");
      int level = 0;
      std::string size;
      if (!(level_file >> level) || !(size_file >> size) || size.empty()) continue;
      char* end = nullptr;
      int64_t v = std::strtoll(size.c_str(), &end, 10);
      if (end && (*end == 'K' || *end == 'k')) v <<= 10;
      if (end && (*end == 'M' || *end == 'm')) v <<= 20;
      if (v > 0 && level > best_level) best_level = level, best = v;
    }
    if (best > 0) return best;
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? int64_t(l3) : int64_t(16) << 20;
  }();
  return bytes;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512: return "avx512";
    case CpuIsa::avx2: return "avx2";
    default: return "baseline";
  }
}

}  // namespace gb::detail
