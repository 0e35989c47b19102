// engine/nn/parallel/distributed.cpp — DDP's Reducer: buckets in reverse registration order, a hook per parameter
// marking it ready, buckets launched in order as they fill, the averaged gradients written back at the end.
#include "glassbox/nn/parallel/distributed.h"

#include <algorithm>
#include <unordered_set>

#include "distributed/backends.h"
#include "distributed/collective_trace.h"
#include "glassbox/autograd/node.h"
#include "glassbox/core/error.h"
#include "glassbox/distributed/distributed.h"
#include "glassbox/ops/factory.h"
#include "monitor/monitor.h"
#include "monitor/scan.h"

namespace gb::nn::parallel {

namespace {
// PyTorch's first bucket is small (1 MB), so that the first all-reduce starts early in backward.
constexpr int64_t kFirstBucketBytes = int64_t(1) << 20;

// slice = g * scale in one pass over contiguous CPU floats (the bucket's copy-in and the average's division at
// once, as PyTorch's Reducer does with mul_out); otherwise a copy and a multiply.
void copy_scaled(const Tensor& slice, const Tensor& g, double scale) {
  if (g.is_cpu() && g.is_contiguous() && g.scalar_type() == slice.scalar_type()) {
    const int64_t n = g.numel();
    if (g.scalar_type() == kFloat) {
      float* d = slice.data_ptr<float>();
      const float* x = g.data_ptr<float>();
      const float f = float(scale);
      for (int64_t i = 0; i < n; ++i) d[i] = x[i] * f;
      return;
    }
    if (g.scalar_type() == kDouble) {
      double* d = slice.data_ptr<double>();
      const double* x = g.data_ptr<double>();
      for (int64_t i = 0; i < n; ++i) d[i] = x[i] * scale;
      return;
    }
  }
  slice.copy_(g.reshape({-1}));
  slice.mul_(scale);
}
}  // namespace

Reducer::Reducer(std::vector<Tensor> params, std::shared_ptr<distributed::ProcessGroup> group, int64_t bucket_cap_bytes,
                 bool find_unused_parameters, bool gradient_as_bucket_view)
    : group_(std::move(group)), find_unused_(find_unused_parameters), as_view_(gradient_as_bucket_view) {
  GB_CHECK(group_, "DistributedDataParallel: no process group; call gb::distributed::init_process_group first");
  GB_CHECK(bucket_cap_bytes > 0, "DistributedDataParallel: bucket_cap_mb must be positive");
  const Device device = distributed::detail::group_device(*group_);
  for (Tensor& p : params)
    if (p.requires_grad()) {
      GB_CHECK(p.device() == device, "DistributedDataParallel: a parameter of sizes ", p.sizes(), " is on ",
               p.device().str(), "; the ", group_->getBackendName(), " backend reduces gradients on ", device.str(),
               ": move the module with .to(\"", device.str(), "\") before wrapping it");
      params_.push_back(p);
    }
  GB_CHECK(!params_.empty(), "DistributedDataParallel: the module has no parameter that requires grad");
  // buckets: reverse registration order, one dtype per bucket. As PyTorch's compute_bucket_assignment_by_size, a
  // bucket closes once it holds the cap or more (the parameter that crosses the cap goes in): the first at 1 MB, so
  // its all-reduce starts early in backward (an MLP's last hidden layer goes into it and overlaps the first's
  // backward), the others at bucket_cap.
  bucket_of_.assign(params_.size(), 0);
  int64_t bytes = 0;
  bool open = false;
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k];
    if (open && params_[bucket_params_.back().front()].scalar_type() != p.scalar_type()) open = false;
    if (!open) {
      bucket_params_.emplace_back();
      bytes = 0;
      open = true;
    }
    bucket_params_.back().push_back(k);
    bucket_of_[k] = bucket_params_.size() - 1;
    bytes += p.nbytes();
    const int64_t cap = bucket_params_.size() == 1 ? std::min(kFirstBucketBytes, bucket_cap_bytes) : bucket_cap_bytes;
    if (bytes >= cap) open = false;
  }
  pending_.assign(bucket_params_.size(), 0);
  flat_.assign(bucket_params_.size(), Tensor());
  local_finite_.assign(bucket_params_.size(), 0);
  works_.assign(bucket_params_.size(), nullptr);
  ready_.assign(params_.size(), false);
  locally_used_.assign(params_.size(), false);
  for (size_t k = 0; k < params_.size(); ++k)
    hooks_.push_back(params_[k].register_post_accumulate_grad_hook([this, k](Tensor&) { mark_ready(k, true); }));
}

Reducer::~Reducer() {
  for (size_t k = 0; k < params_.size(); ++k) params_[k].remove_hook(hooks_[k]);
  for (auto& w : works_)  // a reduction left half-way: let its collectives finish before the tensors go
    if (w) {
      try {
        w->wait();
      } catch (...) {
      }
    }
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool started = std::find(locally_used_.begin(), locally_used_.end(), true) != locally_used_.end();
  if (expect_backward_ && started) {
    std::string missing;
    size_t shown = 0;
    for (size_t k = 0; k < params_.size(); ++k)
      if (!ready_[k] && shown++ < 8)
        missing += gb::detail::str_cat(missing.empty() ? "" : ", ", "#", k, " ", params_[k].sizes());
    throw Error(gb::detail::str_cat(
        "DistributedDataParallel: expected the previous iteration's gradient reduction to finish before a new "
        "forward, but parameters got no gradient in its backward (index in parameters() and sizes: ",
        missing,
        "). Their module was not used to compute the loss. Construct DDP with "
        "DistributedDataParallelOptions().find_unused_parameters(true), or make every parameter take part in the "
        "loss."));
  }
  expect_backward_ = true;
  next_bucket_ = 0;
  std::fill(ready_.begin(), ready_.end(), false);
  std::fill(locally_used_.begin(), locally_used_.end(), false);
  for (size_t b = 0; b < bucket_params_.size(); ++b) {
    pending_[b] = bucket_params_[b].size();
    works_[b] = nullptr;
  }
  ready_order_.clear();
  launch_order_.clear();
  if (!find_unused_) return;
  // the AccumulateGrad nodes the outputs' graph reaches: the other parameters are unused in this iteration
  std::unordered_set<const TensorImpl*> reached;
  std::vector<autograd::Node*> stack;
  std::unordered_set<autograd::Node*> seen;
  for (const Tensor& o : outputs)
    if (o.defined() && o.grad_fn()) stack.push_back(o.grad_fn().get());
  while (!stack.empty()) {
    autograd::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->is_accumulate_grad()) reached.insert(static_cast<autograd::AccumulateGrad*>(n)->variable.unsafe_impl());
    for (const autograd::Edge& e : n->next_edges())
      if (e.function) stack.push_back(e.function.get());
  }
  for (size_t k = 0; k < params_.size(); ++k)
    if (!reached.count(params_[k].unsafe_impl())) {
      ready_[k] = true;
      --pending_[bucket_of_[k]];
    }
  launch_ready_buckets();
}

void Reducer::mark_ready(size_t k, bool from_hook) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!expect_backward_ || !require_sync_) return;  // a backward DDP's forward did not prepare, or under no_sync
  if (from_hook) locally_used_[k] = true;
  if (ready_[k]) return;
  ready_[k] = true;
  ready_order_.push_back(k);
  --pending_[bucket_of_[k]];
  launch_ready_buckets();
}

// Buckets go out in bucket order on every rank (collectives must match), each as soon as it and those before it
// are full. Called with mu_ held.
void Reducer::launch_ready_buckets() {
  NoGradGuard no_grad;
  while (next_bucket_ < bucket_params_.size() && pending_[next_bucket_] == 0) {
    const size_t b = next_bucket_++;
    const std::vector<size_t>& members = bucket_params_[b];
    int64_t numel = 0;
    for (size_t k : members) numel += params_[k].numel();
    const Tensor& first = params_[members.front()];
    // with gradient_as_bucket_view the bucket of the last reduction, whose views the .grads may still be
    Tensor flat = as_view_ && flat_[b].defined()
                      ? flat_[b]
                      : empty({numel}, TensorOptions().dtype(first.scalar_type()).device(first.device()));
    // The average: on the CPU each gradient is divided by the world size on its way into the bucket (or in it)
    // and the bucket all-reduced with SUM, PyTorch's way, saving a pass over the bucket after the all-reduce; other
    // backends (NCCL) average in the collective's own kernel.
    const bool pre_divide = flat.is_cpu();
    const double inv = 1.0 / double(group_->getSize());
    int64_t off = 0;
    for (size_t k : members) {
      Tensor& p = params_[k];
      Tensor slice = flat.narrow(0, off, p.numel());
      const Tensor& g = p.grad();
      const bool in_bucket = as_view_ && g.defined() && g.data_ptr() == slice.data_ptr();
      if (in_bucket && !locally_used_[k])  // a gradient unused on every rank keeps its value: not the bucket's
        p.mutable_grad() = g.clone();
      if (in_bucket) {  // accumulated there already
        if (pre_divide) slice.mul_(inv);
      } else if (!g.defined()) {
        slice.zero_();
      } else if (pre_divide) {
        copy_scaled(slice, g, inv);
      } else {
        slice.copy_(g.reshape({-1}));
      }
      off += p.numel();
    }
    flat_[b] = flat;
    if (monitor::detail::active() && flat.is_cpu()) {  // compared in finalize() with what the all-reduce brings
      monitor::detail::Busy busy;
      local_finite_[b] = monitor::detail::all_finite(flat);
    } else {
      local_finite_[b] = 0;
    }
    std::vector<Tensor> ts{flat};
    const distributed::detail::CollectiveTag tag{static_cast<int64_t>(b)};  // the trace's collectives.bucket
    works_[b] = group_->allreduce(
        ts, distributed::AllreduceOptions{pre_divide ? distributed::ReduceOp::SUM : distributed::ReduceOp::AVG});
    launch_order_.push_back(b);
  }
  if (next_bucket_ == bucket_params_.size() && expect_backward_) finalize();
}

// Every bucket launched: wait for them and write the averaged gradients back. Called with mu_ held.
void Reducer::finalize() {
  NoGradGuard no_grad;
  std::vector<bool> used(params_.size(), true);
  if (find_unused_) {  // a parameter unused on every rank keeps its .grad as it was
    Tensor flags = empty({int64_t(params_.size())}, TensorOptions().dtype(kInt32));
    int32_t* f = flags.data_ptr<int32_t>();
    for (size_t k = 0; k < params_.size(); ++k) f[k] = locally_used_[k] ? 1 : 0;
    const Device device = params_.front().device();  // the backend's device (checked at construction)
    std::vector<Tensor> ts{device.is_cpu() ? flags : flags.to(device)};
    group_->allreduce(ts, distributed::AllreduceOptions{distributed::ReduceOp::MAX})->wait();
    if (!device.is_cpu()) f = (flags = ts[0].cpu()).data_ptr<int32_t>();
    for (size_t k = 0; k < params_.size(); ++k) used[k] = f[k] != 0;
  }
  for (size_t b = 0; b < bucket_params_.size(); ++b) {
    works_[b]->wait();
    if (local_finite_[b] && monitor::detail::active()) {  // NaN/Inf another rank sent: said, not blamed on us
      std::vector<size_t> arrived;
      {
        monitor::detail::Busy busy;  // the monitor's own reads (the hook below checks active(): outside)
        if (!monitor::detail::all_finite(flat_[b])) {
          int64_t at = 0;
          for (size_t k : bucket_params_[b]) {
            if (!monitor::detail::all_finite(flat_[b].narrow(0, at, params_[k].numel()))) arrived.push_back(k);
            at += params_[k].numel();
          }
        }
      }
      for (size_t k : arrived) monitor::detail::on_reduced_nonfinite(params_[k], int64_t(b));
    }
    int64_t off = 0;
    for (size_t k : bucket_params_[b]) {
      Tensor& p = params_[k];
      Tensor avg = flat_[b].narrow(0, off, p.numel()).view(p.sizes());
      off += p.numel();
      if (!used[k]) continue;
      if (as_view_) {
        if (!p.grad().defined() || p.grad().data_ptr() != avg.data_ptr()) p.mutable_grad() = avg;
      } else if (p.grad().defined()) {
        p.mutable_grad().copy_(avg);
      } else {
        p.mutable_grad() = avg.clone();
      }
    }
    works_[b] = nullptr;
    if (!as_view_) flat_[b] = Tensor();
  }
  expect_backward_ = false;
  ++reductions_;
}

std::vector<size_t> Reducer::ready_order() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_order_;
}
std::vector<size_t> Reducer::launch_order() const {
  std::lock_guard<std::mutex> lock(mu_);
  return launch_order_;
}
int64_t Reducer::reductions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reductions_;
}

namespace detail {

void broadcast_from_rank0(const std::vector<Tensor>& tensors, distributed::ProcessGroup& group) {
  if (group.getSize() == 1) return;
  NoGradGuard no_grad;
  for (const Tensor& t : tensors) {
    if (!t.defined() || t.numel() == 0) continue;
    Tensor c = t.is_contiguous() ? t : t.contiguous();
    std::vector<Tensor> ts{c};
    group.broadcast(ts, distributed::BroadcastOptions{0})->wait();
    if (!c.is_same(t)) t.copy_(c);
  }
}

std::shared_ptr<distributed::ProcessGroup> group_or_default(std::shared_ptr<distributed::ProcessGroup> group) {
  return group ? group : distributed::default_group();
}

}  // namespace detail
}  // namespace gb::nn::parallel
