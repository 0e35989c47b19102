// engine/pch.h — the engine library's precompiled header (engine/CMakeLists.txt): what most of its sources include,
// parsed once per build instead of once per source (parsing them was 50-85% of a typical source's compile). A
// source still includes what it uses; this file only makes that cheap.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autograd/record.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "core/op_scope.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/error.h"
#include "glassbox/core/tensor.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "instrument/probe.h"
