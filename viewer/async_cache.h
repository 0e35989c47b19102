// viewer/async_cache.h — answers read off the UI thread and kept by key: the one way TraceModel answers a frame's
// question that needs SQL (a span's details, its record or shapes, a step's autograd graph, an op table with CUDA
// columns), so no frame waits for SQLite.
//
// Contract (all calls from the UI thread):
//   - get(key, worker, read) answers at once: the kept answer for key, else nullptr. The first get() of a key posts
//     read(db) to the worker (worker.h: its own connection); a later get() after the job is done takes its answer
//     and keeps it. read returns std::optional<T>: nullopt means "no such thing" and is kept too (pending() is then
//     false and get() keeps answering nullptr). An exception in read (the model closes and interrupts the query, or
//     the file cannot be read) counts as nullopt.
//   - pending(key) is true from the first get() until the answer is taken.
//   - At most `cap` answers are kept; beyond that the oldest ones are dropped (a holder's shared_ptr stays valid).
//   - The jobs share nothing with the cache but their own state, so the cache can go away before they run.
//
//   AsyncCache<Id, SpanDetails> details;
//   if (auto d = details.get(id, *queries_, [this, id](const TraceDb& db) { return read_details(db, id); })) show(*d);
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "traces/query/trace_db.h"
#include "viewer/worker.h"

namespace gb::viewer {

template <class K, class T>
class AsyncCache {
 public:
  explicit AsyncCache(std::size_t cap = 4096) : cap_(cap) {}

  template <class Read>
  std::shared_ptr<const T> get(const K& key, Worker& worker, Read read) {
    if (auto it = answers_.find(key); it != answers_.end()) return it->second;
    auto j = jobs_.find(key);
    if (j == jobs_.end()) {
      auto job = std::make_shared<Job>();
      jobs_.emplace(key, job);
      worker.post([job, read = std::move(read)](const gb::query::TraceDb* db) {
        try {
          if (db) job->result = read(*db);
        } catch (const std::exception&) {  // interrupted or unreadable: no answer
        }
        job->done.store(true, std::memory_order_release);
      });
      return nullptr;
    }
    if (!j->second->done.load(std::memory_order_acquire)) return nullptr;
    std::shared_ptr<const T> answer;
    if (j->second->result) answer = std::make_shared<const T>(std::move(*j->second->result));
    jobs_.erase(j);
    if (order_.size() >= cap_) answers_.erase(order_.front()), order_.pop_front();
    order_.push_back(key);
    answers_.emplace(key, answer);
    return answer;
  }
  bool pending(const K& key) const { return jobs_.count(key) > 0; }
  bool any_pending() const { return !jobs_.empty(); }

 private:
  struct Job {
    std::optional<T> result;
    std::atomic<bool> done{false};
  };
  std::size_t cap_;
  std::map<K, std::shared_ptr<const T>> answers_;  // nullptr: answered "none"
  std::deque<K> order_;                             // answers_ keys, oldest first
  std::map<K, std::shared_ptr<Job>> jobs_;
};

}  // namespace gb::viewer
