// engine/core/observer.cpp — the registry of engine observers (core/observer.h): a published snapshot per change.
#include "core/observer.h"

#include <algorithm>
#include <mutex>

namespace gb::detail {

std::atomic<const ObserverList*> g_observers{nullptr};

namespace {
std::mutex g_install_mu;
// Every list ever published stays alive: a thread may still be walking the previous one.
std::vector<std::unique_ptr<ObserverList>>& published() {
  static auto* v = new std::vector<std::unique_ptr<ObserverList>>;
  return *v;
}

// Publishes `list` (nullptr when empty). Called with g_install_mu held.
void publish(std::vector<EngineObserver*> list) {
  if (list.empty()) {
    g_observers.store(nullptr, std::memory_order_release);
    return;
  }
  published().push_back(std::make_unique<ObserverList>(ObserverList{std::move(list)}));
  g_observers.store(published().back().get(), std::memory_order_release);
}

std::vector<EngineObserver*> current() {
  const ObserverList* l = g_observers.load(std::memory_order_acquire);
  return l ? l->list : std::vector<EngineObserver*>{};
}
}  // namespace

void add_observer(EngineObserver* observer) {
  if (!observer) return;
  std::lock_guard<std::mutex> lock(g_install_mu);
  std::vector<EngineObserver*> list = current();
  if (std::find(list.begin(), list.end(), observer) != list.end()) return;
  list.push_back(observer);
  publish(std::move(list));
}

void remove_observer(EngineObserver* observer) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  std::vector<EngineObserver*> list = current();
  const auto it = std::find(list.begin(), list.end(), observer);
  if (it == list.end()) return;
  list.erase(it);
  publish(std::move(list));
}

}  // namespace gb::detail
