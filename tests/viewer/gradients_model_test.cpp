// tests/viewer/gradients_model_test.cpp — GradientsModel against grad_stats read with plain SQL: the heatmap's
// norms and flags, the update ratio per step exactly as SQL divides it (NULL norms skipped), and the pixel-column
// reduction computed off the frame.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <cmath>
#include <utility>
#include <vector>

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;
using gb::trace::SpanKind;

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


TEST_CASE("gradient heatmap: rows in model order, values equal grad_stats, the planted NaN flagged") {
  Fixture f({.steps = 8, .layers = 5, .ops_per_layer = 1, .nan_step = 6, .nan_layer = 3});
  TraceModel m(f.path, kSync);
  const GradHeatmap& h = m.gradients().heatmap();
  REQUIRE(h.rows() == 10);
  REQUIRE(h.cols() == 8);
  CHECK(h.labels[0] == "layers.0.weight");
  CHECK(h.labels[7] == "layers.3.bias");
  int flagged = 0;
  for (std::size_t r = 0; r < h.rows(); ++r)
    for (std::size_t c = 0; c < h.cols(); ++c) {
      const std::string where = " FROM grad_stats WHERE param_id = " + std::to_string(h.param_ids[r]) +
                                " AND step = " + std::to_string(h.steps[c]);
      // norms compared in nano-units through SQL's integer view; a NaN norm is stored as NULL
      if (std::isnan(h.at(r, c)))
        CHECK(sql(f.path, "SELECT count(*)" + where + " AND norm IS NULL") == 1);
      else
        CHECK(std::llround(h.at(r, c) * 1e9) == sql(f.path, "SELECT CAST(round(norm * 1e9) AS INTEGER)" + where));
      if (h.flag_at(r, c)) {
        ++flagged;
        CHECK(h.flag_at(r, c) == 1);
        CHECK(h.param_ids[r] == f.synth.nan_param_id);
        CHECK(h.steps[c] == 6);
      }
    }
  CHECK(flagged == 1);
  CHECK(h.min_positive > 0);
  CHECK(h.max > h.min_positive);
}

TEST_CASE("update ratio: update_norm / param_norm per step as SQL computes it; NULL norms skipped") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  const auto synth = gb::tools::write_synthetic_trace(path, {.steps = 8, .layers = 4, .ops_per_layer = 1,
                                                             .nan_step = 5, .nan_layer = 2});
  TraceModel m(path, {.background = false});
  const GradHeatmap& h = m.gradients().heatmap();
  REQUIRE(h.rows() > 0);
  int with_skip = 0;
  for (Id p : h.param_ids) {
    const UpdateRatio u = m.gradients().update_ratio(p);
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
  CHECK(m.gradients().update_ratio(999999).steps.empty());
}

TEST_CASE("columns: pending first, then equal to reduce") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 40, .layers = 4, .ops_per_layer = 1});
  TraceModel m(path, {.background = false});
  REQUIRE(m.gradients().heatmap().cols() > 7);
  CHECK(m.gradients().columns(7) == nullptr);
  CHECK(m.gradients().pending());
  m.wait_queries();
  const GradColumns* got = m.gradients().columns(7);
  REQUIRE(got != nullptr);
  const GradColumns& want = m.gradients().reduce(7);
  CHECK(got->columns == 7);
  REQUIRE(got->best.size() == want.best.size());
  CHECK(got->flag == want.flag);
  for (std::size_t i = 0; i < want.best.size(); ++i)
    CHECK(((std::isnan(got->best[i]) && std::isnan(want.best[i])) || got->best[i] == want.best[i]));
}

TEST_CASE("columns of a long run: buckets of the step axis, each the largest norm and any NaN of its steps (SQL)") {
  TempDir tmp;
  const std::string path = tmp.file("long.db");
  gb::tools::SynthOptions o;
  o.long_steps = 20'000;
  o.layers = 2;
  const gb::tools::SynthResult synth = gb::tools::write_synthetic_trace(path, o);
  TraceModel m(path, {.background = false});
  const GradHeatmap& h = m.gradients().heatmap();
  // grad_stats every 10 steps and in every detail step: far fewer columns than steps, far more than pixels.
  REQUIRE(h.cols() == static_cast<std::size_t>(sql(path, "SELECT count(DISTINCT step) FROM grad_stats")));
  CHECK(h.cols() > 2000);
  CHECK(h.cols() < 3000);
  const GradColumns g = m.gradients().reduce(100);
  REQUIRE(g.columns == 100);
  CHECK(g.first_step == 0);
  CHECK(g.step_span == 20'000);
  int nan_columns = 0;
  for (std::size_t r = 0; r < h.rows(); ++r)
    for (int c = 0; c < 100; c += 3) {
      const std::string where = " FROM grad_stats WHERE param_id = " + std::to_string(h.param_ids[r]) +
                                " AND step >= " + std::to_string(200 * c) + " AND step < " +
                                std::to_string(200 * (c + 1));
      const auto best = sql_pairs(path, "SELECT 0, max(norm)" + where);
      const std::size_t i = r * 100 + static_cast<std::size_t>(c);
      CAPTURE(r);
      CAPTURE(c);
      REQUIRE(best.size() == 1);
      CHECK(g.best[i] == best[0].second);
      const bool nan = sql(path, "SELECT count(*)" + where + " AND (nan_count > 0 OR norm IS NULL)") > 0;
      CHECK((g.flag[i] == 1) == nan);
      nan_columns += nan;
    }
  // The planted NaN (step 15,000 of layer 1's weight) flags exactly its bucket of that row.
  std::size_t nan_row = 0;
  while (h.param_ids[nan_row] != synth.nan_param_id) ++nan_row;
  for (int c = 0; c < 100; ++c)
    CHECK((g.flag[nan_row * 100 + static_cast<std::size_t>(c)] == 1) == (c == synth.nan_step / 200));
  CHECK(nan_columns == ((synth.nan_step / 200) % 3 == 0 ? 1 : 0));  // the sampled columns met the NaN once
  // Asking for more columns than steps: one column per step, empty where a step has no statistics.
  const GradColumns all = m.gradients().reduce(1'000'000);
  CHECK(all.columns == 20'000);
  CHECK(all.steps(1010).first == all.steps(1010).second - 1);  // step 1010: a row (every 10 steps)
  CHECK(all.steps(1011).first == all.steps(1011).second);      // step 1011: summary only
  CHECK(std::isnan(all.best[1011]));
  CHECK(all.flag[1011] == 0);
}
