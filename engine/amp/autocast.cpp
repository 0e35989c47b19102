// engine/amp/autocast.cpp — the thread's autocast state, the autocast guard, the exclude guard and the weight
// cache (glassbox/amp/autocast.h, amp/autocast_hook.h).
#include <memory>
#include <unordered_map>

#include "amp/autocast_hook.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/error.h"

namespace gb {
namespace amp::detail {

thread_local constinit bool tls_autocast_on = false;

namespace {

int slot(DeviceType d) {
  GB_CHECK(d == kCPU || d == kCUDA, "autocast: unsupported device type ", Device(d),
           "; autocast regions exist for 'cpu' and 'cuda' only");
  return d == kCUDA ? 1 : 0;
}

struct State {
  bool enabled[2] = {false, false};
  ScalarType dtype[2] = {kBFloat16, kHalf};
  bool cache_enabled = true;
  int nesting = 0;
  // PyTorch's cached_casts: key = the source's TensorImpl; the weak_ptr proves the key still names that tensor.
  std::unordered_map<const TensorImpl*, std::pair<std::weak_ptr<TensorImpl>, Tensor>> cache;
};
thread_local State tls_state;

void refresh_flag() { tls_autocast_on = tls_state.enabled[0] || tls_state.enabled[1]; }

}  // namespace

Snapshot snapshot() {
  const State& st = tls_state;
  return Snapshot{{st.enabled[0], st.enabled[1]}, {st.dtype[0], st.dtype[1]}};
}

ExcludeGuard::ExcludeGuard() {
  State& st = tls_state;
  prev_[0] = st.enabled[0];
  prev_[1] = st.enabled[1];
  st.enabled[0] = st.enabled[1] = false;
  tls_autocast_on = false;
}

ExcludeGuard::~ExcludeGuard() {
  tls_state.enabled[0] = prev_[0];
  tls_state.enabled[1] = prev_[1];
  refresh_flag();
}

bool is_eligible(const Tensor& t, const Snapshot& s) {
  if (!t.defined() || !t.is_floating_point() || t.scalar_type() == kDouble) return false;
  DeviceType d = t.device().type();
  if (d == kCPU) return s.enabled[0];
  if (d == kCUDA) return s.enabled[1];
  return false;
}

Tensor cached_cast(const Tensor& t, ScalarType to, const Snapshot& s) {
  if (t.scalar_type() == to) return t;
  int k = t.device().type() == kCUDA ? 1 : 0;
  State& st = tls_state;
  bool can_cache = st.cache_enabled && to == s.dtype[k] && t.scalar_type() == kFloat && t.requires_grad() &&
                   t.is_leaf() && !t.is_view() && GradMode::is_enabled();
  if (!can_cache) return t.to(to);
  auto it = st.cache.find(t.unsafe_impl());
  if (it != st.cache.end() && it->second.first.lock().get() == t.unsafe_impl() && it->second.second.scalar_type() == to)
    return it->second.second;
  Tensor cast = t.to(to);
  st.cache[t.unsafe_impl()] = {std::weak_ptr<TensorImpl>(t.impl_ptr()), cast};
  return cast;
}

}  // namespace amp::detail

using amp::detail::tls_state;

autocast::autocast(DeviceType device_type, std::optional<ScalarType> dtype, bool enabled, bool cache_enabled)
    : device_type_(device_type) {
  int k = amp::detail::slot(device_type);
  ScalarType want = dtype.value_or(k == 0 ? kBFloat16 : kHalf);
  if (enabled)
    GB_CHECK(want == kBFloat16 || want == kHalf, "In ", k == 0 ? "CPU" : "CUDA",
             " autocast, but the target dtype is not supported. ", k == 0 ? "CPU" : "CUDA",
             " Autocast only supports dtype of torch.bfloat16 or torch.float16 currently (got ", to_string(want),
             "). Pass gb::kBFloat16 or gb::kHalf, or enabled=false to run in full precision.");
  auto& st = tls_state;
  prev_enabled_ = st.enabled[k];
  prev_dtype_ = st.dtype[k];
  prev_cache_enabled_ = st.cache_enabled;
  st.enabled[k] = enabled;
  if (enabled) st.dtype[k] = want;
  st.cache_enabled = cache_enabled;
  ++st.nesting;
  amp::detail::refresh_flag();
}

autocast::~autocast() {
  auto& st = tls_state;
  int k = device_type_ == kCUDA ? 1 : 0;
  if (--st.nesting == 0) st.cache.clear();  // left the outermost region
  st.enabled[k] = prev_enabled_;
  st.dtype[k] = prev_dtype_;
  st.cache_enabled = prev_cache_enabled_;
  amp::detail::refresh_flag();
}

namespace amp {

bool is_autocast_enabled(DeviceType device_type) { return tls_state.enabled[detail::slot(device_type)]; }
ScalarType get_autocast_dtype(DeviceType device_type) { return tls_state.dtype[detail::slot(device_type)]; }
bool is_autocast_cache_enabled() { return tls_state.cache_enabled; }
void clear_autocast_cache() { tls_state.cache.clear(); }
size_t autocast_cache_size() { return tls_state.cache.size(); }

}  // namespace amp
}  // namespace gb
