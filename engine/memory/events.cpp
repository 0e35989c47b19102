// engine/memory/events.cpp — the one event observer every caching allocator reports to (glassbox/memory/events.h).
#include "glassbox/memory/events.h"

#include <memory>
#include <mutex>
#include <vector>

#include "traces/records.h"

namespace gb::memory {

namespace detail {
std::atomic<const EventObserver*> g_event_observer{nullptr};
std::atomic<const OomObserver*> g_oom_observer{nullptr};
}  // namespace detail

namespace {
std::mutex g_install_mu;
// Every observer ever installed stays alive: a thread may still be inside the previous one.
std::vector<std::unique_ptr<EventObserver>>& installed() {
  static auto* v = new std::vector<std::unique_ptr<EventObserver>>;
  return *v;
}
}  // namespace

const char* to_string(MemoryAction a) {  // the schema's names (traces/records.h)
  return trace::kMemActionNames[static_cast<std::size_t>(a) % trace::kMemActionNames.size()].data();
}

void set_event_observer(EventObserver observer) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (!observer) {
    detail::g_event_observer.store(nullptr, std::memory_order_release);
    return;
  }
  installed().push_back(std::make_unique<EventObserver>(std::move(observer)));
  detail::g_event_observer.store(installed().back().get(), std::memory_order_release);
}

void set_oom_observer(OomObserver observer) {
  static auto* kept = new std::vector<std::unique_ptr<OomObserver>>;  // like installed(): never freed
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (!observer) {
    detail::g_oom_observer.store(nullptr, std::memory_order_release);
    return;
  }
  kept->push_back(std::make_unique<OomObserver>(std::move(observer)));
  detail::g_oom_observer.store(kept->back().get(), std::memory_order_release);
}

bool has_event_observer() { return detail::g_event_observer.load(std::memory_order_acquire) != nullptr; }

}  // namespace gb::memory
