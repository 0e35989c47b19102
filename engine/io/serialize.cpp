// engine/io/serialize.cpp — gb::save / gb::load: the format read from the first bytes, module conveniences and
// strip_prefix. The formats themselves live in safetensors.cpp and pt_import.cpp.
#include "glassbox/io/serialize.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/safetensors.h"

namespace gb {

void save(const StateDict& state_dict, const std::string& path, const Metadata& metadata) {
  detail::save_safetensors(state_dict, path, metadata);
}

void save(ModuleRef module, const std::string& path, const Metadata& metadata) {
  detail::save_safetensors(module->state_dict(), path, metadata);
}

StateDict load(const std::string& path, std::optional<Device> map_location) {
  unsigned char magic[4] = {0, 0, 0, 0};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    throw Error(detail::str_cat("gb::load: cannot open '", path, "' (", std::strerror(err), "); check the path"));
  }
  size_t got = std::fread(magic, 1, 4, f);
  std::fclose(f);
  // A zip is PyTorch's format since 1.6; pickle's magic first is the legacy torch.save format, which
  // load_pt explains. Anything else is read as safetensors (whose first byte is the header length's low byte).
  if (got == 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0) return load_pt(path, map_location);
  // Legacy files start with pickle's PROTO 2 and the 10-byte LONG1 magic number; as a safetensors header length
  // those bytes would mean more than 100 MB of header, which the format does not allow.
  if (got == 4 && std::memcmp(magic, "\x80\x02\x8a\x0a", 4) == 0) return load_pt(path, map_location);
  return detail::load_safetensors(path, map_location, nullptr);
}

nn::IncompatibleKeys load(ModuleRef module, const std::string& path, bool strict, std::optional<Device> map_location) {
  return module->load_state_dict(load(path, map_location), strict);
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
