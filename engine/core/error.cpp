// engine/core/error.cpp — the abort path of GB_ASSERT.
#include "glassbox/core/error.h"

#include <cstdio>
#include <cstdlib>

namespace gb::detail {

void assert_fail(const char* expr, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "glassbox internal error: %s:%d: assertion `%s` failed%s%s\n"
                       "This is a bug in glassbox, not in your program; please report it with this line.\n",
               file, line, expr, msg.empty() ? "" : ": ", msg.c_str());
  std::abort();
}

}  // namespace gb::detail
