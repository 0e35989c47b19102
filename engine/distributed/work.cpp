// engine/distributed/work.cpp — the Work handle of one collective: finish() once, wait() with a timeout; a wait that
// blocks is a span of kind collective, "wait <collective>", on the waiting thread.
#include <optional>
#include <string>

#include "glassbox/core/error.h"
#include "glassbox/distributed/process_group.h"
#include "instrument/probe.h"

namespace gb::distributed {

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

bool Work::wait(std::chrono::milliseconds timeout) {
  if (timeout == kNoTimeout) timeout = default_timeout_;
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<trace::Span> blocked;  // the time this thread waited for the communication (exposed, not overlapped)
  if (!done_ && trace::enabled()) blocked.emplace(trace::location("wait " + op_, trace::SpanKind::collective));
  if (!cv_.wait_for(lock, timeout, [this] { return done_; }))
    throw Error(detail::str_cat(
        op_, description_.empty() ? "" : " (" + description_ + ")", " did not finish within ", timeout.count(),
        " ms: another rank may have failed, exited, or not reached the same collective (every rank must call the "
        "same collectives in the same order, with the same shapes). Read the other ranks' output; a slow job can "
        "raise the limit with init_process_group(backend, timeout)."));
  if (error_) std::rethrow_exception(error_);
  return true;
}

bool Work::is_completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

bool Work::is_success() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_ && !error_;
}

std::exception_ptr Work::exception() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "sum";
    case ReduceOp::AVG:
      return "avg";
    case ReduceOp::PRODUCT:
      return "product";
    case ReduceOp::MIN:
      return "min";
    case ReduceOp::MAX:
      return "max";
  }
  return "unknown";
}

}  // namespace gb::distributed
