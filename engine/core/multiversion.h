// engine/core/multiversion.h — GB_AVX2_CLONES: a function compiled twice, for AVX2 and for the baseline, the
// version picked once at load time (GCC/Clang target_clones: an ifunc resolver the dynamic loader calls).
//
// Under ThreadSanitizer the baseline only: the resolver runs while the loader relocates the program, before the
// TSan runtime is initialised, and its instrumented entry crashes there (every test of the engine died at start-up
// in `make test-tsan`). The AVX2 versions are the same code vectorised wider, so the TSan build loses no coverage.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define GB_NO_TARGET_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GB_NO_TARGET_CLONES 1
#endif
#endif

#if defined(GB_NO_TARGET_CLONES)
#define GB_AVX2_CLONES
#else
#define GB_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif
