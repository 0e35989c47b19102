// engine/memory/config.cpp — GLASSBOX_ALLOC_CONF: PyTorch's key:value,key:value syntax, with sizes in binary units.
#include "glassbox/memory/config.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "glassbox/core/error.h"
#include "glassbox/memory/caching_allocator.h"

namespace gb::memory {
namespace {

constexpr const char* kForms =
    "Accepted: max_split_size_mb:<MiB, more than 20>, capacity:<size>, context:<size>, where <size> is a byte "
    "count or a number with KiB, MiB, GiB or TiB (e.g. GLASSBOX_ALLOC_CONF=max_split_size_mb:128,capacity:80GiB)";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A non-negative decimal integer, or false.
bool parse_count(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

int64_t parse_size(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  std::string_view unit = trim(s.substr(digits));
  int64_t n = 0;
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "KiB") shift = 10;
  else if (unit == "MiB") shift = 20;
  else if (unit == "GiB") shift = 30;
  else if (unit == "TiB") shift = 40;
  GB_CHECK(parse_count(s.substr(0, digits), &n) && shift >= 0 && n <= (INT64_MAX >> shift),
           "GLASSBOX_ALLOC_CONF: bad value '", text, "' for ", what,
           ": expected a byte count or a whole number with KiB, MiB, GiB or TiB (binary units, e.g. 80GiB; ",
           "'GB' is refused as ambiguous)");
  return n << shift;
}

AllocatorConfig parse_alloc_conf(std::string_view conf) {
  AllocatorConfig c;
  while (!trim(conf).empty()) {
    size_t comma = conf.find(',');
    std::string_view item = trim(conf.substr(0, comma));
    conf = comma == std::string_view::npos ? std::string_view{} : conf.substr(comma + 1);
    if (item.empty()) continue;
    size_t colon = item.find(':');
    GB_CHECK(colon != std::string_view::npos, "GLASSBOX_ALLOC_CONF: '", item,
             "' is not a key:value pair. ", kForms);
    std::string_view key = trim(item.substr(0, colon)), value = trim(item.substr(colon + 1));
    if (key == "max_split_size_mb") {
      int64_t mb = 0;
      GB_CHECK(parse_count(value, &mb) && mb > kLargeBuffer / (1 << 20) && mb < (int64_t(1) << 40),
               "GLASSBOX_ALLOC_CONF: bad value '", value, "' for max_split_size_mb: expected a whole number of MiB ",
               "more than 20 (the large pool's segment size), e.g. max_split_size_mb:128");
      c.max_split_size = mb << 20;
    } else if (key == "capacity") {
      c.capacity = parse_size(value, "capacity");
    } else if (key == "context") {
      c.context = parse_size(value, "context");
    } else if (key == "expandable_segments" || key == "roundup_power2_divisions" ||
               key == "garbage_collection_threshold" || key == "backend") {
      throw Error(detail::str_cat("GLASSBOX_ALLOC_CONF: PyTorch's key '", key, "' (value '", value,
                                  "') is not supported by glassbox's allocator. ", kForms));
    } else {
      throw Error(detail::str_cat("GLASSBOX_ALLOC_CONF: unknown key '", key, "' (value '", value, "'). ", kForms));
    }
  }
  return c;
}

AllocatorConfig alloc_conf_from_env() {
  const char* e = std::getenv("GLASSBOX_ALLOC_CONF");
  return e ? parse_alloc_conf(e) : AllocatorConfig{};
}

}  // namespace gb::memory
