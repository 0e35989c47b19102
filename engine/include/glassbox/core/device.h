// glassbox/core/device.h — where a tensor lives: cpu, cuda:N or meta (shapes and allocations, no data).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace gb {

enum class DeviceType : int8_t { CPU, CUDA, Meta };

constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kMeta = DeviceType::Meta;

// libtorch's c10::Device: type() and index() (-1 = "the current device" for cuda, none for cpu and meta).
struct Device {
 public:
  Device(DeviceType t = DeviceType::CPU, int index = -1) : type_(t), index_(int8_t(index)) {}  // NOLINT
  // Parses "cpu", "cuda", "cuda:1", "meta"; throws gb::Error naming the accepted forms otherwise.
  Device(const std::string& spec);  // NOLINT
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT

  DeviceType type() const noexcept { return type_; }
  int8_t index() const noexcept { return index_; }
  void set_index(int8_t index) { index_ = index; }
  bool is_cpu() const noexcept { return type_ == DeviceType::CPU; }
  bool is_cuda() const noexcept { return type_ == DeviceType::CUDA; }
  bool is_meta() const noexcept { return type_ == DeviceType::Meta; }
  bool has_index() const noexcept { return index_ >= 0; }
  std::string str() const;

  bool operator==(const Device& o) const noexcept { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const noexcept { return !(*this == o); }

 private:
  DeviceType type_ = DeviceType::CPU;
  int8_t index_ = -1;
};

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace gb
