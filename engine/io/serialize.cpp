// engine/io/serialize.cpp — gb::save / gb::load: the format read from the first bytes, module conveniences and
// strip_prefix. The formats themselves live in safetensors.cpp and pt_import.cpp.
#include "glassbox/io/serialize.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "glassbox/io/archive.h"
#include "glassbox/optim/optimizer.h"
#include "io/safetensors.h"

namespace gb {

void save(const StateDict& state_dict, const std::string& path, const Metadata& metadata) {
  detail::save_safetensors(state_dict, path, metadata);
}

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The file's first 4 bytes (fewer for a shorter file); an unopenable path is an error naming it.
std::string magic_of(const std::string& path) {
  char magic[4] = {0, 0, 0, 0};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    throw Error(detail::str_cat("gb::load: cannot open '", path, "' (", std::strerror(err), "); check the path"));
  }
  size_t got = std::fread(magic, 1, 4, f);
  std::fclose(f);
  return std::string(magic, got);
}

// A zip's signature first: PyTorch's formats (torch.save since 1.6, libtorch's archives), as opposed to safetensors.
bool is_zip(const std::string& path) { return magic_of(path) == std::string("PK\x03\x04", 4); }
}  // namespace

void save(ModuleRef module, const std::string& path, const Metadata& metadata) {
  if (ends_with(path, ".safetensors") || !metadata.empty()) {
    detail::save_safetensors(module->state_dict(), path, metadata);
    return;
  }
  serialize::OutputArchive archive;
  module->save(archive);
  archive.save_to(path);
}

StateDict load(const std::string& path, std::optional<Device> map_location) {
  const std::string magic = magic_of(path);
  // A zip is PyTorch's format since 1.6; pickle's magic first is the legacy torch.save format, which
  // load_pt explains. Anything else is read as safetensors (whose first byte is the header length's low byte).
  if (magic == std::string("PK\x03\x04", 4)) return load_pt(path, map_location);
  // Legacy files start with pickle's PROTO 2 and the 10-byte LONG1 magic number; as a safetensors header length
  // those bytes would mean more than 100 MB of header, which the format does not allow.
  if (magic == std::string("\x80\x02\x8a\x0a", 4)) return load_pt(path, map_location);
  return detail::load_safetensors(path, map_location, nullptr);
}

nn::IncompatibleKeys load(ModuleRef module, const std::string& path, bool strict, std::optional<Device> map_location) {
  return module->load_state_dict(load(path, map_location), strict);
}

namespace {

constexpr const char* kKindKey = "glassbox.kind";

// The file's entries, checked to be of `kind` (what gb::save wrote for a tensor, tensors or an optimizer).
StateDict load_kind(const std::string& path, std::optional<Device> device, const std::string& kind, const char* what) {
  Metadata md;
  StateDict sd = detail::load_safetensors(path, device, &md);
  auto it = md.find(kKindKey);
  const std::string found = it == md.end() ? std::string() : it->second;
  GB_CHECK(found == kind, "gb::load(", what, ", \"", path, "\"): the file holds ",
           found.empty() ? std::string("a state dict (") + std::to_string(sd.size()) + " tensors)"
                         : "a saved " + found,
           ", not a saved ", kind,
           found.empty() ? "; read it with gb::load(path), or load it into a module with gb::load(module, path)"
                         : "; load it as what it is");
  return sd;
}

}  // namespace

void save(const Tensor& tensor, const std::string& path) {
  GB_CHECK(tensor.defined(), "gb::save: the tensor is undefined; nothing to save to '", path, "'");
  serialize::OutputArchive archive;  // libtorch's: the tensor under the key "0"
  archive.write("0", tensor);
  archive.save_to(path);
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  serialize::OutputArchive archive;  // libtorch's: "0", "1", ...
  for (size_t i = 0; i < tensors.size(); ++i) {
    GB_CHECK(tensors[i].defined(), "gb::save: tensor ", i, " of ", tensors.size(), " is undefined; nothing was written to '",
             path, "'");
    archive.write(std::to_string(i), tensors[i]);
  }
  archive.save_to(path);
}

void save(const optim::Optimizer& optimizer, const std::string& path) {
  detail::save_safetensors(optimizer.state_dict(), path, {{kKindKey, "optimizer"}});
}

void load(Tensor& tensor, const std::string& path, std::optional<Device> device) {
  if (is_zip(path)) {
    serialize::InputArchive archive;
    archive.load_from(path, device);
    const auto keys = archive.keys();
    std::string listed;
    for (const auto& k : keys) listed += (listed.empty() ? "" : ", ") + k;
    GB_CHECK(!(keys.size() > 1 && keys[0] == "0"), "gb::load(tensor, \"", path, "\"): the archive holds a list of ",
             keys.size(), " tensors; load it into a std::vector<gb::Tensor>");
    GB_CHECK(keys.size() == 1 && keys[0] == "0", "gb::load(tensor, \"", path, "\"): the archive holds the keys [",
             listed, "], not one saved tensor (\"0\"); read it with gb::load(path) or a gb::serialize::InputArchive");
    Tensor t;
    archive.read("0", t);
    tensor = t;
    return;
  }
  StateDict sd = load_kind(path, device, "tensor", "tensor");
  GB_CHECK(sd.size() == 1 && sd.contains("tensor"), "gb::load(tensor, \"", path,
           "\"): the file says it holds a tensor but has ", sd.size(), " entries; it was not written by gb::save");
  tensor = sd["tensor"];
}

void load(std::vector<Tensor>& tensors, const std::string& path, std::optional<Device> device) {
  if (is_zip(path)) {  // libtorch's loop: "0", "1", ... while present
    serialize::InputArchive archive;
    archive.load_from(path, device);
    std::vector<Tensor> out;
    Tensor t;
    while (archive.try_read(std::to_string(out.size()), t)) {
      out.push_back(t);
      t = Tensor();
    }
    GB_CHECK(out.size() == archive.keys().size(), "gb::load(tensors, \"", path, "\"): the archive holds ",
             archive.keys().size(), " keys but only ", out.size(), " are the tensors \"0\", \"1\", ...; read it "
             "with an InputArchive");
    tensors = std::move(out);
    return;
  }
  StateDict sd = load_kind(path, device, "tensors", "tensors");
  std::vector<Tensor> out;
  for (size_t i = 0; i < sd.size(); ++i) {
    GB_CHECK(sd.contains(std::to_string(i)), "gb::load(tensors, \"", path, "\"): entry ", i,
             " is missing; the file was not written by gb::save");
    out.push_back(sd[std::to_string(i)]);
  }
  tensors = std::move(out);
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  optimizer.load_state_dict(load_kind(path, std::nullopt, "optimizer", "optimizer"));
}

Metadata load_metadata(const std::string& path) { return detail::load_safetensors_metadata(path); }

StateDict strip_prefix(const StateDict& state_dict, const std::string& prefix) {
  StateDict out;
  out.reserve(state_dict.size());
  for (const auto& item : state_dict) {
    const std::string& k = item.key();
    bool has = !prefix.empty() && k.compare(0, prefix.size(), prefix) == 0;
    std::string name = has ? k.substr(prefix.size()) : k;
    GB_CHECK(!out.contains(name), "strip_prefix: removing '", prefix, "' from '", k, "' gives '", name,
             "', which the state dict already has; the dict mixes prefixed and plain copies of the same entry");
    out.insert(name, item.value());
  }
  return out;
}

}  // namespace gb
