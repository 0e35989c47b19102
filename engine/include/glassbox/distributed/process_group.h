// glassbox/distributed/process_group.h — collectives among the processes of a data-parallel job (PyTorch's c10d).
//
// A ProcessGroup is one process's handle on the group: its rank, the group's size, and the collectives, each of
// which every rank must call in the same order with tensors of the same shapes and dtype. A collective returns a
// Work handle at once; the backend runs it on its own communication thread, so the caller can go on computing
// (overlap) and calls wait() before it reads or writes the tensors again. wait() throws gb::Error when the
// collective failed or did not finish within the group's timeout (a rank that died or never reached it).
//
// Backends (glassbox::distributed::available_backends() lists this build's): "mpi" (Open MPI or any MPI) for CPU
// tensors, "nccl" (NVIDIA's NCCL, in a build with CUDA) for CUDA tensors on the device that was current at
// init_process_group, run on the group's own stream after the work the caller's stream had queued.
// The free functions in glassbox/distributed/distributed.h (init_process_group, all_reduce, ...) work on the
// default group, as torch.distributed's do.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "glassbox/core/tensor.h"

namespace gb::distributed {

// c10d::ReduceOp. AVG (floating dtypes only) sums, then divides by the group's size.
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };
const char* reduce_op_name(ReduceOp op);  // "sum", "avg", ...

// The handle of one collective. Thread-safe: any thread may wait on it.
class Work {
 public:
  explicit Work(std::string op) : op_(std::move(op)) {}
  virtual ~Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  // Blocks until the collective finished; throws gb::Error with the backend's message if it failed, or when it did
  // not finish within `timeout` (default: the group's timeout, set by init_process_group). On NCCL (as PyTorch's
  // WorkNCCL) the caller's current CUDA stream waits instead of the host, except for barrier(); a collective that
  // does not finish within the group's timeout fails every later wait().
  virtual bool wait(std::chrono::milliseconds timeout = kNoTimeout);
  bool is_completed() const;
  bool is_success() const;  // completed without an error
  std::exception_ptr exception() const;
  const std::string& op() const { return op_; }  // "all_reduce", "broadcast", ...

  static constexpr std::chrono::milliseconds kNoTimeout{-1};

  // For backends: the outcome, once (wakes every waiter).
  void finish(std::exception_ptr error = nullptr);
  void set_default_timeout(std::chrono::milliseconds t) { default_timeout_ = t; }
  void set_description(std::string d) { description_ = std::move(d); }  // named in a timeout's message

 private:
  std::string op_, description_;
  std::chrono::milliseconds default_timeout_{std::chrono::minutes(30)};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

struct AllreduceOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
};
struct BroadcastOptions {
  int64_t rootRank = 0;
};
struct ReduceScatterOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
};

// One process's handle on a group of `size` processes (c10d::ProcessGroup's methods and names). Tensors must be
// contiguous, on the backend's device, of a dtype the backend carries (MPI: float32, float64, int8, uint8, int16,
// int32, int64, bool on the CPU; NCCL: float32, float64, float16, bfloat16, int8, uint8, int32, int64, bool on the
// group's GPU); every rank passes the same shapes and dtype.
class ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int getRank() const { return rank_; }
  int getSize() const { return size_; }
  virtual std::string getBackendName() const = 0;

  // Each tensor reduced in place across the ranks (one tensor per call on a CPU backend).
  virtual std::shared_ptr<Work> allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts = {}) = 0;
  // rootRank's tensor copied into every rank's.
  virtual std::shared_ptr<Work> broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts = {}) = 0;
  // outputs[0][r] = rank r's inputs[0], on every rank (outputs[0] holds size() tensors shaped like the input).
  virtual std::shared_ptr<Work> allgather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs) = 0;
  // outputs[0] = the reduction over ranks of their inputs[0][rank()] (inputs[0] holds size() tensors shaped like
  // the output).
  virtual std::shared_ptr<Work> reduce_scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs,
                                               const ReduceScatterOptions& opts = {}) = 0;
  // Completes once every rank has called it.
  virtual std::shared_ptr<Work> barrier() = 0;

 protected:
  int rank_, size_;
};

// The backends this build has, in the order init_process_group tries them for "": e.g. {"mpi"}.
std::vector<std::string> available_backends();

}  // namespace gb::distributed
