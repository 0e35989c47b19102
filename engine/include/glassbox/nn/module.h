// glassbox/nn/module.h — gb::nn::Module, the base of every layer and model (torch::nn::Module's C++ API).
//
//   struct NetImpl : gb::nn::Module {
//     NetImpl() {
//       fc1 = register_module("fc1", gb::nn::Linear(784, 128));
//       scale = register_parameter("scale", gb::ones({1}));
//     }
//     gb::Tensor forward(gb::Tensor x) { return fc1(x).relu() * scale; }
//     gb::nn::Linear fc1{nullptr};
//     gb::Tensor scale;
//   };
//   GB_MODULE(Net);                                   // Net: a holder (shared_ptr) of NetImpl, like TORCH_MODULE
//   Net net;  net->named_parameters();                // "fc1.weight", "fc1.bias", "scale"
//
// Names are dotted paths like PyTorch's. train()/eval() recurse; to(device/dtype) converts parameters and buffers
// in place, so optimizers built before keep working. state_dict() holds parameters and persistent buffers;
// load_state_dict(sd, strict) copies values in and reports missing, unexpected and mis-shaped keys with PyTorch's
// wording.
//
// Calling convention (PyTorch's, so hooks behave the same): `net(x)` — the holder's operator(), PyTorch's
// __call__ — runs forward pre-hooks, forward, forward hooks, and installs full backward hooks; `net->forward(x)`
// is the raw forward, no hooks (as calling .forward() directly in PyTorch). Both record the module in the trace
// for the built-in layers; a user module's own forward is a module span when called as `net(x)`.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "glassbox/core/device.h"
#include "glassbox/core/dtype.h"
#include "glassbox/core/tensor.h"
#include "glassbox/memory/category.h"
#include "glassbox/nn/ordered_dict.h"
#include "instrument/probe.h"

namespace gb::serialize {
class OutputArchive;
class InputArchive;
}  // namespace gb::serialize

namespace gb::nn {

class Module;

// Hooks see the Tensor arguments and results of a call (a tuple or vector of tensors is flattened in order).
// Returning a list replaces them (same count); returning std::nullopt (or a void lambda) keeps them.
using ForwardPreHook = std::function<std::optional<variable_list>(Module&, const variable_list& inputs)>;
using ForwardHook =
    std::function<std::optional<variable_list>(Module&, const variable_list& inputs, const variable_list& outputs)>;
// Full backward hook: called once the gradients with respect to the module's tensor inputs are computed.
// grad_input[i] is undefined for an input that needs no gradient; a returned list replaces grad_input.
using BackwardHook = std::function<std::optional<variable_list>(Module&, const variable_list& grad_input,
                                                                const variable_list& grad_output)>;

// What load_state_dict(strict=false) leaves out (PyTorch's _IncompatibleKeys).
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
  bool empty() const { return missing_keys.empty() && unexpected_keys.empty(); }
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name);
  Module();
  virtual ~Module();
  Module& operator=(const Module&) = delete;

  // The type name as PyTorch prints it: "Linear" for gb::nn::LinearImpl, "NetImpl" -> "Net".
  const std::string& name() const noexcept;

  // This module as its concrete type, or nullptr when it is not one: as<nn::Linear>() (a holder: its Impl) or
  // as<nn::LinearImpl>(), as libtorch's Module::as.
  template <typename ModuleType>
  auto* as() noexcept {
    if constexpr (requires { typename ModuleType::ContainedType; })
      return dynamic_cast<typename ModuleType::ContainedType*>(this);
    else
      return dynamic_cast<ModuleType*>(this);
  }
  template <typename ModuleType>
  const auto* as() const noexcept {
    if constexpr (requires { typename ModuleType::ContainedType; })
      return dynamic_cast<const typename ModuleType::ContainedType*>(this);
    else
      return dynamic_cast<const ModuleType*>(this);
  }

  // --- the tree ---------------------------------------------------------------------------------------------
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  // Depth first, parents before children (PyTorch's order); each module once even if registered twice.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& name_prefix = "",
                                                                  bool include_self = true);
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;

  // --- registration -----------------------------------------------------------------------------------------
  // A parameter is a leaf that requires grad (when requires_grad); an undefined tensor registers "no parameter"
  // (a Linear without bias) and is skipped by parameters(). The returned reference stays valid for the module's
  // life. Names must be non-empty and without '.'; a second registration of a name is an error.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // A buffer is state that is not trained (BatchNorm's running_mean). persistent=false keeps it out of state_dict.
  Tensor& register_buffer(std::string name, Tensor tensor, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    register_child(std::move(name), module);
    return module;
  }
  template <typename H, typename = decltype(std::declval<H>().ptr())>
  H register_module(std::string name, H holder) {
    register_child(std::move(name), holder.ptr());
    return holder;
  }
  // Replaces a registered child (same name); returns the new one.
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }
  template <typename H, typename = decltype(std::declval<H>().ptr())>
  H replace_module(const std::string& name, H holder) {
    replace_child(name, holder.ptr());
    return holder;
  }
  // Removes a parameter/buffer/child registration (PyTorch's `del module.name`); false when there was none.
  bool unregister(const std::string& name);

  // --- copies -------------------------------------------------------------------------------------------------
  // A deep copy (libtorch's clone): a module of the same type and configuration with its own parameters and buffers
  // holding the same values (moved to `device` when given), the same requires_grad and training mode, and children
  // cloned the same way; gradients and hooks are not copied. Built-in modules clone; a module of your own does when
  // it derives from gb::nn::Cloneable<Self> and registers its parameters, buffers and children in reset(), as in
  // libtorch (glassbox/nn/cloneable.h). Any other module throws gb::Error naming its type and that fix.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  // --- modes and conversion -----------------------------------------------------------------------------------
  virtual void train(bool on = true);
  void eval() { train(false); }
  virtual bool is_training() const noexcept { return is_training_; }
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& name_prefix = "");
  // In place: every parameter and buffer now lives on `device` / has `dtype` (floating tensors only), keeping its
  // identity (optimizers and hooks holding it see the new data). Gradients move along.
  virtual void to(Device device, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  // set_to_none=true (PyTorch 2's default) drops .grad; false zeroes it in place.
  virtual void zero_grad(bool set_to_none = true);

  // --- state --------------------------------------------------------------------------------------------------
  // Parameters and persistent buffers, dotted names, detached (same storage: edit the model through it).
  StateDict state_dict(const std::string& prefix = "") const;
  // Copies each entry into the matching parameter/buffer (no grad recorded; dtype converted as PyTorch's copy_).
  // strict=true throws PyTorch's message ("Error(s) in loading state_dict for Net:\n\tMissing key(s) in
  // state_dict: ..."); strict=false loads what matches and returns the rest. A shape mismatch is an error either
  // way, and nothing is copied unless every check passes (the model is never half-loaded).
  IncompatibleKeys load_state_dict(const StateDict& state_dict, bool strict = true);
  // libtorch's archive form (glassbox/io/archive.h): save writes each parameter, each buffer (is_buffer) and each
  // child as a nested archive under its name; load reads them back into the existing tensors (values and shapes
  // from the file), throwing gb::Error naming the first key the archive lacks. Override both to save more.
  virtual void save(serialize::OutputArchive& archive) const;
  virtual void load(serialize::InputArchive& archive);

  // --- hooks --------------------------------------------------------------------------------------------------
  // Each returns a handle id for remove_hook. Void-returning callables are accepted too.
  unsigned register_forward_pre_hook(ForwardPreHook hook);
  unsigned register_forward_hook(ForwardHook hook);
  unsigned register_full_backward_hook(BackwardHook hook);
  template <typename F, typename = std::enable_if_t<std::is_void_v<std::invoke_result_t<F, Module&, const variable_list&>>>>
  unsigned register_forward_pre_hook(F f) {
    return register_forward_pre_hook(ForwardPreHook([f](Module& m, const variable_list& in) -> std::optional<variable_list> {
      f(m, in);
      return std::nullopt;
    }));
  }
  template <typename F, typename = std::enable_if_t<
                            std::is_void_v<std::invoke_result_t<F, Module&, const variable_list&, const variable_list&>>>,
            typename = void>
  unsigned register_forward_hook(F f) {
    return register_forward_hook(ForwardHook(
        [f](Module& m, const variable_list& in, const variable_list& out) -> std::optional<variable_list> {
          f(m, in, out);
          return std::nullopt;
        }));
  }
  template <typename F, typename = std::enable_if_t<
                            std::is_void_v<std::invoke_result_t<F, Module&, const variable_list&, const variable_list&>>>,
            typename = void, typename = void>
  unsigned register_full_backward_hook(F f) {
    return register_full_backward_hook(BackwardHook(
        [f](Module& m, const variable_list& gi, const variable_list& go) -> std::optional<variable_list> {
          f(m, gi, go);
          return std::nullopt;
        }));
  }
  bool remove_hook(unsigned id);
  bool has_hooks() const noexcept {
    return !pre_hooks_.empty() || !forward_hooks_.empty() || !backward_hooks_.empty();
  }
  const std::vector<std::pair<unsigned, ForwardPreHook>>& forward_pre_hooks() const { return pre_hooks_; }
  const std::vector<std::pair<unsigned, ForwardHook>>& forward_hooks() const { return forward_hooks_; }
  const std::vector<std::pair<unsigned, BackwardHook>>& backward_hooks() const { return backward_hooks_; }

  // --- printing -----------------------------------------------------------------------------------------------
  // One line for this module ("Linear(in_features=4, out_features=8, bias=true)"); operator<< prints the tree
  // the way PyTorch's repr does.
  virtual void pretty_print(std::ostream& stream) const;

  // --- where it sits (tracing, memory attribution) ------------------------------------------------------------
  // The dotted path from the root it was first registered under ("encoder.layers.0.fc1"; "" for a root).
  const std::string& path() const;
  // A process-unique id; the trace's modules.id while a session records.
  uint32_t id() const noexcept { return id_; }
  // Writes this module and its parameters to the trace registry (modules/params rows), once per process, the first
  // time it is called while a session records; the registry puts them in every later session's file too.
  void trace_register() const;
  // The path interned for memory attribution, and the trace location of its module span (both cached).
  uint32_t path_name_id() const;
  const trace::SourceLocation* span_location() const;

 protected:
  // What a clone starts from (Cloneable's copy): other's name and training mode, nothing registered, no hooks, no
  // parent, a module id of its own. Derived members are copied by the derived class's copy constructor.
  Module(const Module& other);
  // Makes this module's state equal to `from`'s: each parameter and buffer — the same names, registered by this
  // module's constructor or reset() — gets a copy of from's values (on `device` if given; dtype as from's) and the
  // same requires_grad; the training mode too; children recursively, by name (recurse=false: this module's own
  // state only, for containers whose children are clones already). Throws gb::Error naming the first difference.
  void copy_state_from(const Module& from, const std::optional<Device>& device, bool recurse = true);

  // For modules that set their name after construction (containers of a given type).
  void set_name(std::string name) {
    name_ = std::move(name);
    name_known_.store(!name_.empty(), std::memory_order_release);
  }

 private:
  void register_child(std::string name, std::shared_ptr<Module> child);
  void replace_child(const std::string& name, std::shared_ptr<Module> child);
  void collect_modules(const std::string& prefix, bool include_self,
                       OrderedDict<std::string, std::shared_ptr<Module>>& out, std::vector<const Module*>& seen);
  // Calls fn(path, module) on this module (path = prefix) and every descendant once, parents first, without
  // needing a shared_ptr to this one (a module on the stack: `Net model; model.parameters();` as libtorch allows).
  void walk(const std::string& prefix, const std::function<void(const std::string&, Module&)>& fn);
  void walk_from(const std::string& prefix, const std::function<void(const std::string&, Module&)>& fn,
                 std::vector<const Module*>& seen);
  void print_tree(std::ostream& os, int indent) const;
  void forget_paths() const;
  void convert_all(std::optional<Device> device, std::optional<ScalarType> dtype, bool non_blocking);  // a parent was registered above: paths below are recomputed on next use
  friend std::ostream& operator<<(std::ostream& os, const Module& module);

  // Caches filled on first use, safe when several threads call the same module (a lock on a miss, an acquire load
  // on a hit). The tree itself is built before modules are called from several threads, as in PyTorch.
  mutable std::string name_;
  mutable std::atomic<bool> name_known_{false};
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  std::vector<std::string> non_persistent_;
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  bool is_training_ = true;

  std::vector<std::pair<unsigned, ForwardPreHook>> pre_hooks_;
  std::vector<std::pair<unsigned, ForwardHook>> forward_hooks_;
  std::vector<std::pair<unsigned, BackwardHook>> backward_hooks_;

  uint32_t id_;
  Module* parent_ = nullptr;  // the first parent (cleared by its destructor); set during its constructor too
  std::string local_name_;
  mutable std::string path_;
  mutable std::atomic<bool> path_known_{false};
  mutable std::atomic<bool> traced_{false};
  mutable uint32_t path_name_id_ = 0;                             // set with path_
  mutable const trace::SourceLocation* span_location_ = nullptr;  // set with path_
};

std::ostream& operator<<(std::ostream& os, const Module& module);

namespace detail {

// Opened by every module call (the holder's operator() and the built-in layers' forward): the allocations made
// inside carry the module's path, and while a trace records the call is a span of kind module with the module's
// id. A module already the innermost open call is not opened twice (holder call -> built-in forward).
class ModuleCallScope {
 public:
  explicit ModuleCallScope(const Module& m);
  ~ModuleCallScope();
  ModuleCallScope(const ModuleCallScope&) = delete;
  ModuleCallScope& operator=(const ModuleCallScope&) = delete;

 private:
  const Module* prev_ = nullptr;
  bool opened_ = false;
  std::optional<memory::ModuleContext> memory_;
  std::optional<trace::ModuleScope> module_;
  std::optional<trace::Span> span_;
};

// Full backward hooks: wraps the tensor inputs and outputs of one call in identity nodes whose backward calls the
// module's hooks (PyTorch's BackwardHook). Returns the wrapped inputs; wrap_outputs the wrapped outputs.
class BackwardHookState;
std::shared_ptr<BackwardHookState> backward_hooks_begin(Module& m, variable_list& inputs);
void backward_hooks_end(const std::shared_ptr<BackwardHookState>& state, variable_list& outputs);

// Flattening a call's arguments and results into tensors for hooks.
template <typename T>
void gather_tensors(T& value, std::vector<Tensor*>& out) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    out.push_back(&value);
  } else if constexpr (std::is_same_v<D, std::vector<Tensor>>) {
    for (auto& t : value) out.push_back(&t);
  } else if constexpr (requires { std::tuple_size<D>::value; }) {
    std::apply([&](auto&... parts) { (gather_tensors(parts, out), ...); }, value);
  }
}

inline variable_list values_of(const std::vector<Tensor*>& refs) {
  variable_list v;
  v.reserve(refs.size());
  for (auto* r : refs) v.push_back(*r);
  return v;
}
void replace_from(const std::vector<Tensor*>& refs, const variable_list& values, const char* what,
                  const Module& m);

// module(args...): hooks around forward (see the header comment).
template <typename Impl, typename... Args>
decltype(auto) call_module(Impl& m, Args&&... args) {
  ModuleCallScope scope(m);
  if (!m.has_hooks()) return m.forward(std::forward<Args>(args)...);
  std::tuple<std::decay_t<Args>...> a(std::forward<Args>(args)...);
  std::vector<Tensor*> in_refs;
  gather_tensors(a, in_refs);
  for (auto& [id, hook] : m.forward_pre_hooks())
    if (auto r = hook(m, values_of(in_refs))) replace_from(in_refs, *r, "forward pre-hook", m);
  std::shared_ptr<BackwardHookState> bw;
  if (!m.backward_hooks().empty()) {
    auto in = values_of(in_refs);
    bw = backward_hooks_begin(m, in);
    replace_from(in_refs, in, "backward hook", m);
  }
  auto out = std::apply([&](auto&... parts) { return m.forward(parts...); }, a);
  std::vector<Tensor*> out_refs;
  gather_tensors(out, out_refs);
  for (auto& [id, hook] : m.forward_hooks())
    if (auto r = hook(m, values_of(in_refs), values_of(out_refs))) replace_from(out_refs, *r, "forward hook", m);
  if (bw) {
    auto o = values_of(out_refs);
    backward_hooks_end(bw, o);
    replace_from(out_refs, o, "backward hook", m);
  }
  return out;
}

}  // namespace detail
}  // namespace gb::nn
