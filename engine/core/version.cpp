// engine/core/version.cpp — the library's version string.
#include "glassbox/glassbox.h"

namespace gb {
const char* version() { return GLASSBOX_VERSION; }
}  // namespace gb
