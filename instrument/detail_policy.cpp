// instrument/detail_policy.cpp — GLASSBOX_DETAIL and the policy's text.
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "instrument/detail.h"
#include "traces/error.h"

namespace gb::trace {

namespace {
constexpr const char* kForms =
    "use full, summary, or keys first, every, window, recorder, recorder_mb, after (e.g. "
    "GLASSBOX_DETAIL=first=500,every=1000,window=5)";
}

std::string DetailPolicy::text() const {
  if (is_full()) return "full";
  return "first=" + std::to_string(first) + ",every=" + std::to_string(every) + ",window=" + std::to_string(window) +
         ",recorder=" + std::to_string(recorder) + ",recorder_mb=" + std::to_string(recorder_mb) +
         ",after=" + std::to_string(after);
}

DetailPolicy DetailPolicy::parse(std::string_view text) { return parse(text, DetailPolicy{}); }

DetailPolicy DetailPolicy::parse(std::string_view text, const DetailPolicy& base) {
  DetailPolicy p = base;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    if (item == "full") {
      p.first = full().first;
      continue;
    }
    if (item == "summary" || item == "off") {
      p.first = p.every = 0;
      continue;
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error("glassbox: GLASSBOX_DETAIL: '" + std::string(item) + "' is not a key=value; " + kForms);
    const std::string key(item.substr(0, eq)), value(item.substr(eq + 1));
    std::int64_t* field = key == "first"         ? &p.first
                          : key == "every"       ? &p.every
                          : key == "window"      ? &p.window
                          : key == "recorder"    ? &p.recorder
                          : key == "recorder_mb" ? &p.recorder_mb
                          : key == "after"       ? &p.after
                                                 : nullptr;
    if (!field) throw Error("glassbox: GLASSBOX_DETAIL: unknown key '" + key + "'; " + kForms);
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < 0 || v > (1LL << 40))
      throw Error("glassbox: GLASSBOX_DETAIL: " + key + "=" + value + " is not a whole number of steps (0 or more); " +
                  kForms);
    *field = v;
  }
  if (!p.is_full() && p.every > 0 && p.window > p.every)
    throw Error("glassbox: GLASSBOX_DETAIL: window=" + std::to_string(p.window) + " is longer than every=" +
                std::to_string(p.every) + "; a window must fit between two (e.g. every=1000,window=5)");
  return p;
}

}  // namespace gb::trace
