// glassbox/memory/config.h — allocator settings from GLASSBOX_ALLOC_CONF, in PyTorch's key:value,key:value form.
//
//   GLASSBOX_ALLOC_CONF=max_split_size_mb:128,capacity:80GiB,context:512MiB
//
//   max_split_size_mb:N  blocks of N MiB or more are never split, and requests below N MiB never take them
//                        (PyTorch's meaning; N must be > 20). Default: no limit.
//   capacity:SIZE        the device's capacity: context + reserved segments may not exceed it (a cpu or meta run
//                        then behaves like a GPU of that size). Default 0 = unlimited (cuda: the GPU's size).
//   context:SIZE         bytes the device context takes (cpu and meta; cuda measures its own). Default 0.
// SIZE is a byte count, or a number with KiB, MiB, GiB or TiB (binary units; "80GB" is refused as ambiguous).
// The settings apply to every device's caching allocator when it is created; set_capacity() etc. (memory.h)
// change them at run time. Unknown keys and bad values throw gb::Error naming the key, the value and the forms.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gb::memory {

struct AllocatorConfig {
  int64_t max_split_size = 0;          // bytes; 0 = no limit
  int64_t capacity = 0;                // bytes; 0 = unlimited
  std::optional<int64_t> context;      // bytes; unset = the raw allocator's own
};

// Parses the GLASSBOX_ALLOC_CONF syntax ("" gives the defaults).
AllocatorConfig parse_alloc_conf(std::string_view conf);
// The environment's GLASSBOX_ALLOC_CONF, parsed (defaults when unset).
AllocatorConfig alloc_conf_from_env();
// "8GiB", "512 MiB", "1048576" -> bytes; `what` names the setting in the error.
int64_t parse_size(std::string_view text, std::string_view what);

}  // namespace gb::memory
