// viewer/worker.h — one background thread with its own connection to the trace, running queued jobs in order, so
// a slow query (a search, a comparison, a timeline window) never runs inside a frame. No ImGui.
//
// Contract:
//   - Worker(path) starts the thread; the connection (gb::query::TraceDb) is opened on it, on the first job. A job
//     gets that connection, or nullptr when the trace cannot be opened; it reports its result through state it
//     shares with the poster (a shared_ptr with an atomic `done`), never by touching the poster's members.
//   - Worker("") opens no connection (jobs get nullptr): a thread for in-memory work.
//   - post() returns at once. wait_idle() returns when the queue is empty and no job runs (tests, the screenshot).
//   - interrupt() (any thread) makes the running job's SQL on the connection stop at once (sqlite3_interrupt: the
//     query throws; the job treats that as cancelled). The destructor drops the queued jobs, interrupts the running
//     one and joins, so closing a model never waits for a long search.
//
//   Worker w("run.db");
//   auto out = std::make_shared<Result>();
//   w.post([out](const gb::query::TraceDb* db) { out->value = query(*db); out->done = true; });
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace gb::query {
class TraceDb;
}

namespace gb::viewer {

class Worker {
 public:
  using Job = std::function<void(const gb::query::TraceDb*)>;
  explicit Worker(std::string path);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void post(Job job);
  void wait_idle();
  void interrupt();

 private:
  void run();
  std::string path_;
  std::mutex m_;
  std::condition_variable work_, idle_;
  std::deque<Job> jobs_;
  bool stop_ = false, busy_ = false;
  const gb::query::TraceDb* db_ = nullptr;  // the open connection (guarded by m_), for interrupt()
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace gb::viewer
