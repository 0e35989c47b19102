// engine/nn/module.cpp — gb::nn::Module: registration, the tree walks, modes, conversion, state dicts, printing.
// Hooks and the per-call scope live in module_call.cpp.
#include "glassbox/nn/module.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <ostream>
#include <sstream>

#include "autograd/clear_grad.h"
#include "autograd/memory_roles.h"
#include "glassbox/autograd/function.h"
#include "glassbox/autograd/grad_mode.h"
#include "glassbox/io/archive.h"

namespace gb::nn {
namespace {

std::atomic<uint32_t> g_next_module_id{1};

std::mutex& name_mutex() {
  static std::mutex m;
  return m;
}
std::mutex& path_mutex() {
  static std::mutex m;
  return m;
}

std::string type_name_of(const Module& m) {
  std::string n = autograd::detail::demangle(typeid(m).name());
  if (auto lt = n.find('<'); lt != std::string::npos) n = n.substr(0, lt);
  if (auto colon = n.rfind("::"); colon != std::string::npos) n = n.substr(colon + 2);
  if (n.size() > 4 && n.compare(n.size() - 4, 4, "Impl") == 0) n.resize(n.size() - 4);
  return n;
}

void check_name(const Module& m, const std::string& name, const char* what) {
  GB_CHECK(!name.empty(), m.name(), ": ", what, " name must not be empty");
  GB_CHECK(name.find('.') == std::string::npos, m.name(), ": ", what, " name must not contain \".\", got \"", name,
           "\" (register the submodule that owns it instead)");
}

std::string shape_text(IntArrayRef s) {
  std::ostringstream os;
  os << "torch.Size([";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "])";
  return os.str();
}

// Puts `fresh`'s data (storage, geometry, dtype, device) into `t`'s TensorImpl, so every holder of t sees it.
void swap_in(const Tensor& t, const Tensor& fresh) {
  TensorImpl* dst = t.unsafe_impl();
  TensorImpl* src = fresh.unsafe_impl();
  dst->storage = src->storage;
  dst->sizes = src->sizes;
  dst->strides = src->strides;
  dst->offset = src->offset;
  dst->dtype = src->dtype;
  dst->device = src->device;
  dst->refresh();
}

void convert(const Tensor& t, std::optional<Device> device, std::optional<ScalarType> dtype, bool non_blocking,
             memory::Category category) {
  if (!t.defined()) return;
  ScalarType want = dtype && is_floating_point(t.scalar_type()) ? *dtype : t.scalar_type();
  Device dev = device.value_or(t.device());
  if (want == t.scalar_type() && dev == t.device()) return;
  NoGradGuard no_grad;
  Tensor fresh;
  {
    memory::CategoryGuard cat(category);
    fresh = t.detach().to(dev, want, non_blocking, /*copy=*/true);
  }
  swap_in(t, fresh);
  gb::detail::tag_storage(t, category);
  if (t.grad().defined()) {
    Tensor g = t.grad();
    memory::CategoryGuard cat(memory::Category::gradient);
    t.unsafe_impl()->meta().grad = g.to(dev, want, non_blocking, /*copy=*/true);
  }
}

}  // namespace

Module::Module() : id_(g_next_module_id.fetch_add(1)) {}
Module::Module(std::string name) : name_(std::move(name)), id_(g_next_module_id.fetch_add(1)) {
  name_known_.store(!name_.empty());
}
Module::Module(const Module& other)
    : std::enable_shared_from_this<Module>(),
      name_(other.name()),
      is_training_(other.is_training_),
      id_(g_next_module_id.fetch_add(1)) {
  name_known_.store(true);
}

Module::~Module() {
  for (const auto& c : children_)
    if (c.value() && c.value()->parent_ == this) {
      c.value()->parent_ = nullptr;
      c.value()->forget_paths();
    }
}

const std::string& Module::name() const noexcept {
  if (!name_known_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(name_mutex());
    if (!name_known_.load(std::memory_order_relaxed)) {
      name_ = type_name_of(*this);
      name_known_.store(true, std::memory_order_release);
    }
  }
  return name_;
}

// --- the tree -----------------------------------------------------------------------------------------------

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> out("Parameter");
  std::vector<const TensorImpl*> seen;
  auto add = [&](const std::string& prefix, const Module& m) {
    for (const auto& p : m.parameters_) {
      if (!p.value().defined()) continue;
      if (std::find(seen.begin(), seen.end(), p.value().unsafe_impl()) != seen.end()) continue;  // shared weight
      seen.push_back(p.value().unsafe_impl());
      out.insert(prefix + p.key(), p.value());
    }
  };
  if (!recurse) {
    add("", *this);
    return out;
  }
  const_cast<Module*>(this)->walk("", [&](const std::string& path, Module& m) { add(path.empty() ? "" : path + ".", m); });
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out("Buffer");
  auto add = [&](const std::string& prefix, const Module& m) {
    for (const auto& b : m.buffers_)
      if (b.value().defined()) out.insert(prefix + b.key(), b.value());
  };
  if (!recurse) {
    add("", *this);
    return out;
  }
  const_cast<Module*>(this)->walk("", [&](const std::string& path, Module& m) { add(path.empty() ? "" : path + ".", m); });
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

void Module::walk(const std::string& prefix, const std::function<void(const std::string&, Module&)>& fn) {
  std::vector<const Module*> seen;
  walk_from(prefix, fn, seen);
}

void Module::walk_from(const std::string& prefix, const std::function<void(const std::string&, Module&)>& fn,
                       std::vector<const Module*>& seen) {
  if (std::find(seen.begin(), seen.end(), this) != seen.end()) return;
  seen.push_back(this);
  fn(prefix, *this);
  for (const auto& c : children_)
    if (c.value()) c.value()->walk_from(prefix.empty() ? c.key() : prefix + "." + c.key(), fn, seen);
}

void Module::collect_modules(const std::string& prefix, bool include_self,
                             OrderedDict<std::string, std::shared_ptr<Module>>& out,
                             std::vector<const Module*>& seen) {
  if (std::find(seen.begin(), seen.end(), this) != seen.end()) return;
  seen.push_back(this);
  if (include_self) out.insert(prefix, shared_from_this());
  for (const auto& c : children_) {
    if (!c.value()) continue;
    c.value()->collect_modules(prefix.empty() ? c.key() : prefix + "." + c.key(), true, out, seen);
  }
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& name_prefix,
                                                                        bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Module");
  std::vector<const Module*> seen;
  if (include_self) {
    GB_CHECK(weak_from_this().lock() != nullptr, name(),
             ": named_modules()/modules() with include_self need the module held by a std::shared_ptr "
             "(make it with std::make_shared or a module holder)");
    collect_modules(name_prefix, true, out, seen);
  } else {
    seen.push_back(this);
    for (const auto& c : children_) {
      if (!c.value()) continue;
      c.value()->collect_modules(name_prefix.empty() ? c.key() : name_prefix + "." + c.key(), true, out, seen);
    }
  }
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }
OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

// --- registration -------------------------------------------------------------------------------------------

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name(*this, name, "parameter");
  GB_CHECK(!buffers_.contains(name) && !children_.contains(name), this->name(), ": attribute \"", name,
           "\" already exists (as a buffer or submodule)");
  if (tensor.defined()) {
    if (!tensor.is_leaf()) tensor = tensor.detach();  // a parameter is always a leaf
    tensor.requires_grad_(requires_grad);
    gb::detail::tag_storage(tensor, memory::Category::parameter);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_name(*this, name, "buffer");
  GB_CHECK(!parameters_.contains(name) && !children_.contains(name), this->name(), ": attribute \"", name,
           "\" already exists (as a parameter or submodule)");
  if (tensor.defined()) gb::detail::tag_storage(tensor, memory::Category::parameter);
  if (!persistent) non_persistent_.push_back(name);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::register_child(std::string name, std::shared_ptr<Module> child) {
  check_name(*this, name, "submodule");
  GB_CHECK(child != nullptr, this->name(), ": register_module(\"", name, "\", ...) got an empty module");
  GB_CHECK(!parameters_.contains(name) && !buffers_.contains(name), this->name(), ": attribute \"", name,
           "\" already exists (as a parameter or buffer)");
  if (child->parent_ == nullptr) {  // the first parent names it (a module shared by two parents keeps its first path)
    child->parent_ = this;
    child->local_name_ = name;
    child->forget_paths();
  }
  children_.insert(std::move(name), std::move(child));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> child) {
  GB_CHECK(children_.contains(name), this->name(), ": replace_module(\"", name,
           "\"): no submodule of that name is registered");
  GB_CHECK(child != nullptr, this->name(), ": replace_module(\"", name, "\", ...) got an empty module");
  auto& old = children_[name];
  if (old && old->parent_ == this) {
    old->parent_ = nullptr;
    old->forget_paths();
  }
  child->parent_ = this;
  child->local_name_ = name;
  child->forget_paths();
  children_[name] = std::move(child);
}

bool Module::unregister(const std::string& name) {
  non_persistent_.erase(std::remove(non_persistent_.begin(), non_persistent_.end(), name), non_persistent_.end());
  return parameters_.erase(name) || buffers_.erase(name) || children_.erase(name);
}

// --- modes and conversion -----------------------------------------------------------------------------------

void Module::train(bool on) {
  is_training_ = on;
  for (const auto& c : children_)
    if (c.value()) c.value()->train(on);
}

void Module::apply(const std::function<void(Module&)>& fn) {
  walk("", [&](const std::string&, Module& m) { fn(m); });
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& name_prefix) {
  walk(name_prefix, fn);
}

void Module::convert_all(std::optional<Device> device, std::optional<ScalarType> dtype, bool non_blocking) {
  for (const auto& p : named_parameters()) convert(p.value(), device, dtype, non_blocking, memory::Category::parameter);
  for (const auto& b : named_buffers()) convert(b.value(), device, dtype, non_blocking, memory::Category::parameter);
}
void Module::to(Device device, bool non_blocking) { convert_all(device, std::nullopt, non_blocking); }
void Module::to(ScalarType dtype, bool non_blocking) { convert_all(std::nullopt, dtype, non_blocking); }
void Module::to(Device device, ScalarType dtype, bool non_blocking) { convert_all(device, dtype, non_blocking); }

void Module::zero_grad(bool set_to_none) {
  for (const auto& p : named_parameters()) gb::detail::clear_grad(p.value(), set_to_none);
}

// --- libtorch's archive form ---------------------------------------------------------------------------------

void Module::save(serialize::OutputArchive& archive) const {
  auto persistent = [&](const std::string& k) {
    return std::find(non_persistent_.begin(), non_persistent_.end(), k) == non_persistent_.end();
  };
  for (const auto& p : parameters_)
    if (p.value().defined()) archive.write(p.key(), p.value());
  for (const auto& b : buffers_)
    if (b.value().defined() && persistent(b.key())) archive.write(b.key(), b.value(), /*is_buffer=*/true);
  for (const auto& c : children_) {
    serialize::OutputArchive child;
    c.value()->save(child);
    archive.write(c.key(), child);
  }
}

void Module::load(serialize::InputArchive& archive) {
  auto persistent = [&](const std::string& k) {
    return std::find(non_persistent_.begin(), non_persistent_.end(), k) == non_persistent_.end();
  };
  // into each tensor in place (members and optimizers holding it see the values), shapes checked first
  auto read_into = [&](const std::string& key, const Tensor& dst, bool is_buffer) {
    Tensor got;
    archive.read(key, got, is_buffer);
    GB_CHECK(got.sizes() == dst.sizes(), name(), "::load: the tensor '", key, "' has shape ", got.sizes(),
             " in the archive but ", dst.sizes(), " in the module; build the module with the configuration it was "
             "saved with");
    NoGradGuard no_grad;
    Tensor(dst).copy_(got);
  };
  for (auto& p : parameters_)
    if (p.value().defined()) read_into(p.key(), p.value(), false);
  for (auto& b : buffers_)
    if (b.value().defined() && persistent(b.key())) read_into(b.key(), b.value(), true);
  for (const auto& c : children_) {
    serialize::InputArchive child;
    archive.read(c.key(), child);
    c.value()->load(child);
  }
}

// --- copies -------------------------------------------------------------------------------------------------

namespace {
std::string key_list(const std::vector<std::string>& keys) {
  std::string out = "[";
  for (size_t i = 0; i < keys.size(); ++i) out += (i ? ", " : "") + keys[i];
  return out + "]";
}

// dst (registered by the copy) takes a copy of src's values, keeping its identity (members that hold it see them).
void copy_tensor(const Module& m, const char* what, const std::string& key, const Tensor& dst, const Tensor& src,
                 const std::optional<Device>& device) {
  GB_CHECK(dst.defined() == src.defined(), m.name(), "::clone(): ", what, " '", key, "' is ",
           src.defined() ? "defined" : "undefined", " in the original but not in the copy; register it in reset() "
           "(or the constructor) exactly as the original did");
  if (!src.defined()) return;
  GB_CHECK(dst.sizes() == src.sizes(), m.name(), "::clone(): ", what, " '", key, "' has shape ", dst.sizes(),
           " in the copy but ", src.sizes(), " in the original; the copy must be configured as the original");
  Tensor fresh;
  {
    memory::CategoryGuard cat(memory::Category::parameter);
    fresh = src.detach().to(device.value_or(src.device()), src.scalar_type(), false, /*copy=*/true);
  }
  swap_in(dst, fresh);
  gb::detail::tag_storage(dst, memory::Category::parameter);
}
}  // namespace

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  throw Error(gb::detail::str_cat("clone() has not been implemented for ", name(), ". Subclass gb::nn::Cloneable<", name(),
                      "Impl> (your module's own type) instead of gb::nn::Module and register its parameters, buffers "
                      "and submodules in reset(), to inherit the ability to call clone() (glassbox/nn/cloneable.h)"));
}

void Module::copy_state_from(const Module& from, const std::optional<Device>& device, bool recurse) {
  NoGradGuard no_grad;
  GB_CHECK(parameters_.keys() == from.parameters_.keys(), name(), "::clone(): the copy registered the parameters ",
           key_list(parameters_.keys()), " but the original has ", key_list(from.parameters_.keys()),
           "; register every parameter in reset() (or the constructor), as the original did");
  GB_CHECK(buffers_.keys() == from.buffers_.keys(), name(), "::clone(): the copy registered the buffers ",
           key_list(buffers_.keys()), " but the original has ", key_list(from.buffers_.keys()),
           "; register every buffer in reset() (or the constructor), as the original did");
  for (const auto& p : from.parameters_) {
    const Tensor& dst = parameters_[p.key()];
    copy_tensor(*this, "parameter", p.key(), dst, p.value(), device);
    if (dst.defined()) dst.requires_grad_(p.value().requires_grad());
  }
  for (const auto& b : from.buffers_) copy_tensor(*this, "buffer", b.key(), buffers_[b.key()], b.value(), device);
  non_persistent_ = from.non_persistent_;
  is_training_ = from.is_training_;
  if (!recurse) return;
  GB_CHECK(children_.keys() == from.children_.keys(), name(), "::clone(): the copy registered the submodules ",
           key_list(children_.keys()), " but the original has ", key_list(from.children_.keys()),
           "; register every submodule in reset() (or the constructor), as the original did");
  for (const auto& c : from.children_) children_[c.key()]->copy_state_from(*c.value(), device, true);
}

// --- state --------------------------------------------------------------------------------------------------

StateDict Module::state_dict(const std::string& prefix) const {
  StateDict out("Key");
  std::vector<const Module*> seen;
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m, const std::string& pre) {
    if (std::find(seen.begin(), seen.end(), &m) != seen.end()) return;
    seen.push_back(&m);
    for (const auto& p : m.parameters_)
      if (p.value().defined()) out.insert_or_assign(pre + p.key(), p.value().detach());
    for (const auto& b : m.buffers_) {
      if (!b.value().defined()) continue;
      if (std::find(m.non_persistent_.begin(), m.non_persistent_.end(), b.key()) != m.non_persistent_.end()) continue;
      out.insert_or_assign(pre + b.key(), b.value().detach());
    }
    for (const auto& c : m.children_)
      if (c.value()) walk(*c.value(), pre + c.key() + ".");
  };
  walk(*this, prefix);
  return out;
}

IncompatibleKeys Module::load_state_dict(const StateDict& sd, bool strict) {
  StateDict own = state_dict();
  IncompatibleKeys result;
  std::vector<std::string> size_errors;
  for (const auto& item : own) {
    const Tensor* src = sd.find(item.key());
    if (!src) {
      result.missing_keys.push_back(item.key());
      continue;
    }
    if (!src->defined() || src->sizes() != item.value().sizes()) {
      size_errors.push_back("size mismatch for " + item.key() + ": copying a param with shape " +
                            (src->defined() ? shape_text(src->sizes()) : std::string("(undefined)")) +
                            " from checkpoint, the shape in current model is " + shape_text(item.value().sizes()) +
                            ".");
    }
  }
  for (const auto& item : sd)
    if (!own.contains(item.key())) result.unexpected_keys.push_back(item.key());

  auto quoted = [](const std::vector<std::string>& keys) {
    std::string s;
    for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
    return s;
  };
  std::vector<std::string> errors;
  if (strict) {
    if (!result.unexpected_keys.empty())
      errors.push_back("Unexpected key(s) in state_dict: " + quoted(result.unexpected_keys) + ". ");
    if (!result.missing_keys.empty())
      errors.push_back("Missing key(s) in state_dict: " + quoted(result.missing_keys) + ". ");
  }
  errors.insert(errors.end(), size_errors.begin(), size_errors.end());
  if (!errors.empty()) {
    std::string msg = "Error(s) in loading state_dict for " + name() + ":";
    for (const auto& e : errors) msg += "\n\t" + e;
    if (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty()))
      msg += "\nIf the keys differ by a \"module.\" prefix (a checkpoint saved from DataParallel/DDP), load "
             "gb::strip_prefix(state_dict, \"module.\") instead; strict=false loads what matches.";
    throw Error(msg);
  }
  NoGradGuard no_grad;
  for (const auto& item : own)
    if (const Tensor* src = sd.find(item.key())) {
      Tensor dst = item.value();
      dst.copy_(src->device() == dst.device() ? *src : src->to(dst.device()));
    }
  return result;
}

// --- hooks (registration; running them is module_call.cpp) --------------------------------------------------

namespace {
std::atomic<unsigned> g_next_hook_id{1};
}

unsigned Module::register_forward_pre_hook(ForwardPreHook hook) {
  unsigned id = g_next_hook_id.fetch_add(1);
  pre_hooks_.emplace_back(id, std::move(hook));
  return id;
}
unsigned Module::register_forward_hook(ForwardHook hook) {
  unsigned id = g_next_hook_id.fetch_add(1);
  forward_hooks_.emplace_back(id, std::move(hook));
  return id;
}
unsigned Module::register_full_backward_hook(BackwardHook hook) {
  unsigned id = g_next_hook_id.fetch_add(1);
  backward_hooks_.emplace_back(id, std::move(hook));
  return id;
}
bool Module::remove_hook(unsigned id) {
  auto drop = [id](auto& v) {
    auto it = std::remove_if(v.begin(), v.end(), [id](const auto& p) { return p.first == id; });
    bool found = it != v.end();
    v.erase(it, v.end());
    return found;
  };
  return drop(pre_hooks_) || drop(forward_hooks_) || drop(backward_hooks_);
}

// --- printing -----------------------------------------------------------------------------------------------

void Module::pretty_print(std::ostream& os) const { os << name(); }

void Module::print_tree(std::ostream& os, int indent) const {
  pretty_print(os);
  if (children_.is_empty()) return;
  os << "(\n";
  for (const auto& c : children_) {
    os << std::string(size_t(indent + 2), ' ') << "(" << c.key() << "): ";
    if (c.value()) c.value()->print_tree(os, indent + 2);
    os << "\n";
  }
  os << std::string(size_t(indent), ' ') << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  module.print_tree(os, 0);
  return os;
}

// --- where it sits ------------------------------------------------------------------------------------------

const std::string& Module::path() const {
  if (!path_known_.load(std::memory_order_acquire)) {
    const std::string& type = name();
    std::lock_guard<std::mutex> lock(path_mutex());
    if (!path_known_.load(std::memory_order_relaxed)) {
      std::string p = local_name_;
      int depth = 0;
      for (const Module* up = parent_; up && depth < 1000; up = up->parent_, ++depth)
        if (!up->local_name_.empty()) p = up->local_name_ + "." + p;
      path_ = std::move(p);
      const std::string& shown = path_.empty() ? type : path_;  // a root is named by its type
      path_name_id_ = memory::intern_name(shown);
      span_location_ = trace::location(shown, trace::SpanKind::module);
      path_known_.store(true, std::memory_order_release);
    }
  }
  return path_;
}

uint32_t Module::path_name_id() const {
  path();
  return path_name_id_;
}

const trace::SourceLocation* Module::span_location() const {
  path();
  return span_location_;
}

void Module::forget_paths() const {
  path_known_.store(false, std::memory_order_release);
  for (const auto& c : children_)
    if (c.value() && c.value()->parent_ == this) c.value()->forget_paths();
}

}  // namespace gb::nn
