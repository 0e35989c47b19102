// engine/memory/summary.cpp — torch.cuda.memory_summary()'s table for a MemoryStats, plus glassbox's three layers
// (context, reserved but unallocated, allocated by category).
#include <cstdio>
#include <string>
#include <vector>

#include "glassbox/memory/memory.h"

namespace gb::memory {
namespace {

// PyTorch's _format_size / _format_count: scale by the row's "all" value so a column shares one unit. Both divide
// by `base` while the reference is at least `threshold`, then print with the unit of the reached scale.
template <size_t N>
std::string scaled(int64_t v, double pref, double base, double threshold, const char* const (&units)[N],
                   const char* fmt) {
  size_t p = 0;
  while (p + 1 < N && pref >= threshold) {
    ++p;
    v /= static_cast<int64_t>(base);
    pref /= base;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, static_cast<long long>(v), units[p]);
  return buf;
}
std::string fmt_size(int64_t sz, double pref) {
  static const char* const units[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return scaled(sz, pref, 1024, 768 * 1024, units, "%6lld %s");
}
std::string fmt_count(int64_t cnt, double pref) {
  static const char* const units[] = {" ", "K", "M"};
  return scaled(cnt, pref, 1000, 750 * 1000, units, "%7lld %s ");
}

std::string row(const std::string& name, const std::string& a, const std::string& b, const std::string& c,
                const std::string& d) {
  char buf[160];
  std::snprintf(buf, sizeof buf, " %-21s | %s | %s | %s | %s ", name.c_str(), a.c_str(), b.c_str(), c.c_str(), d.c_str());
  return buf;
}

std::string centered(const std::string& s, size_t width = 75) {
  size_t left = s.size() < width ? (width - s.size()) / 2 : 0;
  std::string out = std::string(left, ' ') + s;
  out.resize(std::max(width, out.size()), ' ');
  return out;
}

}  // namespace

std::string summary(const MemoryStats& s, Device device) {
  std::vector<std::string> lines;
  const std::string eq(75, '='), dash(75, '-');
  const std::string reserved_word = device.is_cuda() ? "GPU reserved" : "Reserved";  // PyTorch's rows say GPU
  lines.push_back(eq);
  lines.push_back(centered("glassbox memory summary, device " + device.str()));
  lines.push_back(dash);
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %9s OOMs: %-12lld | %6s Segment alloc retries: %-8lld", "",
                static_cast<long long>(s.num_ooms), "", static_cast<long long>(s.num_alloc_retries));
  std::string oom_line = buf;
  oom_line.resize(75, ' ');
  lines.push_back(oom_line);
  lines.push_back(eq);
  lines.push_back("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");

  struct Metric {
    const StatArray* stat;
    std::string name;
    bool bytes;
  };
  const std::vector<Metric> metrics = {
      {&s.allocated_bytes, "Allocated memory", true},
      {&s.active_bytes, "Active memory", true},
      {&s.requested_bytes, "Requested memory", true},
      {&s.reserved_bytes, reserved_word + " memory", true},
      {&s.inactive_split_bytes, "Non-releasable memory", true},
      {&s.allocation, "Allocations", false},
      {&s.active, "Active allocs", false},
      {&s.segment, reserved_word + " segments", false},
      {&s.inactive_split, "Non-releasable allocs", false},
  };
  for (const Metric& m : metrics) {
    lines.push_back(dash);
    const Stat& all = (*m.stat)[kAll];
    auto f = [&](int64_t v, int64_t pref) { return m.bytes ? fmt_size(v, double(pref)) : fmt_count(v, double(pref)); };
    const std::pair<int, const char*> subs[] = {{kAll, nullptr}, {kLargePool, "      from large pool"},
                                                {kSmallPool, "      from small pool"}};
    for (auto [t, label] : subs) {
      const Stat& st = (*m.stat)[size_t(t)];
      lines.push_back(row(label ? label : m.name, f(st.current, all.current), f(st.peak, all.peak),
                          f(st.allocated, all.allocated), f(st.freed, all.freed)));
    }
  }
  lines.push_back(dash);
  for (auto [st, name] : {std::pair{&s.oversize_allocations, "Oversize allocations"},
                          std::pair{&s.oversize_segments, device.is_cuda() ? "Oversize GPU segments" : "Oversize segments"}}) {
    lines.push_back(row(name, fmt_count(st->current, double(st->current)), fmt_count(st->peak, double(st->peak)),
                        fmt_count(st->allocated, double(st->allocated)), fmt_count(st->freed, double(st->freed))));
  }
  lines.push_back(eq);
  // glassbox's own rows: the three layers users see, and what the allocated bytes are.
  const int64_t unallocated = s.reserved_bytes[kAll].current - s.allocated_bytes[kAll].current;
  auto bytes_row = [&](const std::string& name, int64_t cur, int64_t peak) {
    lines.push_back(row(name, fmt_size(cur, double(cur)), fmt_size(peak, double(peak)), "          ", "          "));
  };
  bytes_row("Capacity (0 = none)", s.capacity_bytes, s.capacity_bytes);
  bytes_row("Device context", s.context_bytes, s.context_bytes);
  bytes_row("Reserved unallocated", unallocated, unallocated);
  lines.push_back(dash);
  for (int c = 0; c < kNumCategories; ++c) {
    const Stat& st = s.allocated_bytes_by_category[size_t(c)];
    if (st.allocated == 0) continue;
    lines.push_back(row(std::string("Alloc: ") + to_string(Category(c)), fmt_size(st.current, double(st.current)),
                        fmt_size(st.peak, double(st.peak)), fmt_size(st.allocated, double(st.allocated)),
                        fmt_size(st.freed, double(st.freed))));
  }
  lines.push_back(eq);
  std::string out;
  for (const std::string& l : lines) out += "|" + l + "|\n";
  return out;
}

}  // namespace gb::memory
