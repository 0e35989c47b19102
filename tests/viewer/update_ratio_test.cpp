// tests/viewer/update_ratio_test.cpp — TraceModel::update_ratio against grad_stats read with plain sqlite3: the
// ratio update_norm / param_norm per step exactly as SQL divides it, and the steps whose norms are NULL (NaN)
// listed as skipped.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cmath>
#include <utility>
#include <vector>

#include "tools/synth.h"
#include "traces/temp_dir.h"
#include "viewer/trace_model.h"

using namespace gb::viewer;

namespace {

// (step, value) rows of a two-column query; value NaN when NULL.
std::vector<std::pair<std::int64_t, double>> sql_pairs(const std::string& path, const std::string& q) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  std::vector<std::pair<std::int64_t, double>> out;
  if (sqlite3_prepare_v2(db, q.c_str(), -1, &s, nullptr) == SQLITE_OK)
    while (sqlite3_step(s) == SQLITE_ROW)
      out.emplace_back(sqlite3_column_int64(s, 0), sqlite3_column_type(s, 1) == SQLITE_NULL
                                                       ? std::nan("")
                                                       : sqlite3_column_double(s, 1));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("update ratio: update_norm / param_norm per step as SQL computes it; NULL norms skipped") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  const auto synth = gb::tools::write_synthetic_trace(path, {.steps = 8, .layers = 4, .ops_per_layer = 1,
                                                             .nan_step = 5, .nan_layer = 2});
  TraceModel m(path, {.background = false});
  const GradHeatmap& h = m.grad_heatmap();
  REQUIRE(h.rows() > 0);
  int with_skip = 0;
  for (Id p : h.param_ids) {
    const UpdateRatio u = m.update_ratio(p);
    const std::string id = std::to_string(p);
    const auto expect = sql_pairs(path, "SELECT step, update_norm / param_norm FROM grad_stats WHERE param_id = " + id +
                                            " AND update_norm IS NOT NULL AND param_norm > 0 ORDER BY step");
    REQUIRE(u.steps.size() == expect.size());
    for (std::size_t i = 0; i < expect.size(); ++i) {
      CHECK(u.steps[i] == expect[i].first);
      CHECK(u.ratio[i] == expect[i].second);  // the same IEEE division: exact
    }
    const auto skipped = sql_pairs(path, "SELECT step, 0 FROM grad_stats WHERE param_id = " + id +
                                             " AND (update_norm IS NULL OR param_norm IS NULL OR param_norm <= 0) ORDER BY step");
    REQUIRE(u.skipped.size() == skipped.size());
    for (std::size_t i = 0; i < skipped.size(); ++i) CHECK(u.skipped[i] == skipped[i].first);
    if (!u.skipped.empty()) {
      ++with_skip;
      CHECK(p == synth.nan_param_id);
      CHECK(u.skipped == std::vector<std::int64_t>{5});
    }
  }
  CHECK(with_skip == 1);  // the planted NaN step has no update norm
  CHECK(m.update_ratio(999999).steps.empty());
}
