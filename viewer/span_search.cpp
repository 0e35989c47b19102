// viewer/span_search.cpp — TimelineModel::search: spans by name substring, and their duration histogram.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "viewer/timeline_model.h"

namespace gb::viewer {

int SpanSearch::bin_of(std::int64_t dur_ns) const {
  if (edges.size() < 2 || dur_ns < edges.front() || dur_ns > edges.back()) return -1;
  const auto it = std::upper_bound(edges.begin(), edges.end(), dur_ns);
  return std::min(static_cast<int>(it - edges.begin()) - 1, static_cast<int>(edges.size()) - 2);
}

void duration_histogram(SpanSearch& s, int bins) {
  s.edges.clear(), s.counts.clear(), s.longest.clear();
  if (s.hits.empty() || bins < 1) return;
  std::int64_t lo = s.hits.front().dur_ns, hi = lo;
  for (const SearchHit& h : s.hits) lo = std::min(lo, h.dur_ns), hi = std::max(hi, h.dur_ns);
  const double a = static_cast<double>(std::max<std::int64_t>(lo, 1)), b = static_cast<double>(std::max(hi, lo + 1));
  s.edges.push_back(lo);
  for (int i = 1; i < bins; ++i) {
    const auto e =
        static_cast<std::int64_t>(std::floor(a * std::pow(b / a, static_cast<double>(i) / bins) * (1 + 1e-12)));
    if (e > s.edges.back() && e < hi) s.edges.push_back(e);
  }
  s.edges.push_back(std::max(hi, lo + 1));  // the last bin is closed: it holds hi
  s.counts.assign(s.edges.size() - 1, 0);
  s.longest.assign(s.edges.size() - 1, -1);
  for (std::size_t i = 0; i < s.hits.size(); ++i) {
    const int bin = s.bin_of(s.hits[i].dur_ns);
    if (bin < 0) continue;
    ++s.counts[static_cast<std::size_t>(bin)];
    auto& l = s.longest[static_cast<std::size_t>(bin)];
    if (l < 0 || s.hits[i].dur_ns > s.hits[static_cast<std::size_t>(l)].dur_ns) l = static_cast<std::ptrdiff_t>(i);
  }
}

SpanSearch TimelineModel::read_search(const gb::query::TraceDb& db, const std::string& text, std::size_t cap, int bins) {
  SpanSearch s;
  s.text = text;
  if (text.empty()) return s;
  std::string needle;  // lower-cased, as an SQL string literal
  for (char c : text) {
    needle += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '\'') needle += '\'';
  }
  const std::string from =
      " FROM spans JOIN strings ON strings.id = spans.name_id WHERE instr(lower(strings.text), '" + needle + "') > 0";
  db.each("SELECT spans.id, spans.start_ns, spans.dur_ns" + from + " ORDER BY spans.id LIMIT ?1",
          {static_cast<std::int64_t>(cap)}, [&](const gb::query::Row& r) {
            s.hits.push_back({r.i64(0), r.i64(1), r.i64(2)});
          });
  s.matches = static_cast<std::int64_t>(s.hits.size());
  if (s.hits.size() >= cap) s.matches = db.scalar("SELECT count(*)" + from);
  s.capped = s.matches > static_cast<std::int64_t>(s.hits.size());
  duration_histogram(s, bins);
  return s;
}

const SpanSearch* TimelineModel::search(const std::string& text, std::size_t cap, int bins) {
  const auto key = std::make_tuple(text, cap, bins);
  if (text.empty()) return search_.set(key, SpanSearch{});
  return search_.exact(key, queries_, [text, cap, bins](const gb::query::TraceDb* db) {
    SpanSearch s = db ? read_search(*db, text, cap, bins) : SpanSearch{};
    s.text = text;
    return s;
  });
}

}  // namespace gb::viewer
