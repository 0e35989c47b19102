// tests/viewer/search_test.cpp — TraceModel::search against plain SQL: match counts (case-insensitive substring),
// the cap, and every histogram bin's count equal to a count(*) over its duration range.
#include <doctest/doctest.h>

#include "tools/synth.h"
#include "traces/temp_dir.h"
#include "viewer/trace_model.h"

using namespace gb::viewer;

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
    const SpanSearch& s = m.search(q);
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
  CHECK(m.search("no such span name").matches == 0);
  CHECK(m.search("no such span name").edges.empty());
  CHECK(m.search("").matches == 0);
}

TEST_CASE("search: the cap keeps the first spans by id and still counts every match") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 4, .layers = 3, .ops_per_layer = 2});
  TraceModel m(path, {.background = false});
  const std::string where = kJoin + "'%a%'";
  const SpanSearch& s = m.search("A", 10);
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

TEST_CASE("search_async: a request returns at once, the answer appears after the worker is done") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 6, .layers = 4, .ops_per_layer = 2});
  TraceModel m(path, {.background = false});
  CHECK(m.search_async("linear") == nullptr);  // posted, not run in the caller
  CHECK(m.search_pending());
  CHECK(m.search_async("relu") == nullptr);  // supersedes the pending one
  m.wait_queries();
  CHECK_FALSE(m.search_pending());
  const SpanSearch* s = m.search_async("relu");
  REQUIRE(s != nullptr);
  CHECK(s->text == "relu");
  CHECK(s->matches == sql_int(path, "SELECT count(*)" + kJoin + "'%relu%'"));
  CHECK(s->matches > 0);
  CHECK(m.search_async("relu") == s);  // cached
  CHECK(m.search_async("") != nullptr);  // "" answers at once: no matches
  CHECK(m.search_async("")->matches == 0);
}

TEST_CASE("compare().start: returns at once, pending() until the diff is in") {
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  gb::tools::write_synthetic_trace(a, {.steps = 4, .layers = 2, .ops_per_layer = 2});
  gb::tools::write_synthetic_trace(b, {.steps = 5, .layers = 2, .ops_per_layer = 2, .seed = 3});
  TraceModel m(a, {.background = false});
  m.compare().start(b);
  // Nothing is computed in the caller: the job is only queued (the worker may pick it up meanwhile).
  CHECK((m.compare().pending() || m.compare().result() != nullptr));
  m.wait_queries();
  CHECK_FALSE(m.compare().pending());
  REQUIRE(m.compare().result() != nullptr);
  CHECK(m.compare().result()->steps_b.count == 5);
}
