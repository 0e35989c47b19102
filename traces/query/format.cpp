// traces/query/format.cpp — number and table formatting shared by report, check and diff.
#include "traces/query/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gb::query {

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string format_time(double ns) {
  double us = ns / 1000.0;
  if (std::fabs(us) >= 1e6) return format_fixed(us / 1e6, 3) + "s";
  if (std::fabs(us) >= 1e3) return format_fixed(us / 1e3, 3) + "ms";
  return format_fixed(us, 3) + "us";
}

namespace {
// Prepending with insert(), not "+" + s: GCC 12's -Wrestrict misfires on the latter.
std::string with_plus(std::string s) {
  if (!s.empty() && s[0] != '-') s.insert(s.begin(), '+');
  return s;
}
}  // namespace

std::string format_signed_time(double ns) { return with_plus(format_time(ns)); }

std::string format_share(double part, double total) {
  if (total == 0) return "NaN";
  return format_fixed(part * 100.0 / total, 2) + "%";
}

std::string format_bytes(std::int64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  double b = static_cast<double>(bytes), a = std::fabs(b);
  if (a >= kGiB) return format_fixed(b / kGiB, 2) + " GiB";
  if (a >= kMiB) return format_fixed(b / kMiB, 2) + " MiB";
  if (a >= kKiB) return format_fixed(b / kKiB, 2) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string format_signed_bytes(std::int64_t bytes) { return with_plus(format_bytes(bytes)); }

std::string format_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         int indent, const std::string& align) {
  std::vector<std::size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  };
  measure(header);
  for (const auto& r : rows) measure(r);
  std::string out;
  auto line = [&](const std::vector<std::string>& r) {
    std::string l(static_cast<std::size_t>(indent), ' ');
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      std::string pad(width[i] - cell.size(), ' ');
      if (i > 0) l += "  ";
      bool left = i < align.size() ? align[i] == 'l' : i == 0;
      l += left ? cell + pad : pad + cell;
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& r : rows) line(r);
  return out;
}

}  // namespace gb::query
