// glassbox/core/error.h — the two tiers of errors (docs/DESIGN.md, "Errors").
//
// User and resource errors (bad shapes, dtypes, dims, backward twice, ...) throw gb::Error, whose message names
// the op, the shapes and what to do. Programmer invariants use GB_ASSERT, which aborts with file:line.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace gb {

// Every user-facing failure is a gb::Error (a std::runtime_error, so `catch (const std::exception&)` works).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown for an index, dim or size out of range (PyTorch's IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};

// Thrown for a wrong dtype (PyTorch's TypeError).
class TypeError : public Error {
 public:
  using Error::Error;
};

namespace detail {

inline void append_all(std::ostringstream&) {}
template <typename T, typename... Rest>
void append_all(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  append_all(os, rest...);
}

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  append_all(os, args...);
  return os.str();
}

[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace detail
}  // namespace gb

// GB_CHECK(cond, parts...) throws gb::Error with the parts streamed together when cond is false.
#define GB_CHECK(cond, ...)                                        \
  do {                                                             \
    if (!(cond)) throw ::gb::Error(::gb::detail::str_cat(__VA_ARGS__)); \
  } while (0)

#define GB_CHECK_INDEX(cond, ...)                                       \
  do {                                                                  \
    if (!(cond)) throw ::gb::IndexError(::gb::detail::str_cat(__VA_ARGS__)); \
  } while (0)

#define GB_CHECK_TYPE(cond, ...)                                       \
  do {                                                                 \
    if (!(cond)) throw ::gb::TypeError(::gb::detail::str_cat(__VA_ARGS__)); \
  } while (0)

// A broken invariant inside glassbox itself: abort with file:line (never for user input).
#define GB_ASSERT(cond, ...)                                                               \
  do {                                                                                     \
    if (!(cond)) ::gb::detail::assert_fail(#cond, __FILE__, __LINE__, ::gb::detail::str_cat(__VA_ARGS__)); \
  } while (0)
