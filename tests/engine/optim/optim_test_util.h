// tests/engine/optim/optim_test_util.h — what the optimizer and scheduler tests share: float64 parameters with
// given gradients, the text of a gb::Error, a group's lr, and the check that each step() is one optimizer span with
// its ops nested inside.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <glassbox/glassbox.h>

#include "instrument/session.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

namespace optim_test {

inline gb::Tensor param(std::vector<double> v) { return gb::tensor(v).to(gb::kFloat64).requires_grad_(); }
inline void set_grad(gb::Tensor& p, std::vector<double> g) { p.set_grad(gb::tensor(g).to(gb::kFloat64)); }
inline double lr_of(gb::optim::Optimizer& o, size_t g = 0) { return o.param_groups()[g].options().get_lr(); }

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gb::Error& e) {
    return e.what();
  }
  return "";
}

// Two traced steps of the optimizer `make` builds over one parameter: two optimizer spans named `span_name`, and
// the first one has op spans nested inside it.
inline void check_step_spans(const std::string& span_name,
                             const std::function<std::unique_ptr<gb::optim::Optimizer>(gb::Tensor)>& make) {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  {
    gb::trace::Session session(path);
    auto w = gb::ones({4}).requires_grad_();
    auto opt = make(w);
    for (int i = 0; i < 2; ++i) {
      w.set_grad(gb::ones({4}));
      opt->step();
    }
  }
  gb::trace::Reader r(path);
  auto spans = r.all<gb::trace::SpanRecord>();
  std::vector<gb::trace::Id> steps;
  for (const auto& s : spans)
    if (r.string(s.name_id) == span_name) {
      CHECK(s.kind == gb::trace::SpanKind::optimizer);
      steps.push_back(s.id);
    }
  REQUIRE(steps.size() == 2);
  int nested_ops = 0;
  for (const auto& s : spans)
    if (s.kind == gb::trace::SpanKind::op && s.parent_id && *s.parent_id == steps[0]) ++nested_ops;
  CHECK(nested_ops > 0);
}

}  // namespace optim_test
