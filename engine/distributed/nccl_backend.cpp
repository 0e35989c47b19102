// engine/distributed/nccl_backend.cpp — ProcessGroupNCCL: the collectives on NCCL, on CUDA tensors, as PyTorch's
// ProcessGroupNCCL runs them.
//
// - One communicator per group, on the CUDA device that was current at init_process_group. Rank and size come from
//   the launcher's environment (rendezvous.h); rank 0's ncclUniqueId reaches the others over TCP at
//   MASTER_ADDR:MASTER_PORT, or through MPI under mpirun.
// - A collective is launched on the caller's thread (the group's mutex keeps every rank's launch order the caller's
//   order) on the group's own highest-priority stream, after an event of the caller's current stream: it reads what
//   the caller's kernels wrote. Its tensors are recorded on that stream (Tensor::record_stream), so the caching
//   allocator does not hand their memory out before the collective ran. Work::wait() makes the caller's current
//   stream wait for the collective's end event (the host goes on); barrier()'s wait blocks the host as well.
// - A watchdog thread (the trace's "communication" thread) polls the collectives in order: a finished one is marked
//   done and, while a trace records, becomes a collective span at the GPU's own times (CUDA events timed against an
//   anchor event whose completion the watchdog saw on the host, put on the trace's clock) with its collectives row.
//   One that outlives the group's timeout, or an asynchronous NCCL error, aborts the communicator (kernels stuck on
//   a dead peer end), fails every pending Work, and every later collective of the group throws with the reason.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "distributed/backends.h"
#include "glassbox/core/error.h"

#if GLASSBOX_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "cuda/check.h"
#include "distributed/collective_trace.h"
#include "distributed/rendezvous.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/cuda.h"
#include "glassbox/core/cuda_stream.h"
#include "glassbox/ops/factory.h"
#include "instrument/clock.h"
#include "instrument/past_span.h"
#endif

namespace gb::distributed::detail {

#if !GLASSBOX_WITH_NCCL

bool nccl_built() { return false; }

std::shared_ptr<ProcessGroup> make_nccl_group(std::chrono::milliseconds) {
#ifdef GLASSBOX_WITH_CUDA
  throw Error(
      "gb::distributed::init_process_group(\"nccl\"): this build of glassbox has no NCCL backend (CMake found CUDA "
      "but not NCCL: nccl.h and libnccl.so, which the CUDA toolkit image ships; or GLASSBOX_NCCL was OFF). Install "
      "NCCL and rebuild, or train on CPU tensors with backend \"mpi\".");
#else
  throw Error(
      "gb::distributed::init_process_group(\"nccl\"): this build of glassbox has no CUDA, so no NCCL backend (nvcc "
      "was not on the PATH when it was configured, or GLASSBOX_CUDA was OFF). Rebuild on a machine with the CUDA "
      "toolkit, or train on CPU tensors with backend \"mpi\".");
#endif
}

Device group_device(const ProcessGroup&) { return Device(DeviceType::CPU); }

#else

bool nccl_built() { return true; }

namespace {

using Clock = std::chrono::steady_clock;

const char* nccl_hint(ncclResult_t r) {
  switch (r) {
    case ncclUnhandledCudaError:
      return "a CUDA call inside NCCL failed (`glassbox env` checks the driver and the devices)";
    case ncclSystemError:
      return "a system call failed: sockets or shared memory (in a container give it --ipc=host or a larger "
             "--shm-size); NCCL_DEBUG=INFO says which";
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return "two ranks on one GPU is the usual cause: call gb::cuda::set_device(local rank) before "
             "init_process_group; NCCL_DEBUG=WARN says more";
    case ncclRemoteError:
      return "another rank failed or exited: read its output";
    default:
      return "NCCL_DEBUG=INFO shows NCCL's own log";
  }
}

void nccl_check(ncclResult_t r, const char* call, const std::string& what, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess) return;
  const char* last = ncclGetLastError(comm);
  throw Error(gb::detail::str_cat("gb::distributed (nccl): ", what, ": ", call, " failed: ", ncclGetErrorString(r),
                                  last && *last ? gb::detail::str_cat(" (", last, ")") : std::string(), "; ",
                                  nccl_hint(r)));
}

ncclDataType_t nccl_type(ScalarType t, const char* op) {
  switch (t) {
    case kFloat:
      return ncclFloat32;
    case kDouble:
      return ncclFloat64;
    case kHalf:
      return ncclFloat16;
    case kBFloat16:
      return ncclBfloat16;
    case kInt8:
      return ncclInt8;
    case kUInt8:
    case kBool:  // one byte; reduced with max / min (nccl_op), as PyTorch does
      return ncclUint8;
    case kInt32:
      return ncclInt32;
    case kInt64:
      return ncclInt64;
    default:
      throw TypeError(gb::detail::str_cat(
          "gb::distributed::", op,
          ": the NCCL backend carries float32, float64, float16, bfloat16, int8, uint8, int32, int64 and bool "
          "tensors, not ",
          to_string(t), "; convert with .to(gb::kInt32) (and back) around the collective"));
  }
}

// NCCL's op for a reduction of dtype t: bool reduces logically (sum and max: max, product and min: min), as PyTorch.
ncclRedOp_t nccl_op(ReduceOp op, ScalarType t, const char* name) {
  if (t == kBool) return op == ReduceOp::SUM || op == ReduceOp::MAX ? ncclMax : ncclMin;
  switch (op) {
    case ReduceOp::SUM:
      return ncclSum;
    case ReduceOp::AVG:
      check_avg_dtype(t, name);
      return ncclAvg;
    case ReduceOp::PRODUCT:
      return ncclProd;
    case ReduceOp::MIN:
      return ncclMin;
    case ReduceOp::MAX:
      return ncclMax;
  }
  return ncclSum;
}

// The group's own stream: highest priority, not synchronizing with the default stream, used by nothing else (its
// anchor events must find it idle when the group has nothing pending).
gb::cuda::CUDAStream make_stream(int device) {
  cuda_kernels::DeviceGuard guard(device);
  int least = 0, greatest = 0;
  GB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s = nullptr;
  GB_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
  return gb::cuda::CUDAStream(Device(DeviceType::CUDA, device), s);
}

// A CUDA event on the group's stream whose completion the watchdog saw on the host at `ticks` (trace clock ticks):
// the origin the collectives' event times are measured from. Renewed while the stream is idle, so the float
// milliseconds of cudaEventElapsedTime stay exact to well under a microsecond.
struct Anchor {
  gb::cuda::CUDAEvent event{true};
  std::int64_t ticks = 0;
  Clock::time_point made;
};

class WorkNCCL final : public Work {
 public:
  WorkNCCL(const char* op, Device device, bool host_wait, bool timing)
      : Work(op), device_(device), host_wait_(host_wait), timing(timing), start(timing), end(timing) {}

  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override {
    if (host_wait_) return Work::wait(timeout);  // barrier: the host waits (the watchdog marks it done)
    if (std::exception_ptr e = exception()) std::rethrow_exception(e);
    end.block(gb::cuda::getCurrentCUDAStream(device_.index()));  // later kernels of the caller's stream run after it
    return true;
  }

  Device device_;
  bool host_wait_;
  bool timing;                     // events with timing: a trace was recording when it was launched
  gb::cuda::CUDAEvent start, end;  // on the group's stream around the collective (start only when timing)
  std::shared_ptr<Anchor> anchor;
  std::vector<Tensor> tensors;  // alive until the collective ran (their blocks are also recorded on the stream)
  CollectiveTrace trace;
  std::int32_t step = -1;
  std::string what;  // "all_reduce (1000 x float32, sum, rank 0 of 2, nccl on cuda:0)"
  Clock::time_point deadline;
};

class ProcessGroupNCCL final : public ProcessGroup {
 public:
  ProcessGroupNCCL(ncclComm_t comm, int rank, int size, Device device, std::chrono::milliseconds timeout)
      : ProcessGroup(rank, size),
        comm_(comm),
        device_(device),
        stream_(make_stream(device.index())),
        timeout_(timeout) {
    anchor_ = make_anchor();
    thread_ = std::thread([this] { run(); });
  }

  ~ProcessGroupNCCL() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();  // the watchdog returns once every pending collective finished or failed
    if (!aborted_) (void)ncclCommDestroy(comm_);
    // a destructor: never throws, and a failure is not left for the next launch check to report as its own
    cuda_kernels::DeviceGuard g(device_.index(), std::nothrow);
    (void)cuda_kernels::cuda_ok_or_clear(cudaStreamSynchronize(stream_.stream()));
    (void)cuda_kernels::cuda_ok_or_clear(cudaStreamDestroy(stream_.stream()));
  }

  std::string getBackendName() const override { return "nccl"; }
  Device device() const { return device_; }

  std::shared_ptr<Work> allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts) override {
    const Tensor t = one_tensor(tensors, "all_reduce");
    const ncclDataType_t type = nccl_type(t.scalar_type(), "all_reduce");
    const ncclRedOp_t op = nccl_op(opts.reduceOp, t.scalar_type(), "all_reduce");
    return launch("all_reduce", gb::detail::str_cat(describe_tensor(t), ", ", reduce_op_name(opts.reduceOp)), t,
                  opts.reduceOp, {t}, false, [&](cudaStream_t s, std::vector<Tensor>&) {
                    nccl_check(ncclAllReduce(t.data_ptr(), t.data_ptr(), size_t(t.numel()), type, op, comm_, s),
                               "ncclAllReduce", "all_reduce", comm_);
                  });
  }

  std::shared_ptr<Work> broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts) override {
    const Tensor t = one_tensor(tensors, "broadcast");
    GB_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "gb::distributed::broadcast: src ", opts.rootRank,
             " is not a rank of this group of ", size_, " (0..", size_ - 1, ")");
    const ncclDataType_t type = nccl_type(t.scalar_type(), "broadcast");
    const int root = int(opts.rootRank);
    return launch("broadcast", gb::detail::str_cat(describe_tensor(t), " from rank ", root), t, std::nullopt, {t},
                  false, [&](cudaStream_t s, std::vector<Tensor>&) {
                    nccl_check(ncclBroadcast(t.data_ptr(), t.data_ptr(), size_t(t.numel()), type, root, comm_, s),
                               "ncclBroadcast", "broadcast", comm_);
                  });
  }

  std::shared_ptr<Work> allgather(std::vector<std::vector<Tensor> >& outputs, std::vector<Tensor>& inputs) override {
    const Tensor in = one_tensor(inputs, "all_gather");
    GB_CHECK(outputs.size() == 1, "gb::distributed::all_gather: expected one output list, got ", outputs.size());
    const std::vector<Tensor> outs = outputs[0];
    GB_CHECK(int64_t(outs.size()) == size_, "gb::distributed::all_gather: the output list holds ", outs.size(),
             " tensors; it needs one per rank (", size_, ")");
    for (const Tensor& o : outs) check_like(o, in, "all_gather", "an output tensor");
    const ncclDataType_t type = nccl_type(in.scalar_type(), "all_gather");
    std::vector<Tensor> used = outs;
    used.push_back(in);
    return launch("all_gather", describe_tensor(in), in, std::nullopt, used, false,
                  [&](cudaStream_t s, std::vector<Tensor>& keep) {
                    // NCCL gathers into one buffer; each rank's part is then copied into its tensor on this stream
                    const int64_t n = in.numel();
                    Tensor flat = empty({n * size_}, in.options());
                    keep.push_back(flat);
                    nccl_check(ncclAllGather(in.data_ptr(), flat.data_ptr(), size_t(n), type, comm_, s),
                               "ncclAllGather", "all_gather", comm_);
                    for (int r = 0; r < size_; ++r) outs[size_t(r)].copy_(flat.narrow(0, r * n, n).view(in.sizes()));
                  });
  }

  std::shared_ptr<Work> reduce_scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor> >& inputs,
                                       const ReduceScatterOptions& opts) override {
    const Tensor out = one_tensor(outputs, "reduce_scatter");
    GB_CHECK(inputs.size() == 1, "gb::distributed::reduce_scatter: expected one input list, got ", inputs.size());
    const std::vector<Tensor> ins = inputs[0];
    GB_CHECK(int64_t(ins.size()) == size_, "gb::distributed::reduce_scatter: the input list holds ", ins.size(),
             " tensors; it needs one per rank (", size_, ")");
    for (const Tensor& i : ins) check_like(i, out, "reduce_scatter", "an input tensor");
    const ncclDataType_t type = nccl_type(out.scalar_type(), "reduce_scatter");
    const ncclRedOp_t op = nccl_op(opts.reduceOp, out.scalar_type(), "reduce_scatter");
    std::vector<Tensor> used = ins;
    used.push_back(out);
    return launch("reduce_scatter", gb::detail::str_cat(describe_tensor(out), ", ", reduce_op_name(opts.reduceOp)), out,
                  opts.reduceOp, used, false, [&](cudaStream_t s, std::vector<Tensor>& keep) {
                    const int64_t n = out.numel();
                    Tensor flat = empty({n * size_}, out.options());
                    keep.push_back(flat);
                    for (int r = 0; r < size_; ++r) flat.narrow(0, r * n, n).copy_(ins[size_t(r)].reshape({-1}));
                    nccl_check(ncclReduceScatter(flat.data_ptr(), out.data_ptr(), size_t(n), type, op, comm_, s),
                               "ncclReduceScatter", "reduce_scatter", comm_);
                  });
  }

  // PyTorch's: an all-reduce of one element on the device, and the host waits for it.
  std::shared_ptr<Work> barrier() override {
    Tensor one = zeros({1}, TensorOptions().dtype(kFloat).device(device_));
    return launch("barrier", "", Tensor(), std::nullopt, {one}, true, [&](cudaStream_t s, std::vector<Tensor>&) {
      nccl_check(ncclAllReduce(one.data_ptr(), one.data_ptr(), 1, ncclFloat32, ncclSum, comm_, s), "ncclAllReduce",
                 "barrier", comm_);
    });
  }

 private:
  void check_tensor(const Tensor& t, const char* op, const char* what) const {
    GB_CHECK(t.defined(), "gb::distributed::", op, ": ", what, " is an undefined tensor");
    GB_CHECK(t.device() == device_, "gb::distributed::", op, ": ", what, " is on ", t.device().str(),
             "; this rank's NCCL group runs on ", device_.str(),
             " (the device current at init_process_group): move it with .to(\"", device_.str(),
             "\"), or call gb::cuda::set_device before init_process_group");
    GB_CHECK(t.is_contiguous(), "gb::distributed::", op, ": ", what, " (sizes ", t.sizes(), ", strides ", t.strides(),
             ") is not contiguous; pass t.contiguous() and copy the result back");
  }
  Tensor one_tensor(const std::vector<Tensor>& tensors, const char* op) const {
    GB_CHECK(tensors.size() == 1, "gb::distributed::", op, ": expected one tensor per call (one GPU per process), got ",
             tensors.size());
    check_tensor(tensors[0], op, "the tensor");
    return tensors[0];
  }
  void check_like(const Tensor& t, const Tensor& like, const char* op, const char* what) const {
    check_tensor(t, op, what);
    GB_CHECK(t.sizes() == like.sizes() && t.scalar_type() == like.scalar_type(), "gb::distributed::", op, ": ", what,
             " has sizes ", t.sizes(), " and dtype ", to_string(t.scalar_type()), ", expected sizes ", like.sizes(),
             " and dtype ", to_string(like.scalar_type()));
  }

  // Launches one collective on the group's stream (see the file's comment); `call` enqueues NCCL's part and may
  // add scratch tensors to keep alive until it ran.
  std::shared_ptr<Work> launch(const char* op, const std::string& description, const Tensor& traced,
                               std::optional<ReduceOp> reduce, std::vector<Tensor> used, bool host_wait,
                               const std::function<void(cudaStream_t, std::vector<Tensor>&)>& call) {
    std::lock_guard<std::mutex> lock(mu_);
    GB_CHECK(!stop_, "gb::distributed::", op, ": the process group is being destroyed");
    if (!broken_.empty())
      throw Error(gb::detail::str_cat("gb::distributed::", op, ": this NCCL group can no longer run collectives: ",
                                      broken_, " Destroy it and start a new job."));
    cuda_kernels::DeviceGuard guard(device_.index());
    NoGradGuard no_grad;
    const bool timing = trace::enabled();
    auto work = std::make_shared<WorkNCCL>(op, device_, host_wait, timing);
    work->what = gb::detail::str_cat(op, " (", description, description.empty() ? "" : ", ", "rank ", rank_, " of ",
                                     size_, ", nccl on ", device_.str(), ")");
    work->set_default_timeout(timeout_);
    work->set_description(work->what);
    work->trace = describe_collective(op, traced, reduce, next_seq_, size_);
    work->step = std::int32_t(trace::current_step());
    work->anchor = anchor_;
    // the collective reads what the caller's stream wrote before it
    {
      gb::cuda::CUDAEvent ready;
      ready.record(gb::cuda::getCurrentCUDAStream(device_.index()));
      ready.block(stream_);
    }
    try {
      gb::cuda::CUDAStreamGuard on_group_stream(stream_);  // scratch and copies in `call` go on the group's stream
      if (timing) work->start.record(stream_);
      call(stream_.stream(), used);
      work->end.record(stream_);
    } catch (const std::exception& e) {  // the ranks' collective numbers no longer match: the group cannot go on
      broken_ = gb::detail::str_cat(work->what, " could not be launched: ", e.what());
      throw;
    }
    ++next_seq_;
    for (const Tensor& t : used) t.record_stream(stream_);
    work->tensors = std::move(used);
    work->deadline = Clock::now() + timeout_;
    pending_.push_back(work);
    cv_.notify_one();
    return work;
  }

  std::shared_ptr<Anchor> make_anchor() {
    auto a = std::make_shared<Anchor>();
    const std::int64_t before = trace::ticks();
    a->event.record(stream_);
    a->event.synchronize();
    a->ticks = before + (trace::ticks() - before) / 2;
    a->made = Clock::now();
    return a;
  }

  // The watchdog (see the file's comment).
  void run() {
    name_communication_thread();
    (void)cuda_kernels::cuda_ok_or_clear(cudaSetDevice(device_.index()));  // a failure shows in the first poll
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (pending_.empty()) {
        if (stop_) return;
        if (trace::enabled() && Clock::now() - anchor_->made > std::chrono::seconds(1)) {
          try {  // the stream is idle (nothing pending) and nothing launches while mu_ is held
            anchor_ = make_anchor();
          } catch (const std::exception&) {  // a device in error: the next collective reports it
          }
        }
        cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_ || !pending_.empty(); });
        continue;
      }
      std::shared_ptr<WorkNCCL> w = pending_.front();
      lock.unlock();
      bool done = false;
      std::string error;
      try {
        done = w->end.query();
      } catch (const std::exception& e) {
        error = gb::detail::str_cat(w->what, " failed on the GPU: ", e.what());
      }
      if (!done && error.empty()) {
        ncclResult_t async = ncclSuccess;
        if (ncclCommGetAsyncError(comm_, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress)
          error = gb::detail::str_cat(w->what, " failed: NCCL reported ", ncclGetErrorString(async), "; ",
                                      nccl_hint(async), ".");
        else if (Clock::now() > w->deadline)
          error = gb::detail::str_cat(
              w->what, " did not finish within ", timeout_.count(),
              " ms: another rank may have failed, exited, or not reached the same collective (every rank must call "
              "the same collectives in the same order, with the same shapes). Read the other ranks' output; a slow "
              "job can raise the limit with init_process_group(backend, timeout). The communicator was aborted.");
      }
      if (done) {
        record(*w);
        w->finish();
        lock.lock();
        pending_.pop_front();
        continue;
      }
      if (!error.empty()) {
        fail_all(error);
        lock.lock();
        continue;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      lock.lock();
    }
  }

  // A finished collective's span at its GPU times, and its collectives row (while a trace records).
  void record(const WorkNCCL& w) {
    if (!w.timing || !trace::enabled()) return;
    try {
      const double ms0 = w.anchor->event.elapsed_time(w.start), ms1 = w.anchor->event.elapsed_time(w.end);
      const double ticks_per_ms = 1e6 / clock_.ns_per_tick();
      const std::int64_t t0 = w.anchor->ticks + std::llround(ms0 * ticks_per_ms);
      const std::int64_t t1 = w.anchor->ticks + std::llround(ms1 * ticks_per_ms);
      emit_collective_row(w.trace, trace::record_past_span(trace::location(w.trace.name, trace::SpanKind::collective),
                                                           t0, t1, w.trace.seq, w.step));
    } catch (const std::exception& e) {  // the trace misses this one collective; training goes on
      std::fprintf(stderr, "glassbox: rank %d: %s could not be traced: %s\n", rank_, w.what.c_str(), e.what());
    }
  }

  void fail_all(const std::string& why) {
    std::deque<std::shared_ptr<WorkNCCL> > failed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      broken_ = why;
      failed.swap(pending_);
    }
    std::fprintf(stderr, "glassbox: rank %d: %s\n", rank_, why.c_str());
    (void)ncclCommAbort(comm_);  // kernels waiting for a dead peer end; the device stays usable
    aborted_ = true;
    const std::exception_ptr error = std::make_exception_ptr(Error(why));
    for (auto& w : failed) w->finish(error);
  }

  ncclComm_t comm_;
  Device device_;
  gb::cuda::CUDAStream stream_;
  std::chrono::milliseconds timeout_;
  trace::TickClock clock_;  // the tick rate event times are converted with (measured once, ~5 ms)
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<WorkNCCL> > pending_;  // launched, in launch order (= the stream's order)
  std::shared_ptr<Anchor> anchor_;
  std::string broken_;  // why the group cannot run collectives any more (empty: it can)
  std::atomic<bool> aborted_{false};
  bool stop_ = false;
  int64_t next_seq_ = 0;  // the group's collective number (spans.seq in the trace)
  std::thread thread_;    // last: started once the members above exist
};

}  // namespace

std::shared_ptr<ProcessGroup> make_nccl_group(std::chrono::milliseconds timeout) {
  GB_CHECK(gb::cuda::is_available(),
           "gb::distributed::init_process_group(\"nccl\"): no usable CUDA device: ", gb::cuda::unavailable_reason(),
           ". NCCL runs collectives on GPUs: run on a machine with an NVIDIA GPU (`glassbox env` says what is "
           "missing), or train on CPU tensors with backend \"mpi\".");
  const LaunchEnv env = read_launch_env([](const char* name) { return std::getenv(name); }, "nccl");
  const int device = gb::cuda::current_device();
  ncclUniqueId id{};
  if (env.rank == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId", "init_process_group");
  if (env.world_size > 1) {
    std::vector<unsigned char> bytes(sizeof id);
    if (env.rank == 0) std::memcpy(bytes.data(), &id, sizeof id);
    if (!env.master_addr.empty() || env.master_port) {
      GB_CHECK(!env.master_addr.empty() && env.master_port,
               "gb::distributed::init_process_group(\"nccl\"): MASTER_ADDR and MASTER_PORT go together: set both in "
               "every rank (rank 0's host, and a free port there)");
      if (env.rank == 0) {
        RendezvousServer server(env.master_port);
        server.serve(env.world_size, bytes, timeout);
      } else {
        bytes = fetch_from_rank0(env.master_addr, env.master_port, env.rank, env.world_size, timeout);
        GB_CHECK(bytes.size() == sizeof id, "gb::distributed::init_process_group(\"nccl\"): rank 0 at ",
                 env.master_addr, ":", env.master_port, " sent ", bytes.size(), " bytes, not an NCCL id (", sizeof id,
                 "): is it another program, or a glassbox of another version?");
      }
    } else {
      GB_CHECK(env.source != "RANK/WORLD_SIZE",
               "gb::distributed::init_process_group(\"nccl\"): RANK and WORLD_SIZE are set but MASTER_ADDR and "
               "MASTER_PORT are not: set both in every rank (rank 0's host, and a free port there), or start the "
               "job with mpirun");
      mpi_broadcast_bytes(bytes, 0);
    }
    std::memcpy(&id, bytes.data(), sizeof id);
  }
  ncclComm_t comm = nullptr;
  {
    cuda_kernels::DeviceGuard guard(device);
    nccl_check(
        ncclCommInitRank(&comm, env.world_size, id, env.rank), "ncclCommInitRank",
        gb::detail::str_cat("init_process_group (rank ", env.rank, " of ", env.world_size, " on cuda:", device, ")"));
  }
  return std::make_shared<ProcessGroupNCCL>(comm, env.rank, env.world_size, Device(DeviceType::CUDA, device), timeout);
}

Device group_device(const ProcessGroup& group) {
  if (const auto* nccl = dynamic_cast<const ProcessGroupNCCL*>(&group)) return nccl->device();
  return Device(DeviceType::CPU);
}

#endif

}  // namespace gb::distributed::detail
