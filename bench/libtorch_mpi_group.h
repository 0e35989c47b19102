// bench/libtorch_mpi_group.h — the peer's transport for bench_distributed: a c10d::ProcessGroup over MPI, so
// libtorch's own DDP (c10d::Reducer) runs over the same MPI as glassbox's in the same run.
//
// Debian's libtorch is built without ProcessGroupMPI (torch.distributed.is_mpi_available() is false) and ships no
// gloo headers, so this is PyTorch's ProcessGroupMPI design reduced to what the Reducer calls: every collective is
// queued and run in order by one worker thread on a communicator of its own (a duplicate of MPI_COMM_WORLD), and
// its Work completes a c10::ivalue::Future with the tensors, which the Reducer waits on. float32 SUM all-reduce,
// broadcast and barrier only; anything else is refused by c10d's defaults. Include after <torch/torch.h>.
#pragma once

#include <mpi.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace bench {

class MpiPeerGroup final : public c10d::ProcessGroup {
 public:
  static c10::intrusive_ptr<MpiPeerGroup> create() {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    return c10::make_intrusive<MpiPeerGroup>(comm, rank, size);
  }

  MpiPeerGroup(MPI_Comm comm, int rank, int size) : ProcessGroup(rank, size), comm_(comm), thread_([this] { run(); }) {}

  ~MpiPeerGroup() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    MPI_Comm_free(&comm_);
  }

  const std::string getBackendName() const override { return "mpi (bench peer)"; }

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override {
    TORCH_CHECK(tensors.size() == 1 && tensors[0].scalar_type() == at::kFloat && tensors[0].is_contiguous() &&
                    opts.reduceOp == c10d::ReduceOp::SUM,
                "bench::MpiPeerGroup: one contiguous float32 tensor, SUM only");
    at::Tensor t = tensors[0];
    return enqueue(tensors,
                   [this, t] { MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), int(t.numel()), MPI_FLOAT, MPI_SUM, comm_); });
  }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override {
    TORCH_CHECK(tensors.size() == 1 && tensors[0].is_contiguous(), "bench::MpiPeerGroup: one contiguous tensor");
    at::Tensor t = tensors[0];
    const int root = int(opts.rootRank);
    return enqueue(tensors, [this, t, root] { MPI_Bcast(t.data_ptr(), int(t.nbytes()), MPI_BYTE, root, comm_); });
  }

  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& = c10d::BarrierOptions()) override {
    std::vector<at::Tensor> none;
    return enqueue(none, [this] { MPI_Barrier(comm_); });
  }

 private:
  // Done when the worker has run its collective; the future carries the tensors, as ProcessGroupMPI's does.
  class FutureWork final : public c10d::Work {
   public:
    explicit FutureWork(std::vector<at::Tensor> tensors)
        : tensors_(std::move(tensors)),
          future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}
    void complete() { future_->markCompleted(c10::IValue(tensors_)); }
    bool isCompleted() override { return future_->completed(); }
    bool isSuccess() const override { return true; }
    bool wait(std::chrono::milliseconds) override {
      future_->wait();
      return true;
    }
    std::vector<at::Tensor> result() override { return tensors_; }
    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

   private:
    std::vector<at::Tensor> tensors_;
    c10::intrusive_ptr<c10::ivalue::Future> future_;
  };

  c10::intrusive_ptr<c10d::Work> enqueue(const std::vector<at::Tensor>& tensors, std::function<void()> fn) {
    auto work = c10::make_intrusive<FutureWork>(tensors);
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.emplace_back(std::move(fn), work);
    }
    cv_.notify_one();
    return work;
  }

  void run() {
    for (;;) {
      std::pair<std::function<void()>, c10::intrusive_ptr<FutureWork>> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job.first();
      job.second->complete();
    }
  }

  MPI_Comm comm_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::function<void()>, c10::intrusive_ptr<FutureWork>>> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace bench
