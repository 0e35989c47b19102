// engine/amp/autocast_hook.h — how an op entry takes part in autocast (internal; the policies are in
// glassbox/amp/autocast.h).
//
//   Tensor mm(const Tensor& a, const Tensor& b) {
//     GB_AUTOCAST(lower_precision_fp, mm, a, b);   // one thread-local flag test when autocast is off
//     ...
//
// When a region is enabled, the macro casts the eligible tensor arguments (Tensor, TensorList, optional<Tensor>)
// by the policy, switches autocast off on this thread, calls the op again with the cast arguments and returns
// its result. Other arguments pass through unchanged.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "glassbox/amp/autocast.h"
#include "glassbox/core/tensor.h"

namespace gb::amp::detail {

// True while any device has autocast enabled on this thread. constinit: a direct TLS load, no init wrapper.
extern thread_local constinit bool tls_autocast_on;
inline bool autocast_on() { return tls_autocast_on; }

enum class Policy { lower_precision_fp, fp32, promote };

// The thread's per-device settings, read once per autocast op.
struct Snapshot {
  bool enabled[2];
  ScalarType dtype[2];
};
Snapshot snapshot();

// Switches autocast off on this thread while alive (PyTorch's ExcludeDispatchKeyGuard over the autocast keys).
class ExcludeGuard {
 public:
  ExcludeGuard();
  ~ExcludeGuard();
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  bool prev_[2];
};

// Defined, floating, not float64, on a device whose autocast is enabled.
bool is_eligible(const Tensor& t, const Snapshot& s);
// t cast to `to` (through the weight cache where it applies); t itself when not eligible or already `to`.
Tensor cached_cast(const Tensor& t, ScalarType to, const Snapshot& s);

// The target dtype of one tensor under a policy (promote's is decided once per call, see widest()).
struct Target {
  Policy policy;
  ScalarType promoted;
  const Snapshot* snap;
  ScalarType of(const Tensor& t) const {
    if (policy == Policy::fp32) return kFloat;
    if (policy == Policy::promote) return promoted;
    return snap->dtype[t.device().type() == kCUDA ? 1 : 0];
  }
};

inline Tensor cast_arg(const Tensor& t, const Target& g) {
  return is_eligible(t, *g.snap) ? cached_cast(t, g.of(t), *g.snap) : t;
}
inline std::vector<Tensor> cast_arg(TensorList ts, const Target& g) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(cast_arg(t, g));
  return out;
}
inline std::optional<Tensor> cast_arg(const std::optional<Tensor>& t, const Target& g) {
  if (!t) return t;
  return cast_arg(*t, g);
}
template <class T>
const T& cast_arg(const T& x, const Target&) {
  return x;
}

// promote: float32 when any eligible input is float32, else the lower-precision dtype (PyTorch's promote_type).
inline void widen(ScalarType& cur, const Tensor& t, const Snapshot& s) {
  if (is_eligible(t, s) && t.scalar_type() == kFloat) cur = kFloat;
}
inline void widen(ScalarType& cur, TensorList ts, const Snapshot& s) {
  for (const Tensor& t : ts) widen(cur, t, s);
}
template <class T>
void widen(ScalarType&, const T&, const Snapshot&) {}

// The device type whose lower-precision dtype promote starts from: the first tensor argument's.
inline bool first_device(DeviceType& d, const Tensor& t) {
  if (!t.defined()) return false;
  d = t.device().type();
  return true;
}
inline bool first_device(DeviceType& d, TensorList ts) {
  for (const Tensor& t : ts)
    if (first_device(d, t)) return true;
  return false;
}
template <class T>
bool first_device(DeviceType&, const T&) {
  return false;
}

template <class F, class... Args>
auto autocast_call(Policy policy, F&& op, const Args&... args) {
  Snapshot s = snapshot();
  Target g{policy, kFloat, &s};
  if (policy == Policy::promote) {
    DeviceType d = kCPU;
    (first_device(d, args) || ...);
    g.promoted = s.dtype[d == kCUDA ? 1 : 0];
    (widen(g.promoted, args, s), ...);
  }
  ExcludeGuard exclude;
  return op(cast_arg(args, g)...);
}

}  // namespace gb::amp::detail

// Inside namespace gb, at the top of an op entry: reruns `op` with cast arguments when autocast is on.
#define GB_AUTOCAST(policy, op, ...)                                                                          \
  do {                                                                                                        \
    if (::gb::amp::detail::autocast_on()) [[unlikely]]                                                        \
      return ::gb::amp::detail::autocast_call(                                                                \
          ::gb::amp::detail::Policy::policy,                                                                  \
          [](auto&&... xs) -> decltype(auto) { return op(std::forward<decltype(xs)>(xs)...); }, __VA_ARGS__); \
  } while (0)
