// glassbox/io/serialize.h — saving and loading state dicts: safetensors files (read and written) and PyTorch .pt
// files (read only).
//
//   gb::save(net->state_dict(), "net.safetensors", {{"epoch", "3"}});   // or gb::save(net, "net.safetensors")
//   gb::StateDict sd = gb::load("net.safetensors");                     // a .pt from torch.save works too
//   auto missing = gb::load(net, "model.pt", /*strict=*/false);          // IncompatibleKeys, like PyTorch's
//   net->load_state_dict(gb::strip_prefix(gb::load("ddp.pt")));          // drop DataParallel's "module."
//   gb::save(optimizer, "opt.pt"); gb::load(optimizer, "opt.pt");       // libtorch's spellings, also for tensors
//
// The safetensors file (the published format): an 8-byte little-endian header length N, N bytes of JSON
// {"__metadata__": {str: str}, "name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...} padded
// with spaces to a multiple of 8, then the tensors' bytes, in state-dict order, back to back. Tensors are written
// contiguous, little endian, from the CPU (CUDA tensors are copied over). dtypes: BOOL, U8, I8, I16, I32, I64, F16,
// BF16, F32, F64 (the others of the format — U16, U32, F8, ... — are refused with a message saying how to convert).
//
// Writes are atomic: the bytes go to `<path>.tmp-<pid>` in the same folder, are fsync'ed, then renamed over path
// (and the folder fsync'ed). A crash or a full disk leaves the previous file as it was; errors are gb::Error
// naming the path and the system's reason.
//
// Reads validate the whole header before making any tensor (lengths, JSON, every field, dtypes, sizes against
// offsets, offsets covering the buffer exactly, no duplicate names, nothing after the buffer): a damaged file is a
// gb::Error naming the file, the tensor or offset and what to do, never a crash or a half-filled StateDict.
// load() reads the format from the first bytes: a zip ("PK\3\4") is a PyTorch .pt file (see load_pt), anything
// else safetensors. map_location moves every tensor to that device after reading (PyTorch's map_location).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "glassbox/core/device.h"
#include "glassbox/nn/module.h"
#include "glassbox/nn/ordered_dict.h"
#include "glassbox/nn/pimpl.h"

namespace gb {

namespace optim {
class Optimizer;
}

using Metadata = std::map<std::string, std::string>;

// A module passed by reference, holder (gb::nn::Linear, a GB_MODULE type) or shared_ptr.
class ModuleRef {
 public:
  ModuleRef(nn::Module& module) : module_(&module) {}  // NOLINT
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<nn::Module, M>>>
  ModuleRef(const std::shared_ptr<M>& module) : module_(module.get()) {  // NOLINT
    GB_CHECK(module_ != nullptr, "gb::save/gb::load: the module pointer is null; construct the module first");
  }
  template <typename Impl>
  ModuleRef(const nn::ModuleHolder<Impl>& holder) : module_(holder.ptr().get()) {}  // NOLINT
  nn::Module& operator*() const { return *module_; }
  nn::Module* operator->() const { return module_; }

 private:
  nn::Module* module_;
};

// Writes `state_dict` as one safetensors file (atomically); metadata goes to "__metadata__".
void save(const StateDict& state_dict, const std::string& path, const Metadata& metadata = {});
// The module: to a path ending in ".safetensors" (or with metadata), its state_dict() as safetensors; to any other
// path (libtorch's torch::save(model, "model.pt")), libtorch's archive of it (Module::save; glassbox/io/archive.h),
// which libtorch's torch::load reads. gb::load reads both back.
void save(ModuleRef module, const std::string& path, const Metadata& metadata = {});

// Reads a safetensors file or a PyTorch .pt (zip) file — torch.save's state dict, or libtorch's archive of a module
// (torch::save(model, path)) with its tensors under dotted names ("0.weight") — in the file's order.
StateDict load(const std::string& path, std::optional<Device> map_location = std::nullopt);
// Reads the file into module->load_state_dict(sd, strict): what strict=false left out is returned.
nn::IncompatibleKeys load(ModuleRef module, const std::string& path, bool strict = true,
                          std::optional<Device> map_location = std::nullopt);
// libtorch's torch::save / torch::load of a tensor and a list of tensors, in libtorch's archive format (keys "0",
// "1", ...: libtorch reads these files and writes ones that load here), and of an optimizer's state, which is
// glassbox's own safetensors file ("glassbox.kind": optimizer; libtorch's optimizer archives hold lists and dicts
// glassbox does not read: see docs/PORTING.md). Tensor files glassbox wrote as safetensors before still load. A
// file of another kind is refused by name. A tensor is assigned (the old one is not written into), an optimizer's
// state loaded through load_state_dict (its checks).
void save(const Tensor& tensor, const std::string& path);
void save(const std::vector<Tensor>& tensors, const std::string& path);
void save(const optim::Optimizer& optimizer, const std::string& path);
void load(Tensor& tensor, const std::string& path, std::optional<Device> device = std::nullopt);
void load(std::vector<Tensor>& tensors, const std::string& path, std::optional<Device> device = std::nullopt);
void load(optim::Optimizer& optimizer, const std::string& path);

// A safetensors file's "__metadata__" (empty when it has none); the header is validated as load() does.
Metadata load_metadata(const std::string& path);

// Reads what `torch.save(model.state_dict(), path)` writes (PyTorch >= 1.6's zip format): an OrderedDict (or dict)
// of tensors, views sharing a storage kept as views. Only plain tensors and the pickle globals that describe them
// are accepted; anything else is refused by name, and no code from the file is ever run.
StateDict load_pt(const std::string& path, std::optional<Device> map_location = std::nullopt);

// PyTorch's consume_prefix_in_state_dict_if_present: a copy where keys starting with `prefix` lose it (the others
// are kept as they are), e.g. the "module." nn.DataParallel and DDP add.
StateDict strip_prefix(const StateDict& state_dict, const std::string& prefix = "module.");

}  // namespace gb
