// tests/engine/core/version_test.cpp — the library reports the version the build was configured with.
#include <cstring>

#include "support/check.h"

TEST_CASE("gb::version() is the project version") {
  CHECK(std::strcmp(gb::version(), GLASSBOX_VERSION) == 0);
  int major = -1, minor = -1, patch = -1;
  CHECK(std::sscanf(gb::version(), "%d.%d.%d", &major, &minor, &patch) == 3);
  CHECK(major >= 0);
}
