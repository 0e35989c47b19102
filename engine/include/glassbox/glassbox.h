// glassbox/glassbox.h — the one header users include. Everything is in namespace gb, named as in libtorch:
// port libtorch code by replacing `torch::` with `gb::` and <torch/torch.h> with <glassbox/glassbox.h>
// (docs/PORTING.md has the whole rule; tools/port.sh applies it to a copy of a source tree).
#pragma once

#include "glassbox/amp/autocast.h"
#include "glassbox/amp/grad_scaler.h"
#include "glassbox/autograd/autograd.h"
#include "glassbox/autograd/function.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/autograd/gradcheck.h"
#include "glassbox/autograd/node.h"
#include "glassbox/autograd/saved_tensor_hooks.h"
#include "glassbox/core/compat.h"
#include "glassbox/core/cuda.h"
#include "glassbox/core/cuda_stream.h"
#include "glassbox/core/device.h"
#include "glassbox/core/dtype.h"
#include "glassbox/core/error.h"
#include "glassbox/core/generator.h"
#include "glassbox/core/cudnn.h"
#include "glassbox/core/mkldnn.h"
#include "glassbox/core/parallel.h"
#include "glassbox/core/scalar.h"
#include "glassbox/core/tensor.h"
#include "glassbox/core/tensor_options.h"
#include "glassbox/data/data.h"
#include "glassbox/distributed/distributed.h"
#include "glassbox/io/archive.h"
#include "glassbox/io/checkpoint.h"
#include "glassbox/io/serialize.h"
#include "glassbox/memory/memory.h"
#include "glassbox/monitor/monitor.h"
#include "glassbox/nn/nn.h"
#include "glassbox/nn/utils/clip_grad.h"
#include "glassbox/ops/factory.h"
#include "glassbox/ops/linalg.h"
#include "glassbox/ops/nn.h"
#include "glassbox/ops/pointwise.h"
#include "glassbox/ops/reduce.h"
#include "glassbox/ops/shape.h"
#include "glassbox/ops/sort.h"
#include "glassbox/optim/lr_scheduler.h"
#include "glassbox/optim/optim.h"
#include "glassbox/optim/optimizer.h"
#include "glassbox/utils/checkpoint.h"
#include "instrument/probe.h"    // gb::trace: spans, StepScope, counters (tracing is off unless a session is on)
#include "instrument/session.h"  // gb::trace::Session; or GLASSBOX_TRACE=run.db with no code change

// What <torch/torch.h> gives small programs transitively, so a ported one compiles without adding includes.
#include <algorithm>
#include <array>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gb {
const char* version();  // "0.1.0"
}
