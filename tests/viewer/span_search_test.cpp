// tests/viewer/span_search_test.cpp — TimelineModel::search against plain SQL: match counts (case-insensitive substring),
// the cap, and every histogram bin's count equal to a count(*) over its duration range.
#include <doctest/doctest.h>

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;

namespace {

const std::string kJoin = " FROM spans JOIN strings ON strings.id = spans.name_id WHERE lower(strings.text) LIKE ";

}  // namespace


TEST_CASE("search: matches and histogram bins equal SQL counts") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2});
  TraceModel m(path, {.background = false});
  for (const std::string& q : {std::string("LiNeAr"), std::string("add"), std::string("a"), std::string("relu")}) {
    CAPTURE(q);
    std::string lower;
    for (char c : q) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string where = kJoin + "'%" + lower + "%'";
    const SpanSearch s = *settle(m, [&] { return m.timeline().search(q); });
    REQUIRE(s.matches == sql_int(path, "SELECT count(*)" + where));
    REQUIRE(s.matches > 0);
    CHECK(!s.capped);
    CHECK(static_cast<std::int64_t>(s.hits.size()) == s.matches);
    REQUIRE(s.edges.size() >= 2);
    CHECK(s.edges.front() == sql_int(path, "SELECT min(dur_ns)" + where));
    CHECK(s.edges.back() == sql_int(path, "SELECT max(dur_ns)" + where));
    std::int64_t total = 0;
    for (std::size_t b = 0; b + 1 < s.edges.size(); ++b) {
      CHECK(s.edges[b] < s.edges[b + 1]);
      const bool last = b + 2 == s.edges.size();
      const std::string range = " AND dur_ns >= " + std::to_string(s.edges[b]) + " AND dur_ns " + (last ? "<= " : "< ") +
                                std::to_string(s.edges[b + 1]);
      CHECK(s.counts[b] == sql_int(path, "SELECT count(*)" + where + range));
      total += s.counts[b];
      if (s.counts[b] > 0) {  // the bin's longest span is the longest SQL finds in its range
        REQUIRE(s.longest[b] >= 0);
        CHECK(s.hits[static_cast<std::size_t>(s.longest[b])].dur_ns ==
              sql_int(path, "SELECT max(dur_ns)" + where + range));
      } else {
        CHECK(s.longest[b] == -1);
      }
    }
    CHECK(total == s.matches);
  }
  CHECK(settle(m, [&] { return m.timeline().search("no such span name"); })->matches == 0);
  CHECK(settle(m, [&] { return m.timeline().search("no such span name"); })->edges.empty());
  CHECK(settle(m, [&] { return m.timeline().search(""); })->matches == 0);
}

TEST_CASE("search: the cap keeps the first spans by id and still counts every match") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 4, .layers = 3, .ops_per_layer = 2});
  TraceModel m(path, {.background = false});
  const std::string where = kJoin + "'%a%'";
  const SpanSearch s = *settle(m, [&] { return m.timeline().search("A", 10); });
  CHECK(s.hits.size() == 10);
  CHECK(s.matches == sql_int(path, "SELECT count(*)" + where));
  CHECK(s.capped);
  CHECK(s.hits.back().id == sql_int(path, "SELECT spans.id" + where + " ORDER BY spans.id LIMIT 1 OFFSET 9"));
  std::int64_t total = 0;
  for (auto c : s.counts) total += c;
  CHECK(total == 10);
}

TEST_CASE("duration histogram: one duration, and log-spaced edges") {
  SpanSearch s;
  s.hits = {{1, 0, 500}, {2, 0, 500}};
  duration_histogram(s, 10);
  CHECK(s.edges == std::vector<std::int64_t>{500, 501});
  CHECK(s.counts == std::vector<std::int64_t>{2});
  s.hits = {{1, 0, 1}, {2, 0, 10}, {3, 0, 100}, {4, 0, 1000}};
  duration_histogram(s, 3);
  CHECK(s.edges == std::vector<std::int64_t>{1, 10, 100, 1000});
  CHECK(s.counts == std::vector<std::int64_t>{1, 1, 2});  // the last bin is closed
  CHECK(s.bin_of(0) == -1);
  CHECK(s.bin_of(1001) == -1);
}

TEST_CASE("search: a request returns at once, the answer appears after the worker is done") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2});
  TraceModel m(path, {.background = false});
  CHECK(m.timeline().search("linear") == nullptr);  // posted, not run in the caller
  CHECK(m.timeline().search_pending());
  CHECK(m.timeline().search("relu") == nullptr);  // supersedes the pending one
  m.wait_queries();
  CHECK(m.timeline().search_pending());  // done, but taken by the next call, never behind the caller's back
  const SpanSearch* s = m.timeline().search("relu");
  CHECK_FALSE(m.timeline().search_pending());
  REQUIRE(s != nullptr);
  CHECK(s->text == "relu");
  CHECK(s->matches == sql_int(path, "SELECT count(*)" + kJoin + "'%relu%'"));
  CHECK(s->matches > 0);
  CHECK(m.timeline().search("relu") == s);  // cached
  CHECK(m.timeline().search("") != nullptr);  // "" answers at once: no matches
  CHECK(m.timeline().search("")->matches == 0);
}
