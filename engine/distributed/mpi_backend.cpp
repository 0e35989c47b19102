// engine/distributed/mpi_backend.cpp — ProcessGroupMPI: the collectives on MPI, run on one communication thread.
//
// Each collective is checked on the caller's thread, queued, and run by the group's own thread in the order the
// caller queued them (MPI needs every rank to issue collectives in the same order: one thread per group keeps the
// caller's order). The caller goes on (overlap) and waits on the Work. MPI runs with MPI_ERRORS_RETURN on the
// group's own communicator (a duplicate of MPI_COMM_WORLD), so a failed call becomes a gb::Error in wait(); a rank
// that dies takes the job down through mpirun, which ends the others. Built without MPI, make_mpi_group throws an
// error that names the packages to install. Each collective is a span on the communication thread
// (collective_trace.h).
#include <chrono>
#include <memory>
#include <string>

#include "distributed/backends.h"
#include "glassbox/core/error.h"

#if GLASSBOX_WITH_MPI
#include <mpi.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "distributed/collective_trace.h"
#endif

namespace gb::distributed::detail {

#if !GLASSBOX_WITH_MPI

bool mpi_built() { return false; }

void mpi_broadcast_bytes(std::vector<unsigned char>&, int) {
  throw Error(
      "gb::distributed::init_process_group(\"nccl\"): this build of glassbox has no MPI to hand out NCCL's id "
      "under mpirun: set MASTER_ADDR (rank 0's host) and MASTER_PORT (a free port) in every rank, or install Open "
      "MPI (apt-get install libopenmpi-dev openmpi-bin, or `make deps`) and rebuild.");
}

std::shared_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds) {
  throw Error(
      "gb::distributed::init_process_group(\"mpi\"): this build of glassbox has no MPI backend (CMake did not find "
      "MPI, or GLASSBOX_MPI was OFF). Install Open MPI (apt-get install libopenmpi-dev openmpi-bin, or `make deps`) "
      "and rebuild.");
}

#else

bool mpi_built() { return true; }

namespace {

std::string mpi_message(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, size_t(len));
}

void mpi_check(int code, const char* call, const std::string& what) {
  if (code != MPI_SUCCESS)
    throw Error(gb::detail::str_cat("gb::distributed (mpi): ", what, ": ", call, " failed: ", mpi_message(code)));
}

MPI_Datatype mpi_type(ScalarType t, const char* op) {
  switch (t) {
    case kFloat:
      return MPI_FLOAT;
    case kDouble:
      return MPI_DOUBLE;
    case kInt8:
      return MPI_INT8_T;
    case kUInt8:
      return MPI_UINT8_T;
    case kInt16:
      return MPI_INT16_T;
    case kInt32:
      return MPI_INT32_T;
    case kInt64:
      return MPI_INT64_T;
    case kBool:
      return MPI_C_BOOL;
    default:
      throw TypeError(
          gb::detail::str_cat("gb::distributed::", op,
                              ": the MPI backend carries float32, float64, int8, uint8, int16, int32, int64 and "
                              "bool tensors, not ",
                              to_string(t), "; convert with .to(gb::kFloat) (and back) around the collective"));
  }
}

// MPI's op for a reduction of dtype t: bool reduces logically (sum and max: or; product and min: and), as PyTorch.
MPI_Op mpi_op(ReduceOp op, ScalarType t, const char* name) {
  if (t == kBool) return op == ReduceOp::SUM || op == ReduceOp::MAX ? MPI_LOR : MPI_LAND;
  switch (op) {
    case ReduceOp::SUM:
      return MPI_SUM;
    case ReduceOp::AVG:
      check_avg_dtype(t, name);
      return MPI_SUM;
    case ReduceOp::PRODUCT:
      return MPI_PROD;
    case ReduceOp::MIN:
      return MPI_MIN;
    case ReduceOp::MAX:
      return MPI_MAX;
  }
  return MPI_SUM;
}

// AVG's division, on the communication thread (raw: the engine's ops are not called off the caller's thread).
void divide_in_place(const Tensor& t, int n) {
  if (t.scalar_type() == kFloat) {
    float* p = t.data_ptr<float>();
    for (int64_t i = 0, e = t.numel(); i < e; ++i) p[i] /= float(n);
  } else if (t.scalar_type() == kDouble) {
    double* p = t.data_ptr<double>();
    for (int64_t i = 0, e = t.numel(); i < e; ++i) p[i] /= double(n);
  }
}

int count_of(const Tensor& t, const char* op) {
  GB_CHECK(t.numel() <= int64_t(INT32_MAX), "gb::distributed::", op, ": ", t.numel(),
           " elements are more than MPI's int count holds; split the tensor");
  return int(t.numel());
}

class ProcessGroupMPI final : public ProcessGroup {
 public:
  ProcessGroupMPI(MPI_Comm comm, int rank, int size, std::chrono::milliseconds timeout)
      : ProcessGroup(rank, size), comm_(comm), timeout_(timeout), thread_([this] { run(); }) {}

  ~ProcessGroupMPI() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    // The collectives still queued run first; one that cannot finish (a rank died) would hang the exit: the job is
    // aborted instead, with the reason.
    std::shared_ptr<Work> last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!queue_.empty())
        last = queue_.back().work;
      else if (running_)
        last = running_;
    }
    if (last) {
      try {
        last->wait();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "glassbox: rank %d: %s\nglassbox: aborting the MPI job.\n", rank_, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    thread_.join();
    MPI_Comm_free(&comm_);
  }

  std::string getBackendName() const override { return "mpi"; }

  std::shared_ptr<Work> allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts) override {
    check_one_tensor(tensors, "all_reduce");
    Tensor t = tensors[0];
    const MPI_Datatype type = mpi_type(t.scalar_type(), "all_reduce");
    const MPI_Op op = mpi_op(opts.reduceOp, t.scalar_type(), "all_reduce");
    const int n = count_of(t, "all_reduce");
    const bool avg = opts.reduceOp == ReduceOp::AVG;
    return enqueue("all_reduce", gb::detail::str_cat(describe_tensor(t), ", ", reduce_op_name(opts.reduceOp)), t,
                   opts.reduceOp, [=, this] {
                     mpi_check(MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), n, type, op, comm_), "MPI_Allreduce",
                               "all_reduce");
                     if (avg) divide_in_place(t, size_);
                   });
  }

  std::shared_ptr<Work> broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts) override {
    check_one_tensor(tensors, "broadcast");
    GB_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "gb::distributed::broadcast: src ", opts.rootRank,
             " is not a rank of this group of ", size_, " (0..", size_ - 1, ")");
    Tensor t = tensors[0];
    const MPI_Datatype type = mpi_type(t.scalar_type(), "broadcast");
    const int n = count_of(t, "broadcast");
    const int root = int(opts.rootRank);
    return enqueue("broadcast", gb::detail::str_cat(describe_tensor(t), " from rank ", root), t, std::nullopt,
                   [=, this] { mpi_check(MPI_Bcast(t.data_ptr(), n, type, root, comm_), "MPI_Bcast", "broadcast"); });
  }

  std::shared_ptr<Work> allgather(std::vector<std::vector<Tensor> >& outputs, std::vector<Tensor>& inputs) override {
    check_one_tensor(inputs, "all_gather");
    GB_CHECK(outputs.size() == 1, "gb::distributed::all_gather: expected one output list, got ", outputs.size());
    Tensor in = inputs[0];
    std::vector<Tensor> outs = outputs[0];
    GB_CHECK(int64_t(outs.size()) == size_, "gb::distributed::all_gather: the output list holds ", outs.size(),
             " tensors; it needs one per rank (", size_, ")");
    for (const Tensor& o : outs) check_same_layout(o, in, "all_gather", "an output tensor");
    const MPI_Datatype type = mpi_type(in.scalar_type(), "all_gather");
    const int n = count_of(in, "all_gather");
    return enqueue("all_gather", describe_tensor(in), in, std::nullopt, [=, this] {
      // one contiguous receive buffer, then each rank's part into its tensor
      std::vector<unsigned char> flat(size_t(in.nbytes()) * size_t(size_));
      mpi_check(MPI_Allgather(in.data_ptr(), n, type, flat.data(), n, type, comm_), "MPI_Allgather", "all_gather");
      for (int r = 0; r < size_; ++r)
        std::memcpy(outs[size_t(r)].data_ptr(), flat.data() + size_t(r) * size_t(in.nbytes()), size_t(in.nbytes()));
    });
  }

  std::shared_ptr<Work> reduce_scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor> >& inputs,
                                       const ReduceScatterOptions& opts) override {
    check_one_tensor(outputs, "reduce_scatter");
    GB_CHECK(inputs.size() == 1, "gb::distributed::reduce_scatter: expected one input list, got ", inputs.size());
    Tensor out = outputs[0];
    std::vector<Tensor> ins = inputs[0];
    GB_CHECK(int64_t(ins.size()) == size_, "gb::distributed::reduce_scatter: the input list holds ", ins.size(),
             " tensors; it needs one per rank (", size_, ")");
    for (const Tensor& i : ins) check_same_layout(i, out, "reduce_scatter", "an input tensor");
    const MPI_Datatype type = mpi_type(out.scalar_type(), "reduce_scatter");
    const MPI_Op op = mpi_op(opts.reduceOp, out.scalar_type(), "reduce_scatter");
    const int n = count_of(out, "reduce_scatter");
    const bool avg = opts.reduceOp == ReduceOp::AVG;
    return enqueue("reduce_scatter", gb::detail::str_cat(describe_tensor(out), ", ", reduce_op_name(opts.reduceOp)),
                   out, opts.reduceOp, [=, this] {
                     std::vector<unsigned char> flat(size_t(out.nbytes()) * size_t(size_));
                     for (int r = 0; r < size_; ++r)
                       std::memcpy(flat.data() + size_t(r) * size_t(out.nbytes()), ins[size_t(r)].data_ptr(),
                                   size_t(out.nbytes()));
                     mpi_check(MPI_Reduce_scatter_block(flat.data(), out.data_ptr(), n, type, op, comm_),
                               "MPI_Reduce_scatter_block", "reduce_scatter");
                     if (avg) divide_in_place(out, size_);
                   });
  }

  std::shared_ptr<Work> barrier() override {
    return enqueue("barrier", "", Tensor(), std::nullopt,
                   [this] { mpi_check(MPI_Barrier(comm_), "MPI_Barrier", "barrier"); });
  }

 private:
  struct Entry {
    std::function<void()> fn;
    std::shared_ptr<Work> work;
    CollectiveTrace trace;
  };

  std::shared_ptr<Work> enqueue(const char* op, std::string description, const Tensor& t,
                                std::optional<ReduceOp> reduce, std::function<void()> fn) {
    auto work = std::make_shared<Work>(op);
    work->set_default_timeout(timeout_);
    work->set_description(
        gb::detail::str_cat(description, description.empty() ? "" : ", ", "rank ", rank_, " of ", size_, ", mpi"));
    {
      std::lock_guard<std::mutex> lock(mu_);
      GB_CHECK(!stop_, "gb::distributed::", op, ": the process group is being destroyed");
      queue_.push_back(Entry{std::move(fn), work, describe_collective(op, t, reduce, next_seq_++, size_)});
    }
    cv_.notify_one();
    return work;
  }

  void run() {
    name_communication_thread();
    for (;;) {
      Entry e;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        e = std::move(queue_.front());
        queue_.pop_front();
        running_ = e.work;
      }
      std::exception_ptr error;
      try {
        run_traced(e.trace, e.fn);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        running_.reset();
      }
      e.work->finish(error);
    }
  }

  MPI_Comm comm_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  std::shared_ptr<Work> running_;
  bool stop_ = false;
  int64_t next_seq_ = 0;  // the group's collective number (spans.seq in the trace)
  std::thread thread_;  // last: started once the members above exist
};

// MPI is initialised once per process and finalised at exit (it cannot start again once finalised, so
// destroy_process_group leaves it running for a later init_process_group).
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// MPI started (once per process) at the thread level the communication thread needs; `backend` names the caller.
void ensure_mpi(const char* backend) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  GB_CHECK(!finalized, "gb::distributed::init_process_group(\"", backend,
           "\"): MPI was already finalized in this process (MPI cannot start twice); keep MPI running for the "
           "process's lifetime");
  int provided = 0;
  if (!initialized) {
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    GB_CHECK(rc == MPI_SUCCESS, "gb::distributed::init_process_group(\"", backend, "\"): MPI_Init_thread failed (", rc,
             "); start the program with mpirun (as root add --allow-run-as-root)");
    std::atexit(finalize_at_exit);
  } else {
    MPI_Query_thread(&provided);
  }
  GB_CHECK(provided >= MPI_THREAD_SERIALIZED, "gb::distributed::init_process_group(\"", backend,
           "\"): MPI was initialised with thread level ", provided,
           "; glassbox runs collectives on a thread of their own and needs "
           "MPI_THREAD_SERIALIZED or more: let init_process_group initialise MPI, or call MPI_Init_thread with it");
}

}  // namespace

void mpi_broadcast_bytes(std::vector<unsigned char>& bytes, int root) {
  ensure_mpi("nccl");
  mpi_check(MPI_Bcast(bytes.data(), int(bytes.size()), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast",
            "init_process_group(\"nccl\") handing out NCCL's id");
}

std::shared_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds timeout) {
  ensure_mpi("mpi");
  MPI_Comm comm;
  mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup", "init_process_group");
  mpi_check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", "init_process_group");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  return std::make_shared<ProcessGroupMPI>(comm, rank, size, timeout);
}

#endif

}  // namespace gb::distributed::detail
