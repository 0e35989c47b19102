// tests/support/sanitizers.h — which sanitizer instruments this test build (`make test-options`: ASan + UBSan;
// `make test-tsan`: ThreadSanitizer). ThreadSanitizer slows every memory access 5-15x: stress tests run smaller
// (a race is found by the happens-before order of the accesses, not by their number) and assertions about elapsed
// time are skipped there.
#pragma once

namespace gbtest {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

}  // namespace gbtest
