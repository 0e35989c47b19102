// engine/core/device.cpp — parsing and printing devices.
#include "glassbox/core/device.h"

#include <cstdlib>

#include "glassbox/core/error.h"

namespace gb {

Device::Device(const std::string& spec) {
  std::string kind = spec, idx;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    idx = spec.substr(colon + 1);
  }
  if (kind == "cpu") type_ = DeviceType::CPU;
  else if (kind == "cuda") type_ = DeviceType::CUDA;
  else if (kind == "meta") type_ = DeviceType::Meta;
  else
    throw Error(detail::str_cat("Expected one of cpu, cuda, meta device type at start of device string: ", spec));
  if (!idx.empty()) {
    char* end = nullptr;
    long v = std::strtol(idx.c_str(), &end, 10);
    GB_CHECK(end && *end == 0 && v >= 0 && v < 128, "Invalid device string: '", spec,
             "' (the index after ':' must be a non-negative integer, as in cuda:0)");
    GB_CHECK(type_ == DeviceType::CUDA, "Invalid device string: '", spec, "': only cuda devices take an index");
    index_ = int8_t(v);
  }
}

std::string Device::str() const {
  std::string s = type_ == DeviceType::CPU ? "cpu" : type_ == DeviceType::CUDA ? "cuda" : "meta";
  if (index_ >= 0) {  // in two steps: GCC 12 warns falsely (-Wstringop-overflow) on ":" + to_string at -O3
    s += ':';
    s += std::to_string(index_);
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace gb
