// viewer/async_cache.h — the two ways the viewer's models answer a frame without waiting: AsyncCache keeps answers
// read off the UI thread by key (a span's details, its record or shapes, a step's autograd graph, an op table with
// CUDA columns); AsyncSlot holds one computation whose newest key wins (a memory window, a cursor, a column count,
// a search), showing the last answer meanwhile. Every question of a frame that needs SQL or a replay goes through
// one of them, so no frame waits for SQLite.
//
// AsyncCache contract (all calls from the UI thread):
//   - get(key, worker, read) answers at once: the kept answer for key, else nullptr. The first get() of a key posts
//     read(db) to the worker (worker.h: its own connection); a later get() after the job is done takes its answer
//     and keeps it. read returns std::optional<T>: nullopt means "no such thing" and is kept too (pending() is then
//     false and get() keeps answering nullptr). An exception in read (the model closes and interrupts the query, or
//     the file cannot be read) counts as nullopt.
//   - pending(key) is true from the first get() until the answer is taken.
//   - At most `cap` answers are kept; beyond that the oldest ones are dropped (a holder's shared_ptr stays valid).
//   - The jobs share nothing with the cache but their own state, so the cache can go away before they run.
//
// AsyncSlot contract (all calls from the UI thread):
//   - get(key, worker, compute) answers at once with the last finished answer, whatever its key (nullptr before
//     the first); exact(key, ...) the same, but only an answer for this key. The first get() of a key posts
//     compute(db) to the worker (db: the worker's connection; nullptr on a worker opened without one); asking the
//     queued key again posts nothing; a newer key supersedes a queued job (skipped if it has not started).
//   - An exception in compute (the model closes and interrupts it, the file changed) answers T{} for that key.
//   - pending() is true from posting the newest key's job until a get() takes its answer (a finished job's answer
//     is taken by the next get(): never behind the caller's back).
//   - set(key, value) is the answer at once (cancelling a queued job): what needs no work, like an empty search.
//   - A job's compute may capture its model (`this`): the model's owner stops the worker before the model goes
//     (TraceModel's destructor resets its workers first).
//
//   AsyncCache<Id, SpanDetails> details;
//   if (auto d = details.get(id, queries, [this, id](const TraceDb& db) { return read_details(db, id); })) show(*d);
//   AsyncSlot<std::array<std::int64_t, 3>, Columns> columns;
//   if (const Columns* c = columns.get({t0, t1, n}, compute, [=](const TraceDb*) { return reduce(t0, t1, n); })) draw(*c);
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <exception>
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

template <class K, class T>
class AsyncSlot {
 public:
  template <class Compute>
  const T* get(const K& key, Worker& worker, Compute compute) {
    take();
    if (last_ && last_key_ == key) return &*last_;
    if (!job_ || job_->key != key) {
      if (job_) job_->cancelled.store(true);  // superseded: skipped if still queued
      auto job = std::make_shared<Job>();
      job->key = key;
      job_ = job;
      worker.post([job, compute = std::move(compute)](const gb::query::TraceDb* db) {
        try {
          if (!job->cancelled.load()) job->result = compute(db);
        } catch (const std::exception&) {  // interrupted (the model closes) or unreadable: T{}
        }
        job->done.store(true, std::memory_order_release);
      });
    }
    return last_ ? &*last_ : nullptr;
  }
  template <class Compute>
  const T* exact(const K& key, Worker& worker, Compute compute) {
    const T* answer = get(key, worker, std::move(compute));
    return answer && last_key_ == key ? answer : nullptr;
  }
  const T* set(const K& key, T value) {
    if (job_) job_->cancelled.store(true), job_.reset();
    last_ = std::move(value);
    last_key_ = key;
    return &*last_;
  }
  bool pending() const { return job_ != nullptr; }

 private:
  struct Job {
    K key{};
    T result{};
    std::atomic<bool> done{false}, cancelled{false};
  };
  void take() {
    if (!job_ || !job_->done.load(std::memory_order_acquire)) return;
    last_ = std::move(job_->result);
    last_key_ = std::move(job_->key);
    job_.reset();
  }
  std::shared_ptr<Job> job_;
  std::optional<T> last_;
  K last_key_{};
};

}  // namespace gb::viewer
