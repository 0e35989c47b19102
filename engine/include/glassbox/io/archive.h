// glassbox/io/archive.h — libtorch's serialize::OutputArchive / InputArchive, in libtorch's own file format, so files
// written here load in libtorch (torch::load, torch::jit::load) and files libtorch wrote load here.
//
//   gb::serialize::OutputArchive archive;
//   archive.write("weights", w);                      // a tensor (is_buffer=true marks a buffer)
//   archive.write("epoch", gb::IValue(int64_t(3)));   // a number, bool or string
//   gb::serialize::OutputArchive head;  head.write("b", b);
//   archive.write("head", head);                      // a nested archive
//   archive.save_to("ckpt.pt");
//
//   gb::serialize::InputArchive in;
//   in.load_from("ckpt.pt");                          // or load_from(path, gb::Device(...))
//   gb::Tensor w2; in.read("weights", w2);  gb::IValue e; in.read("epoch", e);  e.toInt();
//
// The format is TorchScript's module archive, as libtorch 1.13 writes it: a zip (entries stored, data 64-byte
// aligned) under one folder holding data.pkl (a pickle, protocol 2, of a __torch__.Module object whose attributes
// are the written keys: tensors through torch._utils._rebuild_tensor_v2 with each storage in data/<n>, nested
// archives as objects of classes __torch__.___torch_mangle_<k>.Module), code/ (each class's TorchScript
// declaration: __parameters__, __buffers__ and typed attributes, which libtorch compiles when it loads), constants.pkl
// and version. Values: tensors (any glassbox dtype; CUDA ones are written from the host), int, float, bool, str and
// nested archives; a libtorch file holding other kinds (lists, dicts: an optimizer's state) is refused by key.
// Reading never runs code: the pickle's globals are limited to the ones above.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "glassbox/core/device.h"
#include "glassbox/core/tensor.h"

namespace gb {

// c10::IValue's everyday subset: None, a bool, an int, a double, a string or a tensor.
class IValue {
 public:
  enum class Tag { None, Bool, Int, Double, String, Tensor };
  IValue() = default;
  IValue(bool v) : tag_(Tag::Bool), i_(v) {}                             // NOLINT
  IValue(int v) : tag_(Tag::Int), i_(v) {}                               // NOLINT
  IValue(int64_t v) : tag_(Tag::Int), i_(v) {}                           // NOLINT
  IValue(double v) : tag_(Tag::Double), d_(v) {}                         // NOLINT
  IValue(std::string v) : tag_(Tag::String), s_(std::move(v)) {}         // NOLINT
  IValue(const char* v) : tag_(Tag::String), s_(v) {}                    // NOLINT
  IValue(Tensor v) : tag_(Tag::Tensor), t_(std::move(v)) {}              // NOLINT

  Tag tag() const { return tag_; }
  bool isNone() const { return tag_ == Tag::None; }
  bool isBool() const { return tag_ == Tag::Bool; }
  bool isInt() const { return tag_ == Tag::Int; }
  bool isDouble() const { return tag_ == Tag::Double; }
  bool isString() const { return tag_ == Tag::String; }
  bool isTensor() const { return tag_ == Tag::Tensor; }
  // Each throws gb::Error naming what the value is when it is not that kind (an int reads as a double, as libtorch).
  bool toBool() const;
  int64_t toInt() const;
  double toDouble() const;
  const std::string& toStringRef() const;
  const Tensor& toTensor() const;
  const char* tagKind() const;  // "None", "Bool", "Int", "Double", "String", "Tensor"

 private:
  Tag tag_ = Tag::None;
  int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  Tensor t_;
};

namespace serialize {

namespace detail {
struct ArchiveNode;  // an archive's keys and values, in write order
}

class OutputArchive {
 public:
  OutputArchive();
  ~OutputArchive();
  OutputArchive(OutputArchive&&) noexcept;
  OutputArchive& operator=(OutputArchive&&) noexcept;
  OutputArchive(const OutputArchive&) = delete;
  OutputArchive& operator=(const OutputArchive&) = delete;

  // A key is written once (a second write of it is an error naming it); keys need not be identifiers.
  void write(const std::string& key, const IValue& value);
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  void write(const std::string& key, OutputArchive& nested_archive);  // copies what nested holds now
  // The whole archive, atomically (a crash leaves the old file); folder name inside the zip: the file's stem.
  void save_to(const std::string& filename);
  void save_to(std::ostream& stream);
  void save_to(const std::function<size_t(const void*, size_t)>& func);
  template <typename... Ts>
  void operator()(Ts&&... ts) {
    write(std::forward<Ts>(ts)...);
  }

 private:
  std::string bytes(const std::string& folder) const;
  std::unique_ptr<detail::ArchiveNode> root_;
};

class InputArchive {
 public:
  InputArchive();
  ~InputArchive();
  InputArchive(InputArchive&&) noexcept;
  InputArchive& operator=(InputArchive&&) noexcept;
  InputArchive(const InputArchive&) = delete;
  InputArchive& operator=(const InputArchive&) = delete;

  // read throws gb::Error naming the key (and what the archive has) when it is missing or of another kind;
  // try_read returns false instead. A tensor is read into a defined `tensor` in place (its identity kept, no
  // autograd recorded: a module's parameter stays the optimizer's), else assigned.
  void read(const std::string& key, IValue& value);
  bool try_read(const std::string& key, IValue& value);
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  void read(const std::string& key, InputArchive& archive);
  bool try_read(const std::string& key, InputArchive& archive);
  // Reads a whole archive (what OutputArchive or libtorch's torch::save wrote); tensors go to `device` if given.
  void load_from(const std::string& filename, std::optional<Device> device = std::nullopt);
  void load_from(std::istream& stream, std::optional<Device> device = std::nullopt);
  void load_from(const char* data, size_t size, std::optional<Device> device = std::nullopt);
  std::vector<std::string> keys();
  template <typename... Ts>
  void operator()(Ts&&... ts) {
    read(std::forward<Ts>(ts)...);
  }

 private:
  std::shared_ptr<const detail::ArchiveNode> root_;
  std::string where_;  // "'ckpt.pt'" or "'ckpt.pt' (head.)", for messages
};

}  // namespace serialize
}  // namespace gb
