// viewer/compare_model.cpp — CompareModel (contract in compare_model.h): the diff on the query worker.
#include "viewer/compare_model.h"

#include <stdexcept>

namespace gb::viewer {

void CompareModel::start(const std::string& path_b) {
  if (job_) job_->cancelled = true, job_.reset();
  diff_.reset();
  run_b_.reset();
  error_.clear();
  if (path_b.empty()) return;
  auto job = std::make_shared<Job>();
  job->path = path_b;
  job_ = job;
  worker_.post([job](const gb::query::TraceDb* a) {
    if (!job->cancelled) {
      try {
        if (!a) throw std::runtime_error("this trace cannot be read again");
        const gb::query::TraceDb b(job->path);
        job->result = gb::query::diff_traces(*a, b);
        if (!job->cancelled) job->run = read_run(b);
      } catch (const std::exception& e) {
        job->error = job->path + ": " + e.what();
      }
    }
    job->done.store(true, std::memory_order_release);
  });
}

void CompareModel::poll() const {
  if (!job_ || !job_->done.load(std::memory_order_acquire)) return;
  diff_ = std::move(job_->result);
  run_b_ = std::move(job_->run);
  error_ = std::move(job_->error);
  job_.reset();
}

}  // namespace gb::viewer
