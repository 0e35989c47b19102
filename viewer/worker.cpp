// viewer/worker.cpp — the background query thread (contract in worker.h).
#include "viewer/worker.h"

#include "traces/query/trace_db.h"

namespace gb::viewer {

Worker::Worker(std::string path) : path_(std::move(path)), thread_([this] { run(); }) {}

Worker::~Worker() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
    jobs_.clear();
    if (db_ && busy_) db_->interrupt();
  }
  work_.notify_all();
  thread_.join();
}

void Worker::post(Job job) {
  {
    std::lock_guard lock(m_);
    jobs_.push_back(std::move(job));
  }
  work_.notify_one();
}

void Worker::wait_idle() {
  std::unique_lock lock(m_);
  idle_.wait(lock, [&] { return jobs_.empty() && !busy_; });
}

void Worker::interrupt() {
  std::lock_guard lock(m_);
  if (db_ && busy_) db_->interrupt();
}

void Worker::run() {
  std::unique_ptr<gb::query::TraceDb> db;
  bool opened = false;
  for (;;) {
    Job job;
    {
      std::unique_lock lock(m_);
      work_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) break;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
    }
    if (!opened && !path_.empty()) {
      opened = true;
      try {
        db = std::make_unique<gb::query::TraceDb>(path_);
        std::lock_guard lock(m_);
        db_ = db.get();
      } catch (const std::exception&) {
      }
    }
    try {
      job(db.get());
    } catch (...) {  // a job reports its own errors; one that throws anyway must not end the thread
    }
    {
      std::lock_guard lock(m_);
      busy_ = false;
    }
    idle_.notify_all();
  }
  {
    std::lock_guard lock(m_);
    busy_ = false;
    db_ = nullptr;  // before the connection closes: interrupt() never touches a closed one
  }
  idle_.notify_all();
}

}  // namespace gb::viewer
