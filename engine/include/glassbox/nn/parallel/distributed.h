// glassbox/nn/parallel/distributed.h — DistributedDataParallel (PyTorch's DDP) over a gb::distributed group.
//
//   gb::distributed::init_process_group("mpi");
//   auto net = Net();                                     // any module holder
//   gb::nn::parallel::DistributedDataParallel ddp(net);   // rank 0's parameters and buffers broadcast to all
//   gb::optim::SGD opt(ddp.parameters(), 0.1);
//   auto loss = F::cross_entropy(ddp(x_local), y_local);  // each rank its share of the batch
//   loss.backward();                                      // gradients averaged over the ranks during backward
//   opt.step();                                           // every rank takes the same step
//
// PyTorch's design: the parameters are grouped into buckets in reverse order of registration (about the order
// backward produces their gradients), each closed once it holds bucket_cap_mb (25 MB) or more, the first 1 MB. A hook on each parameter's gradient
// accumulation marks it ready; when every parameter of a bucket is ready, the bucket is flattened and all-reduced
// (average) asynchronously, so communication overlaps the rest of backward. Buckets are launched in bucket order on
// every rank (collectives must match). When the last bucket is launched, the Reducer waits for them and writes the
// averaged gradients back into .grad (or, with gradient_as_bucket_view, makes each .grad a view into its bucket).
//
// no_sync(): while the returned guard lives, backward accumulates gradients locally; the first backward after it
// all-reduces the accumulated sum (gradient accumulation over micro-batches).
// One reduction per forward, as in PyTorch: a backward that no DDP forward prepared (a second backward through a
// retained graph, or through the wrapped module called directly) accumulates locally and is not reduced.
// find_unused_parameters: each forward walks the output's graph and marks the parameters it cannot reach ready at
// once (their bucket gets zeros); a parameter unused on every rank keeps its .grad as it was. Without the option a
// parameter that gets no gradient leaves its bucket unlaunched, and the next forward throws, naming it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/tensor.h"
#include "glassbox/distributed/process_group.h"
#include "glassbox/nn/options.h"

namespace gb::nn::parallel {

struct DistributedDataParallelOptions {
  GB_ARG(double, bucket_cap_mb) = 25.0;
  GB_ARG(bool, find_unused_parameters) = false;
  // Rank 0's buffers (batch norm's running statistics) broadcast to every rank before each forward.
  GB_ARG(bool, broadcast_buffers) = true;
  // The group to reduce over; null: the default group (gb::distributed::init_process_group).
  GB_ARG(std::shared_ptr<distributed::ProcessGroup>, process_group) = nullptr;
  // PyTorch's gradient_as_bucket_view: after a reduction each .grad is a view into its bucket, so the averaged
  // gradients are not copied back, and while a .grad stays that view (zero_grad(false) zeroes it in place) its
  // gradient is accumulated right in the bucket and not copied in either. A .grad then shares storage with the
  // other gradients of its bucket; zero_grad() (set_to_none) lets the next backward make a new one, copied in once.
  GB_ARG(bool, gradient_as_bucket_view) = false;
};

// The gradient reduction of DDP: buckets, the accumulation hooks, and the write-back.
class Reducer {
 public:
  // params: the module's parameters in registration order; those that do not require grad are left out.
  Reducer(std::vector<Tensor> params, std::shared_ptr<distributed::ProcessGroup> group, int64_t bucket_cap_bytes,
          bool find_unused_parameters, bool gradient_as_bucket_view = false);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Before the backward of a forward that syncs: checks the previous reduction finished (else the error naming the
  // parameters that got no gradient), resets the buckets, and with find_unused_parameters marks the parameters the
  // outputs' graph cannot reach as ready.
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  void set_require_sync(bool sync) { require_sync_ = sync; }
  bool require_sync() const { return require_sync_; }

  // What happened, for tests and the curious: the buckets (indices into the parameter list given), the order the
  // parameters became ready and the buckets were launched in the last synced backward.
  const std::vector<std::vector<size_t>>& buckets() const { return bucket_params_; }
  std::vector<size_t> ready_order() const;
  std::vector<size_t> launch_order() const;
  int64_t reductions() const;  // synced backwards completed

 private:
  void mark_ready(size_t param, bool from_hook);
  void launch_ready_buckets();
  void finalize();

  std::vector<Tensor> params_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  bool find_unused_;
  bool as_view_;  // gradient_as_bucket_view: flat_ outlives a reduction and .grad is a view into it
  bool require_sync_ = true;
  std::vector<std::vector<size_t>> bucket_params_;
  std::vector<size_t> bucket_of_;  // param -> bucket
  std::vector<unsigned> hooks_;

  mutable std::mutex mu_;
  bool expect_backward_ = false;
  std::vector<bool> ready_, locally_used_;
  std::vector<size_t> pending_;  // per bucket: parameters not ready yet
  size_t next_bucket_ = 0;
  std::vector<Tensor> flat_;
  std::vector<char> local_finite_;  // per bucket, while a trace records: this rank's gradients were all finite
  std::vector<std::shared_ptr<distributed::Work>> works_;
  std::vector<size_t> ready_order_, launch_order_;
  int64_t reductions_ = 0;
};

namespace detail {
// Broadcasts rank 0's tensors into every rank's (no autograd record).
void broadcast_from_rank0(const std::vector<Tensor>& tensors, distributed::ProcessGroup& group);
std::shared_ptr<distributed::ProcessGroup> group_or_default(std::shared_ptr<distributed::ProcessGroup> group);

inline void collect_tensors(const Tensor& t, std::vector<Tensor>& out) { out.push_back(t); }
inline void collect_tensors(const std::vector<Tensor>& v, std::vector<Tensor>& out) {
  out.insert(out.end(), v.begin(), v.end());
}
template <typename... T>
void collect_tensors(const std::tuple<T...>& t, std::vector<Tensor>& out) {
  std::apply([&](const auto&... e) { (collect_tensors(e, out), ...); }, t);
}
template <typename A, typename B>
void collect_tensors(const std::pair<A, B>& p, std::vector<Tensor>& out) {
  collect_tensors(p.first, out);
  collect_tensors(p.second, out);
}
template <typename T>
void collect_tensors(const T&, std::vector<Tensor>&) {}  // outputs that hold no tensor
}  // namespace detail

// DDP over a module holder (gb::nn::Linear, a TORCH_MODULE of your own, ...): construct it on every rank after
// init_process_group, train through it.
template <typename ModuleHolder>
class DistributedDataParallel {
 public:
  explicit DistributedDataParallel(ModuleHolder module, DistributedDataParallelOptions options = {})
      : module_(std::move(module)), options_(std::move(options)) {
    group_ = detail::group_or_default(options_.process_group());
    detail::broadcast_from_rank0(module_->parameters(), *group_);
    detail::broadcast_from_rank0(module_->buffers(), *group_);
    reducer_ =
        std::make_unique<Reducer>(module_->parameters(), group_, int64_t(options_.bucket_cap_mb() * 1024.0 * 1024.0),
                                  options_.find_unused_parameters(), options_.gradient_as_bucket_view());
  }

  template <typename... Args>
  auto forward(Args&&... args) {
    if (options_.broadcast_buffers() && group_->getSize() > 1)
      detail::broadcast_from_rank0(module_->buffers(), *group_);
    auto out = module_(std::forward<Args>(args)...);
    if (GradMode::is_enabled() && reducer_->require_sync()) {
      std::vector<Tensor> outputs;
      detail::collect_tensors(out, outputs);
      reducer_->prepare_for_backward(outputs);
    }
    return out;
  }
  template <typename... Args>
  auto operator()(Args&&... args) {
    return forward(std::forward<Args>(args)...);
  }

  // While the guard lives, backward accumulates locally (no all-reduce).
  class NoSync {
   public:
    explicit NoSync(Reducer& r) : r_(&r), was_(r.require_sync()) { r.set_require_sync(false); }
    ~NoSync() {
      if (r_) r_->set_require_sync(was_);
    }
    NoSync(NoSync&& o) noexcept : r_(o.r_), was_(o.was_) { o.r_ = nullptr; }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;
    NoSync& operator=(NoSync&&) = delete;

   private:
    Reducer* r_;
    bool was_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*reducer_); }

  ModuleHolder& module() { return module_; }
  std::vector<Tensor> parameters() const { return module_->parameters(); }
  Reducer& reducer() { return *reducer_; }
  const DistributedDataParallelOptions& options() const { return options_; }
  void train(bool on = true) { module_->train(on); }
  void eval() { module_->eval(); }

 private:
  ModuleHolder module_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  std::unique_ptr<Reducer> reducer_;
};

}  // namespace gb::nn::parallel
