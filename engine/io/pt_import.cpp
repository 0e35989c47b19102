// engine/io/pt_import.cpp — PyTorch's zip files (PyTorch >= 1.6): torch.save's state dicts (gb::load_pt) and the
// object tree of libtorch's archives (read_pt_pickle, for glassbox/io/archive.h).
//
// <archive>/data.pkl is a pickle of an OrderedDict (or dict) name -> tensor, or (libtorch's torch::save and
// serialize::OutputArchive) of a __torch__.Module object whose attributes are tensors, numbers, strings and nested
// such objects. Each tensor is _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks) whose storage
// is a persistent id ('storage', torch.FloatStorage, key, location, numel) naming the raw little-endian bytes
// <archive>/data/<key>. Only the globals below are reachable from the pickle; storages are read once and shared, so
// views keep sharing.
#include <cstring>
#include <unordered_map>

#include "glassbox/core/error.h"
#include "glassbox/io/serialize.h"
#include "glassbox/ops/factory.h"
#include "io/pickle.h"
#include "io/pt_reader.h"
#include "io/zip_reader.h"

namespace gb {
namespace {

using detail::PyObject;
using detail::PyRef;
using detail::str_cat;
using Kind = PyObject::Kind;

struct StorageType {
  const char* name;  // torch.<name>
  const char* python;
  bool supported;
  ScalarType type;
  int64_t itemsize;
};
constexpr StorageType kStorages[] = {
    {"FloatStorage", "torch.float32", true, kFloat, 4},
    {"DoubleStorage", "torch.float64", true, kDouble, 8},
    {"HalfStorage", "torch.float16", true, kHalf, 2},
    {"BFloat16Storage", "torch.bfloat16", true, kBFloat16, 2},
    {"LongStorage", "torch.int64", true, kLong, 8},
    {"IntStorage", "torch.int32", true, kInt, 4},
    {"BoolStorage", "torch.bool", true, kBool, 1},
    {"ShortStorage", "torch.int16", true, kShort, 2},
    {"CharStorage", "torch.int8", true, kChar, 1},
    {"ByteStorage", "torch.uint8", true, kByte, 1},
    {"ComplexFloatStorage", "torch.complex64", false, kBool, 8},
    {"ComplexDoubleStorage", "torch.complex128", false, kBool, 16},
    {"QInt8Storage", "torch.qint8", false, kBool, 1},
    {"QUInt8Storage", "torch.quint8", false, kBool, 1},
    {"QInt32Storage", "torch.qint32", false, kBool, 4},
};

const StorageType* find_storage(const std::string& name) {
  for (const auto& s : kStorages)
    if (name == s.name) return &s;
  return nullptr;
}

class PtLoader {
 public:
  PtLoader(const std::string& path, detail::ZipReader& zip, std::string prefix)
      : path_(path), zip_(zip), prefix_(std::move(prefix)) {}

  PyRef root(const std::string& pickle) {
    detail::Unpickler::Hooks hooks;
    hooks.find_class = [this](const std::string& m, const std::string& n) { return find_class(m, n); };
    hooks.persistent_load = [this](const PyRef& pid) { return persistent_load(pid); };
    hooks.reduce = [this](const PyRef& f, const PyRef& args) { return reduce(f, args); };
    hooks.build = [this](const PyRef& obj, const PyRef& state) { build(obj, state); };
    return detail::Unpickler(str_cat("gb::load_pt: '", path_, "' (", prefix_, "data.pkl)"), hooks).load(pickle);
  }

  StateDict run(const std::string& pickle) {
    PyRef root = this->root(pickle);
    if (root->kind == Kind::object && root->str == "module") {  // libtorch's torch::save(module): dotted names
      StateDict out;
      flatten(root, "", out);
      return out;
    }
    if (root->kind != Kind::dict)
      fail(str_cat("the file holds a ", root->kind_name(), ", not a state dict (an OrderedDict of tensors)"),
           "Save model.state_dict() rather than the model or a wrapper: torch.save(model.state_dict(), path)");
    StateDict out;
    for (const auto& [k, v] : root->pairs) {
      if (k->kind != Kind::string)
        fail(str_cat("a key is a ", k->kind_name(), ", not a string"), "Keys of a state dict are parameter names");
      if (v->kind != Kind::object || !v->tensor.defined()) {
        if (v->kind == Kind::object && !v->note.empty()) fail(str_cat("entry '", k->str, "' ", v->note), "");
        fail(str_cat("entry '", k->str, "' is a ", v->kind == Kind::dict ? "nested dict" : v->kind_name(),
                     ", not a tensor"),
             "gb::load_pt reads flat state dicts of tensors: save model.state_dict() (for a training checkpoint, "
             "save each state dict in its own file)");
      }
      GB_CHECK(!out.contains(k->str), "gb::load_pt: '", path_, "': the key '", k->str, "' appears twice");
      out.insert(k->str, v->tensor);
    }
    return out;
  }

 private:
  // A module object's tensors under dotted names (other attributes, such as numbers, are not state).
  void flatten(const PyRef& module, const std::string& prefix, StateDict& out) const {
    for (const auto& [k, v] : module->pairs) {
      if (v->kind != Kind::object) continue;
      if (v->str == "module") {
        flatten(v, prefix + k->str + ".", out);
        continue;
      }
      if (!v->tensor.defined()) fail(str_cat("entry '", prefix, k->str, "' ", v->note), "");
      GB_CHECK(!out.contains(prefix + k->str), "gb::load_pt: '", path_, "': the key '", prefix, k->str,
               "' appears twice");
      out.insert(prefix + k->str, v->tensor);
    }
  }

  [[noreturn]] void fail(const std::string& problem, const std::string& next) const {
    throw Error(str_cat("gb::load_pt: '", path_, "': ", problem, next.empty() ? "" : ". ", next));
  }

  PyRef find_class(const std::string& module, const std::string& name) {
    std::string full = module + "." + name;
    // the class of each object in libtorch's archives: __torch__.Module, __torch__.___torch_mangle_<k>.Module
    if ((module == "__torch__" || module.rfind("__torch__.", 0) == 0) && name == "Module") {
      PyRef g = PyObject::make(Kind::global);
      g->str = "torchscript.Module";
      return g;
    }
    // TorchScript's typed lists (libtorch archives): build_intlist([...]) and friends give the list itself
    if (module == "torch.jit._pickle" && name.rfind("build_", 0) == 0 && name.size() > 10 &&
        name.compare(name.size() - 4, 4, "list") == 0) {
      PyRef g = PyObject::make(Kind::global);
      g->str = "torchscript.list";
      return g;
    }
    bool ok = full == "collections.OrderedDict" || full == "torch._utils._rebuild_tensor_v2" ||
              full == "torch._utils._rebuild_parameter" || (module == "torch" && find_storage(name) != nullptr);
    if (!ok)
      fail(str_cat("the pickle refers to the global '", full, "', which gb::load_pt does not allow (it reads "
                   "tensors, OrderedDicts and storages only, and never runs code from a file)"),
           "Save a plain state dict of tensors: torch.save(model.state_dict(), path)");
    PyRef g = PyObject::make(Kind::global);
    g->str = full;
    return g;
  }

  // ('storage', torch.FloatStorage, key, location, numel) -> an object holding the storage as a 1-D tensor.
  PyRef persistent_load(const PyRef& pid) {
    auto& t = pid->items;
    if (pid->kind != Kind::tuple || t.size() != 5 || t[0]->kind != Kind::string || t[0]->str != "storage" ||
        t[1]->kind != Kind::global || t[2]->kind != Kind::string || t[4]->kind != Kind::integer)
      fail("a persistent id is not ('storage', type, key, location, numel)", "The file is damaged; save it again");
    const std::string& key = t[2]->str;
    const StorageType* st = find_storage(t[1]->str.substr(t[1]->str.rfind('.') + 1));
    if (st == nullptr) fail("storage '" + key + "' has the type " + t[1]->str, "The file is damaged; save it again");
    PyRef obj = PyObject::make(Kind::object);
    obj->str = "storage";
    if (!st->supported) {
      obj->note = str_cat("has dtype ", st->python, ", which glassbox does not support (it has float32, float64, "
                          "float16, bfloat16, int64, int32, int16, int8, uint8, bool). Convert it in Python before "
                          "saving, e.g. sd[name] = sd[name].to(torch.float32)");
      return obj;
    }
    int64_t numel = t[4]->integer;
    auto it = storages_.find(key);
    if (it != storages_.end()) {
      if (it->second.scalar_type() != st->type || it->second.numel() != numel)
        fail("storage '" + key + "' is used with two different types or sizes", "The file is damaged; save it again");
      obj->tensor = it->second;
      return obj;
    }
    const detail::ZipReader::Entry* e = zip_.find(prefix_ + "data/" + key);
    if (e == nullptr) fail("storage '" + key + "' has no entry " + prefix_ + "data/" + key, "The file is damaged or "
                           "was cut short; save it again");
    if (numel < 0 || uint64_t(numel) > e->size / uint64_t(st->itemsize))
      fail(str_cat("storage '", key, "' claims ", numel, " elements of ", st->python, " but its entry has ", e->size,
                   " bytes"), "The file is damaged; save it again");
    Tensor s = empty({numel}, TensorOptions().dtype(st->type));
    zip_.read_into(*e, s.data_ptr(), uint64_t(numel) * uint64_t(st->itemsize));
    if (st->type == kBool) {  // any nonzero byte is true; other values than 0/1 are undefined in a C++ bool
      auto* p = static_cast<unsigned char*>(s.data_ptr());
      for (int64_t i = 0; i < numel; ++i) p[i] = p[i] != 0;
    }
    storages_.emplace(key, s);
    obj->tensor = s;
    return obj;
  }

  std::vector<int64_t> int_tuple(const PyRef& v, const char* what) const {
    if (v->kind != Kind::tuple) fail(str_cat("a tensor's ", what, " is a ", v->kind_name(), ", not a tuple"), "The file is damaged; save it again");
    std::vector<int64_t> out;
    for (const auto& i : v->items) {
      if (i->kind != Kind::integer || i->integer < 0)
        fail(str_cat("a tensor's ", what, " holds a ", i->kind_name(), " that is not a non-negative int"),
             "The file is damaged; save it again");
      out.push_back(i->integer);
    }
    return out;
  }

  PyRef reduce(const PyRef& f, const PyRef& args) {
    const auto& a = args->items;
    if (f->kind == Kind::global && f->str == "torchscript.Module") {  // NEWOBJ: its attributes come with BUILD
      if (!a.empty()) fail("a TorchScript module object is built with arguments", "The file is damaged; save it again");
      PyRef m = PyObject::make(Kind::object);
      m->str = "module";
      return m;
    }
    if (f->kind == Kind::global && f->str == "torchscript.list") {
      if (a.size() != 1 || a[0]->kind != Kind::list) fail("a TorchScript list is built from something else than a list", "The file is damaged; save it again");
      return a[0];
    }
    if (f->kind == Kind::global && f->str == "collections.OrderedDict") {
      if (!a.empty()) fail("OrderedDict is built with arguments", "Save a plain state dict");
      return PyObject::make(Kind::dict);
    }
    if (f->kind == Kind::global && f->str == "torch._utils._rebuild_parameter") {
      if (a.size() < 2 || a[0]->kind != Kind::object) fail("a Parameter is rebuilt from something else than a tensor", "The file is damaged; save it again");
      return a[0];
    }
    if (f->kind != Kind::global || f->str != "torch._utils._rebuild_tensor_v2")
      fail(str_cat("the pickle calls a ", f->kind_name(), " ", f->str), "Save a plain state dict of tensors");
    if (a.size() < 6 || a[0]->kind != Kind::object || a[0]->str != "storage" || a[1]->kind != Kind::integer)
      fail("_rebuild_tensor_v2 gets arguments other than (storage, offset, size, stride, requires_grad, hooks)",
           "The file is damaged; save it again");
    PyRef out = PyObject::make(Kind::object);
    out->str = "tensor";
    if (!a[0]->tensor.defined()) {  // an unsupported dtype: reported with the entry's name
      out->note = a[0]->note;
      return out;
    }
    const Tensor& storage = a[0]->tensor;
    int64_t offset = a[1]->integer;
    std::vector<int64_t> size = int_tuple(a[2], "size"), stride = int_tuple(a[3], "stride");
    if (size.size() != stride.size()) fail("a tensor's size and stride differ in length", "The file is damaged; save it again");
    // The view must lie inside its storage; checked with 128-bit sums so damaged numbers cannot overflow.
    __int128 last = offset;
    bool empty_view = false;
    for (size_t d = 0; d < size.size(); ++d) {
      if (size[d] == 0) empty_view = true;
      last += __int128(size[d] - 1) * stride[d];
    }
    if (offset < 0 || (!empty_view && (last >= storage.numel() || last < 0)))
      fail(str_cat("a tensor of size ", IntArrayRef(size), ", stride ", IntArrayRef(stride), " at offset ", offset,
                   " reaches past its storage of ", storage.numel(), " elements"), "The file is damaged; save it again");
    out->tensor = storage.as_strided(size, stride, empty_view ? 0 : offset);
    return out;
  }

  void build(const PyRef& obj, const PyRef& state) {
    // An OrderedDict's instance attributes (state_dict()'s `_metadata` of module versions): not needed here.
    if (obj->kind == Kind::dict && (state->kind == Kind::dict || state->kind == Kind::none)) return;
    if (obj->kind == Kind::object && obj->str == "module" && state->kind == Kind::dict && obj->pairs.empty()) {
      for (const auto& [k, v] : state->pairs)
        if (k->kind != Kind::string) fail(str_cat("a module attribute's name is a ", k->kind_name()), "The file is damaged; save it again");
      obj->pairs = state->pairs;
      return;
    }
    fail(str_cat("the pickle sets the state of a ", obj->kind_name()), "Save a plain state dict of tensors");
  }

  const std::string& path_;
  detail::ZipReader& zip_;
  std::string prefix_;
  std::unordered_map<std::string, Tensor> storages_;
};

}  // namespace

namespace {

// Opens a PyTorch zip and hands its data.pkl to f(loader, pickle bytes).
template <typename F>
auto with_pt_pickle(const std::string& path, F&& f) {
  using detail::str_cat;
  unsigned char magic[4] = {0, 0, 0, 0};
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    size_t got = std::fread(magic, 1, 4, f);
    std::fclose(f);
    if (got == 4 && std::memcmp(magic, "\x80\x02\x8a\x0a", 4) == 0)
      throw Error(str_cat("gb::load_pt: '", path, "' was written in torch.save's legacy format (PyTorch < 1.6, or "
                          "_use_new_zipfile_serialization=False), which glassbox does not read. Re-save it in Python "
                          "with the zip format: torch.save(torch.load(path), new_path)"));
    if (got < 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0)
      throw Error(str_cat("gb::load_pt: '", path, "' is not a PyTorch file (no zip signature at its start). "
                          "gb::load reads safetensors and torch.save's zip format"));
  }
  detail::ZipReader zip(path);
  const detail::ZipReader::Entry* pkl = nullptr;
  for (const auto& e : zip.entries()) {
    size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      pkl = &e;
      break;
    }
  }
  GB_CHECK(pkl != nullptr, "gb::load_pt: '", path, "' is a zip without <archive>/data.pkl, so not a torch.save file. "
           "Save the state dict with torch.save(model.state_dict(), path)");
  std::string prefix = pkl->name.substr(0, pkl->name.size() - std::strlen("data.pkl"));
  if (const auto* bo = zip.find(prefix + "byteorder")) {
    std::string order = zip.read(*bo);
    GB_CHECK(order == "little", "gb::load_pt: '", path, "' stores its tensors ", order,
             "-endian; glassbox reads little-endian files. Save it on a little-endian machine");
  }
  GB_CHECK(pkl->size <= (uint64_t(1) << 30), "gb::load_pt: '", path, "': data.pkl is ", pkl->size,
           " bytes, far more than a state dict needs; the file is damaged");
  PtLoader loader(path, zip, prefix);
  return f(loader, zip.read(*pkl));
}

}  // namespace

namespace detail {
PyRef read_pt_pickle(const std::string& path) {
  return with_pt_pickle(path, [](PtLoader& loader, const std::string& pickle) { return loader.root(pickle); });
}
}  // namespace detail

StateDict load_pt(const std::string& path, std::optional<Device> map_location) {
  StateDict sd =
      with_pt_pickle(path, [](PtLoader& loader, const std::string& pickle) { return loader.run(pickle); });
  if (map_location)
    for (auto& item : sd)
      if (item.value().device() != *map_location) item.value() = item.value().to(*map_location);
  return sd;
}

}  // namespace gb
