// The engine tests' precompiled header (tests/CMakeLists.txt): what nearly every engine test includes, parsed once
// per build instead of once per test. A test still includes what it uses; this file only makes that cheap.
#pragma once

#include <doctest/doctest.h>
#include <glassbox/glassbox.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/check.h"
