// glassbox/autograd/grad_mode.h — whether ops record history (per thread), and the guards that switch it.
//
//   { gb::NoGradGuard g;  w.sub_(lr * w.grad()); }   // an optimizer step records nothing
#pragma once

namespace gb {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Records no autograd history in its scope (torch::NoGradGuard).
struct NoGradGuard {
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// libtorch's InferenceMode guard: no autograd history in its scope (InferenceMode(false) re-enables it). glassbox
// keeps version counters either way, so tensors made inside stay usable outside (libtorch refuses them in autograd).
struct InferenceMode {
  explicit InferenceMode(bool enabled = true) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(!enabled); }
  ~InferenceMode() { GradMode::set_enabled(prev_); }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;

 private:
  bool prev_;
};

// Records history in its scope even inside a NoGradGuard.
struct EnableGradGuard {
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

struct AutoGradMode {
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

// libtorch spells it torch::autograd::GradMode too.
namespace autograd {
using GradMode = ::gb::GradMode;
}  // namespace autograd

}  // namespace gb
