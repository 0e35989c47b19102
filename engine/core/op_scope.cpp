// engine/core/op_scope.cpp — the op context: allocation stamping, the op's trace span and op_details row, its link
// to the autograd node it records, and the observers' look at its result and node (core/observer.h: the monitor's
// checks while a trace records).
#include "core/op_scope.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/autograd/node.h"
#include "core/observer.h"
#include "memory/context.h"

namespace gb::detail {

namespace {
// A direct-mapped cache per thread, keyed by the name's address: op names are literals, so one probe and a
// pointer compare find them.
template <class V>
struct AddressCache {
  struct Slot {
    const char* key = nullptr;
    V value{};
  };
  Slot slots[256];
  Slot& at(const char* key) { return slots[(reinterpret_cast<std::uintptr_t>(key) >> 3) & 255]; }
};

thread_local OpScope* t_current = nullptr;
thread_local bool t_in_node = false;  // a NodeScope is open

// The interned input_shapes and dtypes strings of a list of inputs, cached per thread by their shapes and dtypes:
// a training loop repeats the same few signatures, so formatting and interning happen once per signature.
struct SignatureCache {
  struct Entry {
    std::vector<int64_t> key;
    trace::Id shapes = 0, dtypes = 0;
  };
  std::unordered_map<uint64_t, Entry> entries;
  std::vector<int64_t> key;

  const Entry& get(const Tensor* const* inputs, int n) {
    key.clear();
    uint64_t h = 1469598103934665603ull;
    auto add = [&](int64_t v) {
      key.push_back(v);
      h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    };
    add(n);
    for (int i = 0; i < n; ++i) {
      const TensorImpl* t = inputs[i]->unsafe_impl();
      add(static_cast<int64_t>(t->dtype));
      add(static_cast<int64_t>(t->sizes.size()));
      for (int64_t d : t->sizes) add(d);
    }
    Entry& e = entries[h];
    if (e.key != key) {
      if (entries.size() > 4096) {  // a run with ever-new shapes: start over rather than grow without bound
        entries.clear();
        return get(inputs, n);
      }
      std::ostringstream shapes, dtypes;
      shapes << "[";
      for (int i = 0; i < n; ++i) {
        shapes << (i ? ", " : "") << "[";
        const auto& s = inputs[i]->unsafe_impl()->sizes;
        for (size_t d = 0; d < s.size(); ++d) shapes << (d ? ", " : "") << s[d];
        shapes << "]";
        dtypes << (i ? "," : "") << dtype_name(inputs[i]->scalar_type());
      }
      shapes << "]";
      e.key = key;
      e.shapes = trace::intern(shapes.str());
      e.dtypes = trace::intern(dtypes.str());
    }
    return e;
  }
};

int device_code(const Device& d) { return d.is_cpu() ? trace::kCpu : d.is_meta() ? -2 : d.index(); }

int64_t nbytes(const Tensor& t) { return t.numel() * element_size(t.scalar_type()); }

}  // namespace

const char* dtype_name(ScalarType t) { return python_name(t); }

uint32_t op_name_id(const char* op) {
  thread_local AddressCache<uint32_t> cache;
  auto& slot = cache.at(op);
  if (slot.key != op) {
    slot.value = memory::intern_name(op);
    slot.key = op;
  }
  return slot.value;
}

const trace::SourceLocation* op_location(const char* op) {
  thread_local AddressCache<const trace::SourceLocation*> cache;
  auto& slot = cache.at(op);
  if (slot.key != op) {
    slot.value = trace::location(op, trace::SpanKind::op);
    slot.key = op;
  }
  return slot.value;
}

namespace {
// The ops that only make a view (no element is read, written or computed). Inside another op or a backward node's
// formula, and recording no autograd node, they are that implementation, not a step of the user's program: they get
// no span of their own (the reshapes and transposes inside backward formulas were a third of a small MLP step's
// spans). Called by the user, or recording a node (a view's history), they have one.
bool is_view_op(const char* op) {
  thread_local AddressCache<bool> cache;
  auto& slot = cache.at(op);
  if (slot.key != op) {
    static constexpr std::string_view kViews[] = {"as_strided", "expand",    "permute", "reshape", "select",
                                                  "slice",      "squeeze",   "transpose", "unsqueeze", "view"};
    slot.value = std::find(std::begin(kViews), std::end(kViews), std::string_view(op)) != std::end(kViews);
    slot.key = op;
  }
  return slot.value;
}

bool records(OpScope::Inputs inputs) {  // autograd records a node for an op on these inputs
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}
}  // namespace

OpScope::OpScope(const char* op, Inputs inputs) noexcept
    : op_(op),
      parent_(t_current),
      prev_op_(memory::detail::thread_context().op),
      span_(trace::spans_on() && !((t_current || t_in_node) && is_view_op(op) && !records(inputs)) ? op_location(op)
                                                                                                   : nullptr) {
  memory::detail::thread_context().op = op_name_id(op);
  t_current = this;
  if (span_.id() != 0) [[unlikely]]
    for (const Tensor& t : inputs)
      if (t.defined() && n_inputs_ < kMaxInputs) inputs_[n_inputs_++] = &t;
}

OpScope::~OpScope() {
  t_current = parent_;
  memory::detail::thread_context().op = prev_op_;
  if (span_.id() == 0 || !trace::enabled()) return;
  // op_details for the ops of the forward pass (inside a module call, or recording autograd): what the op read and
  // wrote, and its FLOPs. The backward's and the optimizer's inner ops have their spans, not these rows: they are
  // most of a small step's ops and would double what the collector writes per step.
  bool forward = trace::detail::t_module >= 0;
  if (!forward && GradMode::is_enabled())
    for (int i = 0; i < n_inputs_ && !forward; ++i) forward = inputs_[i]->requires_grad();
  if (!forward) return;
  try {
    thread_local SignatureCache signatures;
    trace::OpDetailsRecord d;
    d.span_id = span_.id();
    if (n_inputs_) {
      const auto& e = signatures.get(inputs_, n_inputs_);
      d.input_shapes = e.shapes;
      d.dtypes = e.dtypes;
      d.device = device_code(inputs_[0]->device());
    } else if (has_output_ && output_.defined()) {
      d.device = device_code(output_.device());
    }
    int64_t read = 0, elements = 0;
    for (int i = 0; i < n_inputs_; ++i) {
      read += nbytes(*inputs_[i]);
      elements = std::max(elements, inputs_[i]->numel());
    }
    bool view = false;
    if (has_output_ && output_.defined()) {
      const TensorImpl* o = output_.unsafe_impl();
      const size_t len = std::strlen(op_);
      const bool inplace = len > 0 && op_[len - 1] == '_';
      if (o->is_view && !inplace)
        for (int i = 0; i < n_inputs_ && !view; ++i)
          view = inputs_[i]->unsafe_impl()->storage == o->storage;  // a view op: nothing read, written or computed
      elements = std::max(elements, output_.numel());
      if (!view) read += nbytes(output_);
    }
    if (view) return;  // a view reads, writes and computes nothing
    d.bytes = read;
    d.flops = flops_ >= 0 ? flops_ : elements;
    trace::emit(d);
  } catch (...) {  // out of memory while formatting: the row is skipped, the op is not
  }
}

OpScope* OpScope::current() noexcept { return t_current; }

NodeScope::NodeScope() noexcept : prev_(t_in_node) { t_in_node = true; }
NodeScope::~NodeScope() { t_in_node = prev_; }

void OpScope::set_output(const Tensor& out) {
  if (has_output_ || !out.defined()) return;
  has_output_ = true;
  if (span_.id() == 0) return;
  output_ = out;
  notify([&](EngineObserver& o) { o.on_op_output(op_, span_.id(), inputs_, n_inputs_, out); });
}

void OpScope::set_node(autograd::Node& node) noexcept {
  if (span_.id() == 0) return;
  span_.set_seq(static_cast<int64_t>(node.sequence_nr()));
  node.forward_span_id = static_cast<uint64_t>(span_.id());
  node.forward_module_id = trace::detail::t_module;
  node.forward_op = op_;
  notify([](EngineObserver& o) { o.on_node_recorded(); });
}

void op_output(const Tensor& out) {
  if (OpScope* s = t_current) s->set_output(out);
}

}  // namespace gb::detail
