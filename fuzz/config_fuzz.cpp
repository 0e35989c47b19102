// fuzz/config_fuzz.cpp — the settings read from the environment: GLASSBOX_ALLOC_CONF (the allocator's
// key:value,key:value with sizes such as 80GiB) and GLASSBOX_ANOMALY_CONF (the monitor's key=value list). A bad
// setting must be refused with a message, never crash or overflow.
#include <glassbox/memory/config.h>
#include <glassbox/monitor/monitor.h>

#include <string_view>

#include "fuzz/input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gb::fuzz::read_or_refuse([&] { gb::memory::parse_alloc_conf(text); });
  gb::fuzz::read_or_refuse([&] { gb::monitor::parse_config(text); });
  return 0;
}
