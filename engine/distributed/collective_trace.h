// engine/distributed/collective_trace.h — what the trace shows of a collective (internal to the backends and DDP).
//
// Contract:
//   - Every collective a backend runs is a span of kind collective on the group's communication thread (thread role
//     communication, named "communication"), named by the collective ("all_reduce", "broadcast", ..., or the name a
//     CollectiveTag gave it), with seq = the group's collective number (the same on every rank: collectives run in
//     the same order everywhere), and a `collectives` row: bytes, dtype, reduce op, DDP's bucket, peers, and when
//     the caller queued it (traces/SCHEMA.md).
//   - A CollectiveTag on the caller's thread names the collectives queued inside it (DDP's bucket index; the clock
//     handshake's "clock_sync" barrier). The backend reads it when the collective is queued.
//   - On NCCL the span is the collective's time on the GPU (CUDA events on the group's stream, put on the trace's
//     clock), recorded by the group's watchdog thread once the collective finished: still on the communication
//     track, in seq order (one stream runs them one after another).
//   - A Work::wait() that blocks is a span of kind collective named "wait <collective>" on the waiting thread.
//   Nothing is recorded while no trace records.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "glassbox/distributed/process_group.h"

namespace gb::distributed::detail {

// What the caller of a collective says about it (thread-local, innermost tag wins).
class CollectiveTag {
 public:
  explicit CollectiveTag(std::optional<int64_t> bucket, const char* name = nullptr);
  ~CollectiveTag();
  CollectiveTag(const CollectiveTag&) = delete;
  CollectiveTag& operator=(const CollectiveTag&) = delete;

 private:
  std::optional<int64_t> prev_bucket_;
  const char* prev_name_;
};

// One queued collective as its trace will show it; made on the caller's thread.
struct CollectiveTrace {
  const char* name = "";
  int64_t bytes = 0;
  ScalarType dtype = kFloat;
  std::optional<ReduceOp> op;
  std::optional<int64_t> bucket;
  int64_t seq = 0;
  int64_t peers = 0;
  int64_t queued_ticks = 0;
};
CollectiveTrace describe_collective(const char* op, const Tensor& t, std::optional<ReduceOp> reduce, int64_t seq,
                                    int64_t peers);

// Names the calling thread "communication" (role communication) in the trace.
void name_communication_thread();
// Runs fn inside the collective's span and writes its collectives row (the span and row only while tracing).
void run_traced(const CollectiveTrace& c, const std::function<void()>& fn);
// The collectives row of a collective whose span (spans.id `span`, 0: none) is recorded already: how a GPU
// backend traces a collective it timed with CUDA events (instrument/past_span.h).
void emit_collective_row(const CollectiveTrace& c, std::int64_t span);

}  // namespace gb::distributed::detail
