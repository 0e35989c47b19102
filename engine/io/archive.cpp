// engine/io/archive.cpp — serialize::OutputArchive / InputArchive in libtorch's module-archive format, and IValue.
//
// Writing: the archive is a tree of nodes (keys in write order). save_to numbers the nested nodes depth first (the
// root is __torch__.Module, the k-th nested one __torch__.___torch_mangle_<k>.Module, as libtorch names them),
// pickles the tree into data.pkl with each tensor's bytes as its own storage data/<n>, declares each class in
// code/ for libtorch's TorchScript loader, and zips it all (engine/io/zip_writer.h) through an atomic file.
// Reading: engine/io/pt_import.cpp's restricted unpickler gives the object tree; it becomes nodes again.
#include "glassbox/io/archive.h"

#include <unistd.h>

#include <atomic>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>

#include "glassbox/autograd/grad_mode.h"
#include "glassbox/core/error.h"
#include "io/atomic_file.h"
#include "io/pt_reader.h"
#include "io/zip_writer.h"

namespace gb {

using detail::str_cat;

// ---- IValue ----

const char* IValue::tagKind() const {
  switch (tag_) {
    case Tag::None: return "None";
    case Tag::Bool: return "Bool";
    case Tag::Int: return "Int";
    case Tag::Double: return "Double";
    case Tag::String: return "String";
    case Tag::Tensor: return "Tensor";
  }
  return "?";
}

namespace {
[[noreturn]] void not_a(const IValue& v, const char* want) {
  throw Error(str_cat("IValue: expected ", want, " but got ", v.tagKind(), "; check what was written under this key"));
}
}  // namespace

bool IValue::toBool() const {
  if (tag_ != Tag::Bool) not_a(*this, "Bool");
  return i_ != 0;
}
int64_t IValue::toInt() const {
  if (tag_ != Tag::Int) not_a(*this, "Int");
  return i_;
}
double IValue::toDouble() const {
  if (tag_ == Tag::Int) return double(i_);
  if (tag_ != Tag::Double) not_a(*this, "Double");
  return d_;
}
const std::string& IValue::toStringRef() const {
  if (tag_ != Tag::String) not_a(*this, "String");
  return s_;
}
const Tensor& IValue::toTensor() const {
  if (tag_ != Tag::Tensor) not_a(*this, "Tensor");
  return t_;
}

namespace serialize {
namespace detail {

struct ArchiveNode {
  struct Entry {
    std::string key;
    IValue value;                          // a tensor, number, bool, string or None
    bool is_buffer = false;                // a tensor written as a buffer
    std::shared_ptr<ArchiveNode> nested;   // a nested archive (value unused)
    std::string unsupported;               // read from a file: the kind glassbox does not hold ("list", ...)
  };
  std::vector<Entry> entries;

  const Entry* find(const std::string& key) const {
    for (const auto& e : entries)
      if (e.key == key) return &e;
    return nullptr;
  }
  std::shared_ptr<ArchiveNode> deep_copy() const {
    auto c = std::make_shared<ArchiveNode>();
    c->entries = entries;
    for (auto& e : c->entries)
      if (e.nested) e.nested = e.nested->deep_copy();
    return c;
  }
};

}  // namespace detail

namespace {

using detail::ArchiveNode;
using gb::detail::PyObject;
using gb::detail::PyRef;
using Kind = PyObject::Kind;

// ---- the pickle (protocol 2) ----

class Pickler {
 public:
  void proto() { out_ += "\x80\x02"; }
  void stop() { out_ += '.'; }
  void global(const std::string& module, const std::string& name) { out_ += "c" + module + "\n" + name + "\n"; }
  void mark() { out_ += '('; }
  void tuple() { out_ += 't'; }
  void empty_tuple() { out_ += ')'; }
  void empty_dict() { out_ += '}'; }
  void setitems() { out_ += 'u'; }
  void build() { out_ += 'b'; }
  void newobj() { out_ += '\x81'; }
  void reduce() { out_ += 'R'; }
  void persid() { out_ += 'Q'; }
  void none() { out_ += 'N'; }
  void boolean(bool v) { out_ += v ? '\x88' : '\x89'; }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      out_ += 'K';
      out_ += char(v);
    } else if (v >= 0 && v < 65536) {
      out_ += 'M';
      le(uint64_t(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out_ += 'J';
      le(uint64_t(uint32_t(int32_t(v))), 4);
    } else {  // LONG1, 8 bytes two's complement
      out_ += "\x8a\x08";
      le(uint64_t(v), 8);
    }
  }
  void floating(double v) {
    out_ += 'G';
    uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int i = 7; i >= 0; --i) out_ += char((bits >> (8 * i)) & 0xff);  // big-endian
  }
  void string(const std::string& s) {
    out_ += 'X';
    le(s.size(), 4);
    out_ += s;
  }
  const std::string& bytes() const { return out_; }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_ += char((v >> (8 * i)) & 0xff);
  }
  std::string out_;
};

const char* storage_name(ScalarType t) {
  switch (t) {
    case kFloat: return "FloatStorage";
    case kDouble: return "DoubleStorage";
    case kHalf: return "HalfStorage";
    case kBFloat16: return "BFloat16Storage";
    case kInt64: return "LongStorage";
    case kInt32: return "IntStorage";
    case kInt16: return "ShortStorage";
    case kInt8: return "CharStorage";
    case kUInt8: return "ByteStorage";
    case kBool: return "BoolStorage";
  }
  return "FloatStorage";
}

bool is_identifier(const std::string& k) {
  if (k.empty() || std::isdigit(static_cast<unsigned char>(k[0]))) return false;
  for (char c : k)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// Everything save_to writes, gathered in one walk of the tree.
class Writer {
 public:
  void node(const ArchiveNode& n, const std::string& module_path) {
    std::vector<std::pair<const ArchiveNode*, std::string>> children;
    std::string params, buffers, attrs;
    bool all_identifiers = true;
    for (const auto& e : n.entries) all_identifiers = all_identifiers && is_identifier(e.key);
    p_.global(module_path, "Module");
    p_.empty_tuple();
    p_.newobj();
    p_.empty_dict();
    p_.mark();
    for (const auto& e : n.entries) {
      GB_CHECK(e.key.find_first_of("\"\\\n") == std::string::npos, "OutputArchive: the key '", e.key,
               "' holds a quote, backslash or newline, which libtorch's loader cannot read; rename it");
      p_.string(e.key);
      std::string type;
      if (e.nested) {
        const std::string child = "__torch__.___torch_mangle_" + std::to_string(next_class_++);
        type = child + ".Module";
        node(*e.nested, child);
      } else {
        type = value(e.value);
        if (e.value.isTensor()) (e.is_buffer ? buffers : params) += "\"" + e.key + "\", ";
      }
      attrs += all_identifiers ? str_cat("  ", e.key, " : ", type, "\n")
                               : str_cat("  __annotations__[\"", e.key, "\"] = ", type, "\n");
    }
    p_.setitems();
    p_.build();
    std::string code = str_cat("class Module(Module):\n  __parameters__ = [", params, "]\n  __buffers__ = [",
                               buffers, "]\n", all_identifiers ? "" : "  __annotations__ = []\n", attrs);
    // __torch__ -> code/__torch__.py; __torch__.___torch_mangle_3 -> code/__torch__/___torch_mangle_3.py
    std::string file = module_path;
    for (auto& c : file)
      if (c == '.') c = '/';
    code_.emplace_back("code/" + file + ".py", std::move(code));
  }

  Pickler p_;
  std::vector<std::pair<std::string, std::string>> code_;    // file, text
  std::vector<std::pair<std::string, Tensor>> storages_;     // key, contiguous CPU tensor

 private:
  // Pickles one value; returns its TorchScript type.
  std::string value(const IValue& v) {
    switch (v.tag()) {
      case IValue::Tag::None: p_.none(); return "NoneType";
      case IValue::Tag::Bool: p_.boolean(v.toBool()); return "bool";
      case IValue::Tag::Int: p_.integer(v.toInt()); return "int";
      case IValue::Tag::Double: p_.floating(v.toDouble()); return "float";
      case IValue::Tag::String: p_.string(v.toStringRef()); return "str";
      case IValue::Tag::Tensor: tensor(v.toTensor()); return "Tensor";
    }
    return "NoneType";
  }

  // _rebuild_tensor_v2(('storage', torch.<T>Storage, key, 'cpu', numel), 0, size, stride, requires_grad, {})
  void tensor(const Tensor& t) {
    Tensor c;
    {
      NoGradGuard no_grad;
      c = t.detach().to(kCPU).contiguous();
      if (c.data_ptr() == t.data_ptr() && t.is_cpu()) c = c.clone();  // a snapshot: later writes do not leak in
    }
    const std::string key = std::to_string(storages_.size());
    storages_.emplace_back(key, c);
    p_.global("torch._utils", "_rebuild_tensor_v2");
    p_.mark();
    p_.mark();
    p_.string("storage");
    p_.global("torch", storage_name(c.scalar_type()));
    p_.string(key);
    p_.string("cpu");
    p_.integer(c.numel());
    p_.tuple();
    p_.persid();
    p_.integer(0);
    p_.mark();
    for (int64_t d = 0; d < c.dim(); ++d) p_.integer(c.size(d));
    p_.tuple();
    p_.mark();
    for (int64_t d = 0; d < c.dim(); ++d) p_.integer(c.stride(d));
    p_.tuple();
    p_.boolean(t.requires_grad());
    p_.global("collections", "OrderedDict");
    p_.empty_tuple();
    p_.reduce();
    p_.tuple();
    p_.reduce();
  }

  int next_class_ = 0;
};

// A PyObject from the file -> an archive entry.
void to_entry(const PyRef& v, ArchiveNode::Entry& e, const std::optional<Device>& device);

std::shared_ptr<ArchiveNode> to_node(const PyRef& module, const std::optional<Device>& device) {
  auto n = std::make_shared<ArchiveNode>();
  for (const auto& [k, v] : module->pairs) {
    ArchiveNode::Entry e;
    e.key = k->str;
    to_entry(v, e, device);
    n->entries.push_back(std::move(e));
  }
  return n;
}

void to_entry(const PyRef& v, ArchiveNode::Entry& e, const std::optional<Device>& device) {
  switch (v->kind) {
    case Kind::none: return;
    case Kind::boolean: e.value = IValue(v->boolean); return;
    case Kind::integer: e.value = IValue(v->integer); return;
    case Kind::floating: e.value = IValue(v->floating); return;
    case Kind::string: e.value = IValue(v->str); return;
    case Kind::object:
      if (v->str == "module") {
        e.nested = to_node(v, device);
      } else if (v->tensor.defined()) {
        e.value = IValue(device && v->tensor.device() != *device ? v->tensor.to(*device) : v->tensor);
      } else {
        e.unsupported = v->note.empty() ? std::string("an object") : "a tensor that " + v->note;
      }
      return;
    default:
      e.unsupported = str_cat("a ", v->kind_name());
  }
}

std::string file_stem(const std::string& filename) {
  std::string stem = std::filesystem::path(filename).stem().string();
  std::string out;
  for (char c : stem) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out.empty() ? std::string("archive") : out;
}

}  // namespace

// ---- OutputArchive ----

OutputArchive::OutputArchive() : root_(std::make_unique<detail::ArchiveNode>()) {}
OutputArchive::~OutputArchive() = default;
OutputArchive::OutputArchive(OutputArchive&&) noexcept = default;
OutputArchive& OutputArchive::operator=(OutputArchive&&) noexcept = default;

namespace {
void add_entry(detail::ArchiveNode& n, detail::ArchiveNode::Entry e) {
  GB_CHECK(!e.key.empty(), "OutputArchive::write: the key is empty; name what you write");
  GB_CHECK(n.find(e.key) == nullptr, "OutputArchive::write: the key '", e.key,
           "' was written already; each key holds one value (use another key)");
  n.entries.push_back(std::move(e));
}
}  // namespace

void OutputArchive::write(const std::string& key, const IValue& value) {
  GB_CHECK(!value.isTensor() || value.toTensor().defined(), "OutputArchive::write: the tensor under '", key,
           "' is undefined; write a defined tensor (or skip the key)");
  add_entry(*root_, {key, value, false, nullptr, ""});
}

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool is_buffer) {
  GB_CHECK(tensor.defined(), "OutputArchive::write: the tensor under '", key,
           "' is undefined; write a defined tensor (or skip the key)");
  GB_CHECK(!tensor.is_meta(), "OutputArchive::write: the tensor under '", key,
           "' is on the meta device and has no values to save; materialize it first (module->to(gb::kCPU))");
  add_entry(*root_, {key, IValue(tensor), is_buffer, nullptr, ""});
}

void OutputArchive::write(const std::string& key, OutputArchive& nested_archive) {
  add_entry(*root_, {key, IValue(), false, nested_archive.root_->deep_copy(), ""});
}

std::string OutputArchive::bytes(const std::string& folder) const {
  Writer w;
  w.p_.proto();
  w.node(*root_, "__torch__");
  w.p_.stop();
  std::string out;
  gb::detail::ZipWriter zip([&out](const void* d, size_t n) { out.append(static_cast<const char*>(d), n); });
  for (const auto& [key, t] : w.storages_)
    zip.add(folder + "/data/" + key, t.data_ptr(), size_t(t.numel() * t.element_size()));
  zip.add(folder + "/data.pkl", w.p_.bytes());
  for (const auto& [file, text] : w.code_) zip.add(folder + "/" + file, text);
  zip.add(folder + "/constants.pkl", std::string("\x80\x02).", 4));
  zip.add(folder + "/version", std::string("3\n"));
  zip.finish();
  return out;
}

void OutputArchive::save_to(const std::string& filename) {
  const std::string b = bytes(file_stem(filename));
  gb::detail::AtomicFile f(filename);
  f.write(b.data(), b.size());
  f.commit();
}

void OutputArchive::save_to(std::ostream& stream) {
  const std::string b = bytes("archive");
  stream.write(b.data(), std::streamsize(b.size()));
  GB_CHECK(stream.good(), "OutputArchive::save_to: writing to the stream failed (", b.size(), " bytes)");
}

void OutputArchive::save_to(const std::function<size_t(const void*, size_t)>& func) {
  const std::string b = bytes("archive");
  const size_t n = func(b.data(), b.size());
  GB_CHECK(n == b.size(), "OutputArchive::save_to: the writer function took ", n, " of ", b.size(), " bytes");
}

// ---- InputArchive ----

InputArchive::InputArchive() : root_(std::make_shared<detail::ArchiveNode>()) {}
InputArchive::~InputArchive() = default;
InputArchive::InputArchive(InputArchive&&) noexcept = default;
InputArchive& InputArchive::operator=(InputArchive&&) noexcept = default;

void InputArchive::load_from(const std::string& filename, std::optional<Device> device) {
  PyRef root = gb::detail::read_pt_pickle(filename);
  GB_CHECK(root->kind == Kind::object && root->str == "module", "InputArchive::load_from: '", filename, "' holds a ",
           root->kind == Kind::dict ? "dict (a state dict from Python's torch.save)" : root->kind_name(),
           ", not an archive of libtorch's torch::save; read a state dict with gb::load(path)");
  root_ = to_node(root, device);
  where_ = "'" + filename + "'";
}

void InputArchive::load_from(const char* data, size_t size, std::optional<Device> device) {
  // The reader works on files: the bytes go to a private temporary one first.
  static std::atomic<int> counter{0};
  const auto path = std::filesystem::temp_directory_path() /
                    ("glassbox-archive-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".pt");
  {
    std::ofstream f(path, std::ios::binary);
    f.write(data, std::streamsize(size));
    GB_CHECK(f.good(), "InputArchive::load_from: cannot write the temporary file ", path.string(),
             "; check the space in ", std::filesystem::temp_directory_path().string());
  }
  try {
    load_from(path.string(), device);
  } catch (...) {
    std::filesystem::remove(path);
    throw;
  }
  std::filesystem::remove(path);
  where_ = "the archive in memory";
}

void InputArchive::load_from(std::istream& stream, std::optional<Device> device) {
  std::ostringstream all;
  all << stream.rdbuf();
  const std::string bytes = all.str();
  load_from(bytes.data(), bytes.size(), device);
  where_ = "the archive from the stream";
}

std::vector<std::string> InputArchive::keys() {
  std::vector<std::string> out;
  for (const auto& e : root_->entries) out.push_back(e.key);
  return out;
}

namespace {
std::string key_list(const detail::ArchiveNode& n) {
  std::string out;
  for (const auto& e : n.entries) out += (out.empty() ? "" : ", ") + e.key;
  return out.empty() ? std::string("nothing") : out;
}
}  // namespace

bool InputArchive::try_read(const std::string& key, IValue& value) {
  const auto* e = root_->find(key);
  if (e == nullptr || e->nested || !e->unsupported.empty()) return false;
  value = e->value;
  return true;
}

void InputArchive::read(const std::string& key, IValue& value) {
  const auto* e = root_->find(key);
  GB_CHECK(e != nullptr, "InputArchive: ", where_, " has no key '", key, "' (it has ", key_list(*root_), ")");
  GB_CHECK(e->unsupported.empty(), "InputArchive: the key '", key, "' in ", where_, " holds ", e->unsupported,
           ", which glassbox's archives do not read (they hold tensors, numbers, bools, strings and archives)");
  GB_CHECK(!e->nested, "InputArchive: the key '", key, "' in ", where_,
           " holds a nested archive; read it into an InputArchive");
  value = e->value;
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool /*is_buffer*/) {
  const auto* e = root_->find(key);
  if (e == nullptr || !e->value.isTensor()) return false;
  const Tensor& got = e->value.toTensor();
  if (!tensor.defined() || tensor.sizes() != got.sizes()) {  // libtorch's set_: the file's tensor, as it is
    tensor = got;
    return true;
  }
  // the same shape: into the existing tensor, keeping its identity (a module's parameter stays the optimizer's)
  NoGradGuard no_grad;
  tensor.copy_(got);
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  const auto* e = root_->find(key);
  GB_CHECK(e != nullptr, "InputArchive: ", where_, " has no tensor '", key, "' (it has ", key_list(*root_), ")");
  GB_CHECK(e->value.isTensor(), "InputArchive: the key '", key, "' in ", where_, " holds ",
           e->nested ? std::string("a nested archive") : e->unsupported.empty() ? std::string(e->value.tagKind())
                                                                                 : e->unsupported,
           ", not a tensor");
  try_read(key, tensor, is_buffer);
}

bool InputArchive::try_read(const std::string& key, InputArchive& archive) {
  const auto* e = root_->find(key);
  if (e == nullptr || !e->nested) return false;
  archive.root_ = e->nested;
  archive.where_ = where_ + " (" + key + ")";
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& archive) {
  const auto* e = root_->find(key);
  GB_CHECK(e != nullptr, "InputArchive: ", where_, " has no archive '", key, "' (it has ", key_list(*root_), ")");
  GB_CHECK(e->nested != nullptr, "InputArchive: the key '", key, "' in ", where_, " holds ",
           e->value.isNone() && e->unsupported.empty() ? "None" : e->value.tagKind(), ", not a nested archive");
  try_read(key, archive);
}

}  // namespace serialize
}  // namespace gb
