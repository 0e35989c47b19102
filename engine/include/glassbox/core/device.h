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

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1 = "the current device" (cuda) or none (cpu, meta)

  Device(DeviceType t = DeviceType::CPU, int index = -1) : type(t), index(int8_t(index)) {}  // NOLINT
  // Parses "cpu", "cuda", "cuda:1", "meta"; throws gb::Error naming the accepted forms otherwise.
  Device(const std::string& spec);  // NOLINT
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_meta() const { return type == DeviceType::Meta; }
  bool has_index() const { return index >= 0; }
  std::string str() const;

  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace gb
