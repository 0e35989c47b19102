// tests/viewer/model_fixture.h — what the TraceModel tests share: a synthetic trace in a temporary folder
// (tools/synth.h), a model that loads before its constructor returns, one-number SQL, and settle(): the answer of
// one of the model's asynchronous calls once its job has run.
#pragma once

#include <cstdint>
#include <string>

#include "tools/synth.h"
#include "traces/temp_dir.h"
#include "viewer/trace_model.h"

namespace gbtest {

struct Fixture {
  TempDir tmp;
  std::string path = tmp.file("run.db");
  gb::tools::SynthResult synth;
  explicit Fixture(gb::tools::SynthOptions o = {.steps = 6, .layers = 3, .ops_per_layer = 2}) {
    synth = gb::tools::write_synthetic_trace(path, o);
  }
};

inline std::int64_t sql(const std::string& path, const std::string& q) { return sql_int(path, q); }

// Everything loaded before the constructor returns (the viewer loads in the background).
constexpr gb::viewer::ModelOptions kSync{.background = false};

// Asks, lets the model's workers finish what the ask posted, and asks again: the second call takes the answer (a
// call that answers at once, as the UI thread sees it, settled as a test needs it).
template <class Ask>
auto settle(gb::viewer::TraceModel& m, Ask ask) {
  ask();
  m.wait_queries();
  return ask();
}

}  // namespace gbtest
