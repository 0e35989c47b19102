// engine/io/safetensors.cpp — the safetensors format: the header written byte for byte as the reference
// implementation does (compact JSON, "__metadata__" first, dtype/shape/data_offsets, space padding to 8), and a
// reader that validates every field, offset and length before it makes a tensor.
#include "io/safetensors.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "glassbox/core/error.h"
#include "glassbox/ops/factory.h"
#include "io/atomic_file.h"

namespace gb::detail {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

using Json = nlohmann::ordered_json;

// The header may not exceed this (the reference implementation's limit), so a damaged length cannot ask for a
// huge allocation.
constexpr uint64_t kMaxHeader = 100'000'000;

struct DtypeInfo {
  const char* name;
  int64_t itemsize;
  bool supported;
  ScalarType type;
};
// Every dtype of the format; glassbox holds the ones marked supported.
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", 1, true, kBool},       {"U8", 1, true, kUInt8},      {"I8", 1, true, kInt8},
    {"I16", 2, true, kInt16},       {"U16", 2, false, kBool},     {"F16", 2, true, kHalf},
    {"BF16", 2, true, kBFloat16},   {"I32", 4, true, kInt},       {"U32", 4, false, kBool},
    {"F32", 4, true, kFloat},       {"F64", 8, true, kDouble},    {"I64", 8, true, kLong},
    {"U64", 8, false, kBool},       {"F8_E4M3", 1, false, kBool}, {"F8_E5M2", 1, false, kBool},
    {"C64", 8, false, kBool},
};

const char* dtype_name(ScalarType t) {
  for (const auto& d : kDtypes)
    if (d.supported && d.type == t) return d.name;
  GB_ASSERT(false, "no safetensors name for ", to_string(t));
  return "";
}

const DtypeInfo* find_dtype(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

const char* kRewrite = "The file is damaged or was not written as safetensors; write it again (gb::save, or "
                       "safetensors.torch.save_file in Python)";

[[noreturn]] void bad(const std::string& path, const std::string& problem, const char* next = kRewrite) {
  throw Error(str_cat("gb::load: '", path, "' is not a valid safetensors file: ", problem, ". ", next));
}

struct Entry {
  std::string name;
  ScalarType type;
  int64_t itemsize;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

struct Header {
  std::vector<Entry> entries;
  Metadata metadata;
  uint64_t data_start = 0;  // 8 + N
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_for_read(const std::string& path, uint64_t& size) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    throw Error(str_cat("gb::load: cannot open '", path, "' (", std::strerror(err), "); check the path"));
  }
  File file(f);
  struct stat st {};
  GB_CHECK(::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode), "gb::load: '", path,
           "' is not a regular file; pass the path of a saved file");
  size = uint64_t(st.st_size);
  return file;
}

void read_exact(std::FILE* f, const std::string& path, uint64_t at, void* out, uint64_t n) {
  if (n == 0) return;
  errno = 0;
  GB_CHECK(::fseeko(f, off_t(at), SEEK_SET) == 0 && std::fread(out, 1, n, f) == n, "gb::load: reading ", n,
           " bytes at offset ", at, " of '", path, "' failed (",
           errno != 0 ? std::strerror(errno) : "the file ended early",
           "); the file changed while it was read or the disk has an error; try again");
}

// A JSON value for a message: primitives and short flat lists as written, anything else by its type (a damaged
// header may nest deeply, and dump() recurses).
std::string describe(const Json& v) {
  if (v.is_primitive()) return v.dump();
  if (v.is_array() && v.size() <= 16 && std::all_of(v.begin(), v.end(), [](const Json& x) { return x.is_primitive(); }))
    return v.dump();
  return str_cat("a JSON ", v.type_name(), " of ", v.size(), " items");
}

uint64_t json_uint(const std::string& path, const Json& v, const std::string& what) {
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
    bad(path, what + " is " + describe(v) + ", not a non-negative integer");
  return v.get<uint64_t>();
}

Entry parse_entry(const std::string& path, const std::string& name, const Json& v) {
  std::string where = "tensor '" + name + "'";
  if (!v.is_object()) bad(path, where + " is described by " + std::string(v.type_name()) + ", not an object");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!v.contains(field)) bad(path, where + " has no \"" + field + "\" field");
  const Json& dt = v["dtype"];
  if (!dt.is_string()) bad(path, where + " has dtype " + describe(dt) + ", not a string");
  const DtypeInfo* info = find_dtype(dt.get<std::string>());
  if (info == nullptr) bad(path, where + " has the unknown dtype " + dt.dump());
  if (!info->supported)
    throw Error(str_cat("gb::load: '", path, "': ", where, " has dtype ", info->name,
                        ", which glassbox does not support (it has BOOL, U8, I8, I16, I32, I64, F16, BF16, F32, F64). Convert it "
                        "where it was written, e.g. in Python: sd[name] = sd[name].to(torch.int32), then save again"));
  Entry e{name, info->type, info->itemsize, {}, 0, 0};
  const Json& shape = v["shape"];
  if (!shape.is_array()) bad(path, where + " has shape " + describe(shape) + ", not a list of sizes");
  uint64_t numel = 1;
  for (const auto& s : shape) {
    uint64_t n = json_uint(path, s, where + "'s shape entry");
    if (n > (uint64_t(1) << 62) || (n != 0 && numel > (uint64_t(1) << 62) / n))
      bad(path, where + " has shape " + shape.dump() + ", too large to be real");
    numel *= n;
    e.shape.push_back(int64_t(n));
  }
  const Json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2) bad(path, where + " has data_offsets " + describe(off) + ", not [begin, end]");
  e.begin = json_uint(path, off[0], where + "'s data_offsets begin");
  e.end = json_uint(path, off[1], where + "'s data_offsets end");
  if (e.end < e.begin) bad(path, where + " has data_offsets " + off.dump() + " with end before begin");
  if (numel * uint64_t(info->itemsize) != e.end - e.begin)
    bad(path, str_cat(where, " has shape ", shape.dump(), " of ", info->name, " (", numel * info->itemsize,
                      " bytes) but data_offsets ", off.dump(), " span ", e.end - e.begin, " bytes"));
  return e;
}

// Reads and checks the header: after this, every entry's bytes lie inside the file, entries tile the buffer
// exactly, and the file ends where the buffer ends.
Header read_header(std::FILE* f, const std::string& path, uint64_t file_size) {
  if (file_size < 8)
    bad(path, str_cat("the file is ", file_size, " bytes, shorter than the 8-byte header length it must start with"));
  unsigned char len_bytes[8];
  read_exact(f, path, 0, len_bytes, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > file_size - 8)
    bad(path, str_cat("the header length (bytes 0-7) is ", n, " but only ", file_size - 8,
                      " bytes follow; the file was cut short or is not safetensors"));
  if (n > kMaxHeader) bad(path, str_cat("the header length is ", n, " bytes, above the format's limit of ", kMaxHeader));
  std::string text(n, '\0');
  read_exact(f, path, 8, text.data(), n);

  // Top-level keys are collected while parsing: nlohmann keeps only one of a duplicated key.
  std::vector<std::string> dup;
  std::unordered_map<std::string, int> seen;
  Json::parser_callback_t cb = [&](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1) {
      const auto& k = parsed.get_ref<const std::string&>();
      if (seen[k]++ == 1) dup.push_back(k);
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(text, cb);
  } catch (const nlohmann::json::exception& e) {
    bad(path, std::string("the header (bytes 8-") + std::to_string(8 + n) + ") is not valid JSON: " + e.what());
  }
  if (!header.is_object()) bad(path, std::string("the header is a JSON ") + header.type_name() + ", not an object");
  if (!dup.empty()) bad(path, "the name '" + dup.front() + "' appears twice in the header");

  Header h;
  h.data_start = 8 + n;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) bad(path, std::string("\"__metadata__\" is a JSON ") + value.type_name() + ", not an object");
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string()) bad(path, "metadata '" + mk + "' is " + describe(mv) + ", not a string");
        h.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    h.entries.push_back(parse_entry(path, key, value));
  }

  uint64_t buffer = file_size - h.data_start;
  for (const auto& e : h.entries)
    if (e.end > buffer)
      bad(path, str_cat("tensor '", e.name, "' has data_offsets [", e.begin, ", ", e.end, "] past the end of the data (",
                        buffer, " bytes); the file was cut short"));
  std::vector<const Entry*> by_offset;
  for (const auto& e : h.entries) by_offset.push_back(&e);
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [](const Entry* a, const Entry* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
  uint64_t covered = 0;
  const Entry* prev = nullptr;
  for (const Entry* e : by_offset) {
    if (e->begin < covered)
      bad(path, str_cat("tensor '", e->name, "' (bytes ", e->begin, "-", e->end, ") overlaps tensor '", prev->name,
                        "' (bytes ", prev->begin, "-", prev->end, ")"));
    if (e->begin > covered)
      bad(path, str_cat("the data has a gap at bytes ", covered, "-", e->begin, " before tensor '", e->name,
                        "' (the format requires the tensors to cover the data exactly)"));
    covered = e->end;
    prev = e;
  }
  if (covered != buffer)
    bad(path, str_cat(buffer - covered, " bytes follow the last tensor's data (data offset ", covered,
                      ", file offset ", h.data_start + covered, "); the file has trailing garbage or a lost entry"));
  return h;
}

}  // namespace

void save_safetensors(const StateDict& state_dict, const std::string& path, const Metadata& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json md = Json::object();
    for (const auto& [k, v] : metadata) md[k] = v;
    header["__metadata__"] = std::move(md);
  }
  uint64_t offset = 0;
  for (const auto& item : state_dict) {
    const std::string& name = item.key();
    const Tensor& t = item.value();
    GB_CHECK(name != "__metadata__", "gb::save: '", path, "': a tensor cannot be named \"__metadata__\" (the format "
             "reserves it); rename the entry");
    GB_CHECK(t.defined(), "gb::save: '", path, "': tensor '", name, "' is undefined; remove it from the state dict");
    GB_CHECK(!t.is_meta(), "gb::save: '", path, "': tensor '", name, "' is on the meta device and has no data; "
             "materialize the model on the CPU or a GPU before saving");
    uint64_t nbytes = uint64_t(t.numel()) * uint64_t(t.element_size());
    Json entry = Json::object();
    entry["dtype"] = dtype_name(t.scalar_type());
    entry["shape"] = Json::array();
    for (int64_t s : t.sizes()) entry["shape"].push_back(s);
    entry["data_offsets"] = Json::array({offset, offset + nbytes});
    header[name] = std::move(entry);
    offset += nbytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw Error(str_cat("gb::save: '", path, "': a tensor name or metadata string is not valid UTF-8 (", e.what(),
                        "); use UTF-8 names"));
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = (uint64_t(text.size()) >> (8 * i)) & 0xff;

  AtomicFile out(path);
  out.write(len_bytes, 8);
  out.write(text.data(), text.size());
  for (const auto& item : state_dict) {
    // One tensor at a time on the CPU, contiguous: a GPU model never needs a second full copy in host memory.
    Tensor c = item.value().detach();
    if (!c.is_cpu()) c = c.cpu();
    c = c.contiguous();
    out.write(c.data_ptr(), size_t(c.numel() * c.element_size()));
  }
  out.commit();
}

StateDict load_safetensors(const std::string& path, std::optional<Device> map_location, Metadata* metadata) {
  uint64_t size = 0;
  File f = open_for_read(path, size);
  Header h = read_header(f.get(), path, size);
  StateDict out;
  out.reserve(h.entries.size());
  for (const auto& e : h.entries) {
    Tensor t = empty(e.shape, TensorOptions().dtype(e.type));
    read_exact(f.get(), path, h.data_start + e.begin, t.data_ptr(), e.end - e.begin);
    if (e.type == kBool) {
      // A bool byte other than 0/1 is undefined behaviour in C++: any nonzero byte reads as true.
      auto* p = static_cast<unsigned char*>(t.data_ptr());
      for (uint64_t i = 0; i < e.end - e.begin; ++i) p[i] = p[i] != 0;
    }
    if (map_location && *map_location != t.device()) t = t.to(*map_location);
    out.insert(e.name, std::move(t));
  }
  if (metadata != nullptr) *metadata = std::move(h.metadata);
  return out;
}

Metadata load_safetensors_metadata(const std::string& path) {
  uint64_t size = 0;
  File f = open_for_read(path, size);
  return read_header(f.get(), path, size).metadata;
}

}  // namespace gb::detail
