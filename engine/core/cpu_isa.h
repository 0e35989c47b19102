// engine/core/cpu_isa.h — which vector instructions the CPU kernels use: the widest this CPU has (AVX-512, AVX2 with
// FMA, or the x86-64 baseline), unless GLASSBOX_CPU_CAPABILITY=baseline|avx2|avx512 asks for a narrower set (as
// PyTorch's ATEN_CPU_CAPABILITY does). The build targets the baseline; a hot kernel is written once as an
// always-inline body and compiled three times by thin wrappers marked GB_TARGET_AVX2 / GB_TARGET_AVX512
// (GB_ISA_VARIANTS writes them), one of which pick_isa() (GB_PICK_ISA) returns per call. Unlike target_clones (core/multiversion.h) there is no ifunc: the choice can be
// changed while the program runs, so the tests run every path this CPU has, the baseline included.
//
// The body and every helper it calls must be GB_ALWAYS_INLINE: a helper left out of line is compiled for the
// baseline once, and the wrappers would call that copy.
#pragma once

#include <cstdint>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define GB_HAS_ISA_VARIANTS 1
#define GB_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define GB_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#else
#define GB_HAS_ISA_VARIANTS 0
#define GB_TARGET_AVX2
#define GB_TARGET_AVX512
#endif
#if defined(__GNUC__) || defined(__clang__)
#define GB_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define GB_ALWAYS_INLINE inline
#endif

// GB_ISA_VARIANTS(name, (params), body...): the three builds of one kernel, `template <typename T, bool... F>
// void name_baseline / name_avx2 / name_avx512 (params) { body; }`; the body calls GB_ALWAYS_INLINE code.
// GB_PICK_ISA(name, T, flags...) gives the one for the set in effect.
#define GB_ISA_VARIANTS(NAME, PARAMS, ...)                                               \
  template <typename T, bool... F>                                                       \
  void NAME##_baseline PARAMS {                                                          \
    __VA_ARGS__;                                                                         \
  }                                                                                      \
  template <typename T, bool... F>                                                       \
  GB_TARGET_AVX2 void NAME##_avx2 PARAMS {                                               \
    __VA_ARGS__;                                                                         \
  }                                                                                      \
  template <typename T, bool... F>                                                       \
  GB_TARGET_AVX512 void NAME##_avx512 PARAMS {                                           \
    __VA_ARGS__;                                                                         \
  }
#define GB_PICK_ISA(NAME, ...) \
  ::gb::detail::pick_isa(&NAME##_baseline<__VA_ARGS__>, &NAME##_avx2<__VA_ARGS__>, &NAME##_avx512<__VA_ARGS__>)

namespace gb::detail {

enum class CpuIsa : int { baseline = 0, avx2 = 1, avx512 = 2 };

// The widest set this CPU runs (baseline off x86-64).
CpuIsa cpu_isa_supported();
// The set the kernels use now: GLASSBOX_CPU_CAPABILITY's choice when set (a wider one than the CPU has is refused at
// the first kernel call, naming the CPU's), else cpu_isa_supported().
CpuIsa cpu_isa();
// Makes the kernels use `isa` from now on (tests); a set wider than the CPU's throws.
void set_cpu_isa(CpuIsa isa);
const char* cpu_isa_name(CpuIsa isa);  // "baseline", "avx2", "avx512"

// The last-level cache this CPU's core 0 shares, in bytes, as Linux's sysfs describes it (cpu0/cache/index*/size
// at the highest level); else glibc's sysconf; else 16 MiB. (glibc's sysconf can name the whole package's: 320 MiB
// on an AMD EPYC VM whose cores share 32 MiB.)
int64_t last_level_cache_bytes();

template <typename Fn>
Fn pick_isa(Fn baseline, Fn avx2, Fn avx512) {
  switch (cpu_isa()) {
    case CpuIsa::avx512: return avx512;
    case CpuIsa::avx2: return avx2;
    default: return baseline;
  }
}

// Sets the kernels' instruction set for a scope (tests), restoring the previous one after.
class CpuIsaGuard {
 public:
  explicit CpuIsaGuard(CpuIsa isa) : previous_(cpu_isa()) { set_cpu_isa(isa); }
  ~CpuIsaGuard() { set_cpu_isa(previous_); }
  CpuIsaGuard(const CpuIsaGuard&) = delete;
  CpuIsaGuard& operator=(const CpuIsaGuard&) = delete;

 private:
  CpuIsa previous_;
};

}  // namespace gb::detail
