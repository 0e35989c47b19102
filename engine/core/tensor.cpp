// engine/core/tensor.cpp — Tensor's own state: sizes, items, and the autograd accessors (requires_grad, grad,
// grad_fn, hooks, detach). Methods that are ops forward to the free functions (tensor_methods.cpp).
#include "glassbox/core/tensor.h"

#include <atomic>

#include "autograd/memory_roles.h"
#include "autograd/record.h"
#include "autograd/views.h"
#include "core/dispatch.h"
#include "core/make.h"
#include "glassbox/autograd/autograd.h"
#include "glassbox/autograd/node.h"
#include "glassbox/core/cuda_stream.h"
#include "glassbox/memory/memory.h"
#include "glassbox/ops/factory.h"

namespace gb {

int64_t Tensor::size(int64_t d) const { return impl_->sizes[detail::wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return impl_->strides[detail::wrap_dim(d, dim(), "stride")]; }

TensorOptions Tensor::options() const { return TensorOptions().dtype(scalar_type()).device(device()); }

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedType";
  std::string dev = device().is_cpu() ? "CPU" : device().is_cuda() ? "CUDA" : "Meta";
  return dev + to_string(scalar_type()) + "Type";
}

void Tensor::record_stream(const cuda::CUDAStream& stream) const {
  detail::check_defined(*this, "record_stream");
  GB_CHECK(is_cuda(), "record_stream: expects a tensor on cuda, got one on ", device().str(),
           " (only cuda memory is used by streams)");
  GB_CHECK(stream.device() == device(), "record_stream: the stream is on ", stream.device().str(),
           " but the tensor on ", device().str(), "; record a stream of the tensor's own device");
  memory::caching_allocator(device()).record_stream(storage()->data(), stream.id());
}

Scalar Tensor::item() const {
  detail::check_defined(*this, "item");
  GB_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar; item() needs exactly one ",
           "element (shape ", sizes(), "). Reduce first (e.g. .sum()) or index one element.");
  GB_CHECK(!is_meta(), "Tensor.item() cannot be called on meta tensors: a meta tensor has a shape and an allocation ",
           "but no values (make it on the cpu to read it)");
  if (is_cuda()) return detach().to(kCPU).item();  // waits for the value, as PyTorch's item() does
  detail::check_cpu_meta_device(*this, "item");
  return detail::dispatch_all(scalar_type(), "item", [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    return Scalar(*reinterpret_cast<const T*>(impl_->data()));
  });
}

// ---- autograd accessors ----

bool Tensor::requires_grad() const {
  autograd::refresh_view(*this);
  const auto& m = impl_->autograd;
  return m && (m->requires_grad || m->grad_fn);
}

const Tensor& Tensor::requires_grad_(bool r) const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  detail::check_defined(self, "requires_grad_");
  if (!is_leaf()) {
    GB_CHECK(r, "you can only change requires_grad flags of leaf variables. If you want to use a computed variable ",
             "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return self;
  }
  GB_CHECK(!r || is_floating_point(), "only Tensors of floating point dtype can require gradients (got ",
           python_name(scalar_type()), "); convert with .to(gb::kFloat) first");
  impl_->meta().requires_grad = r;
  if (r) detail::tag_storage(self, memory::Category::parameter);  // a leaf that learns: a parameter
  return self;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const auto& m = impl_->autograd;
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() { return impl_->meta().grad; }

void Tensor::set_grad(const Tensor& g) {
  if (g.defined()) {
    GB_CHECK(g.sizes() == sizes(), "assigned grad has data of a different size: grad is ", g.sizes(), ", tensor is ",
             sizes());
    GB_CHECK(g.scalar_type() == scalar_type(), "assigned grad has data of a different type: grad is ",
             python_name(g.scalar_type()), ", tensor is ", python_name(scalar_type()));
  }
  impl_->meta().grad = g;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  autograd::refresh_view(*this);
  const auto& m = impl_->autograd;
  return m ? m->grad_fn : none;
}

bool Tensor::is_leaf() const { return !grad_fn(); }
uint32_t Tensor::output_nr() const {
  autograd::refresh_view(*this);
  return impl_->autograd ? impl_->autograd->output_nr : 0;
}
Tensor Tensor::_base() const { return impl_->view_base ? Tensor(impl_->view_base) : Tensor(); }
uint32_t Tensor::_version() const { return impl_->storage ? impl_->storage->version : 0; }

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      const variable_list& inputs) const {
  autograd::backward({*this}, gradient.defined() ? variable_list{gradient} : variable_list{}, retain_graph,
                     create_graph, inputs);
}

Tensor Tensor::detach() const {
  detail::check_defined(*this, "detach");
  Tensor out = detail::shallow_alias(*this);
  if (impl_->autograd && !impl_->autograd->name.empty()) out.unsafe_impl()->meta().name = impl_->autograd->name;
  return out;
}

Tensor Tensor::data() const { return detach(); }

namespace {
TensorOptions like(const Tensor& t, const TensorOptions& o) {
  TensorOptions r = o.has_dtype() ? o : o.dtype(t.scalar_type());
  return o.device() == Device() && !t.device().is_cpu() ? r.device(t.device()) : r;
}
}  // namespace

Tensor Tensor::new_empty(IntArrayRef size, const TensorOptions& options) const {
  return gb::empty(size, like(*this, options));
}
Tensor Tensor::new_zeros(IntArrayRef size, const TensorOptions& options) const {
  return gb::zeros(size, like(*this, options));
}
Tensor Tensor::new_ones(IntArrayRef size, const TensorOptions& options) const {
  return gb::ones(size, like(*this, options));
}
Tensor Tensor::new_full(IntArrayRef size, const Scalar& fill_value, const TensorOptions& options) const {
  return gb::full(size, fill_value, like(*this, options));
}

Tensor& Tensor::detach_() const {
  Tensor& self = const_cast<Tensor&>(*this);  // const as libtorch's: the handle is const, not the tensor
  impl_->view_base.reset();  // no longer an autograd view of anything
  if (impl_->autograd) {
    impl_->autograd->grad_fn.reset();
    impl_->autograd->requires_grad = false;
    impl_->autograd->output_nr = 0;
  }
  return self;
}

namespace {
unsigned next_hook_id() {
  static std::atomic<unsigned> id{1};
  return id++;
}
}  // namespace

void Tensor::retain_grad() const {
  GB_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf()) return;  // leaves keep .grad anyway
  auto& m = impl_->meta();
  if (m.retains_grad) return;
  m.retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_;
  grad_fn()->add_tensor_pre_hook(0, m.output_nr, [weak](const Tensor& g) -> Tensor {
    if (auto impl = weak.lock()) {
      auto& meta = impl->meta();
      if (!meta.grad.defined()) meta.grad = g.detach().clone();
      else {
        NoGradGuard ng;
        meta.grad = meta.grad + g;
      }
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const { return impl_->autograd && impl_->autograd->retains_grad; }

unsigned Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  GB_CHECK(requires_grad(), "cannot register a hook on a tensor that doesn't require gradient; call ",
           "requires_grad_() on the leaf first");
  unsigned id = next_hook_id();
  if (is_leaf()) impl_->meta().leaf_hooks.emplace_back(id, std::move(hook));
  else grad_fn()->add_tensor_pre_hook(id, output_nr(), std::move(hook));
  return id;
}

void Tensor::remove_hook(unsigned handle) const {
  if (!impl_->autograd) return;
  auto& hooks = impl_->autograd->leaf_hooks;
  for (auto it = hooks.begin(); it != hooks.end(); ++it)
    if (it->first == handle) {
      hooks.erase(it);
      return;
    }
  auto& post = impl_->autograd->post_accumulate_hooks;  // handles are unique across both kinds
  for (auto it = post.begin(); it != post.end(); ++it)
    if (it->first == handle) {
      post.erase(it);
      return;
    }
  if (grad_fn()) grad_fn()->remove_tensor_pre_hook(handle);
}

unsigned Tensor::register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) const {
  GB_CHECK(is_leaf() && requires_grad(),
           "post accumulate grad hooks cannot be registered on non-leaf tensors (or tensors that do not require grad)");
  unsigned id = next_hook_id();
  impl_->meta().post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

const std::string& Tensor::name() const {
  static const std::string empty;
  return impl_->autograd ? impl_->autograd->name : empty;
}

Tensor& Tensor::set_name(const std::string& n) {
  impl_->meta().name = n;
  return *this;
}

}  // namespace gb
