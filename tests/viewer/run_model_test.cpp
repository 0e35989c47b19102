// tests/viewer/run_model_test.cpp — RunModel: the level of detail of a series against brute-force min / max /
// first / last over every range shape (aligned, unaligned, tiny, whole), extended by appends as a trace that grows
// would be; the run summary read from a long synthetic trace against plain SQL (values, per-pixel-column maxima,
// throughput, step_memory); and TraceModel's steps of a long run (only those with detail) and of an ordinary trace.
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;

namespace {

double sql_real(const std::string& path, const std::string& q) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  double v = std::nan("");
  if (sqlite3_prepare_v2(db, q.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
      sqlite3_column_type(s, 0) != SQLITE_NULL)
    v = sqlite3_column_double(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

// The aggregate of points [i, j) by looking at each one.
RunAgg brute(const std::vector<float>& v, std::size_t i, std::size_t j) {
  RunAgg a;
  for (std::size_t k = i; k < j; ++k) a.add(v[k]);
  return a;
}

void check_same(const RunAgg& got, const RunAgg& want) {
  REQUIRE(got.n == want.n);
  if (want.n == 0) return;
  CHECK(got.min == want.min);
  CHECK(got.max == want.max);
  CHECK(got.first == want.first);
  CHECK(got.last == want.last);
  CHECK(got.sum == doctest::Approx(want.sum).epsilon(1e-9));
}

}  // namespace

TEST_CASE("SeriesLod: every range's min, max, first, last and sum equal a brute-force scan, also after appends") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-5, 5);
  std::vector<float> v;
  SeriesLod lod;
  // Built in uneven chunks (seal() between), as a trace that grows would extend it.
  for (std::size_t chunk : {1u, 15u, 16u, 17u, 300u, 1000u, 3u, 4444u}) {
    for (std::size_t k = 0; k < chunk; ++k) {
      const float x = (v.size() % 97 == 5) ? std::nanf("") : u(rng);  // some missing values
      v.push_back(x);
      lod.push(x);
    }
    lod.seal();
    REQUIRE(lod.size() == v.size());
    const std::size_t n = v.size();
    check_same(lod.query(0, n), brute(v, 0, n));
    check_same(lod.all(), brute(v, 0, n));
    std::uniform_int_distribution<std::size_t> pick(0, n);
    for (int t = 0; t < 400; ++t) {
      std::size_t i = pick(rng), j = pick(rng);
      if (i > j) std::swap(i, j);
      CAPTURE(n);
      CAPTURE(i);
      CAPTURE(j);
      check_same(lod.query(i, j), brute(v, i, j));
    }
    for (std::size_t i : {std::size_t{0}, std::size_t{16}, std::size_t{32}, n / 2})  // aligned and tiny ranges
      for (std::size_t w : {std::size_t{1}, std::size_t{2}, std::size_t{16}, std::size_t{64}, std::size_t{1000}})
        if (i + w <= n) check_same(lod.query(i, i + w), brute(v, i, i + w));
  }
  CHECK(lod.levels() >= 9);  // 5779 points: buckets of 16 .. 8192
  CHECK(lod.query(5, 5).empty());
  CHECK(lod.query(10, 3).empty());
  const RunAgg nan_only = lod.query(5, 6);  // point 5 is NaN (5 % 97 == 5)
  CHECK(nan_only.empty());
}

TEST_CASE("read_run: a long run's summary per step and per pixel column equals SQL over the steps table") {
  gb::tools::SynthOptions o;
  o.long_steps = 3000;
  o.layers = 2;
  Fixture f(o);
  const gb::query::TraceDb db(f.path);
  const RunData r = read_run(db);
  REQUIRE(r.size() == 3000);
  CHECK(r.steps.front() == 0);
  CHECK(r.steps.back() == 2999);
  CHECK(r.has_phases());
  CHECK(r.at(RunSeries::loss).at(1234) ==
        doctest::Approx(sql_real(f.path, "SELECT loss FROM steps WHERE step = 1234")).epsilon(1e-6));
  CHECK(r.at(RunSeries::step_ns).at(77) ==
        doctest::Approx(sql_real(f.path, "SELECT end_ns - start_ns FROM steps WHERE step = 77")).epsilon(1e-6));
  CHECK(r.at(RunSeries::samples_per_s).at(900) ==
        doctest::Approx(sql_real(f.path, "SELECT samples * 1e9 / (end_ns - start_ns) FROM steps WHERE step = 900"))
            .epsilon(1e-6));
  CHECK(r.at(RunSeries::tokens_per_s).at(900) ==
        doctest::Approx(256 * r.at(RunSeries::samples_per_s).at(900)).epsilon(1e-5));
  CHECK(std::isnan(r.at(RunSeries::grad_norm).at(static_cast<std::size_t>(f.synth.nan_step))));  // NULL in the file
  // 100 pixel columns over steps 0..3000: each column's loss maximum and minimum is SQL's over its steps.
  const std::vector<std::size_t> b = r.column_bounds(0, 3000, 100);
  REQUIRE(b.size() == 101);
  CHECK(b.front() == 0);
  CHECK(b.back() == 3000);
  for (int c = 0; c < 100; c += 7) {
    const RunAgg a = r.at(RunSeries::loss).query(b[static_cast<std::size_t>(c)], b[static_cast<std::size_t>(c + 1)]);
    const std::string where = " FROM steps WHERE step >= " + std::to_string(b[static_cast<std::size_t>(c)]) +
                              " AND step < " + std::to_string(b[static_cast<std::size_t>(c + 1)]);
    CAPTURE(c);
    CHECK(a.n == 30);
    CHECK(a.max == doctest::Approx(sql_real(f.path, "SELECT max(loss)" + where)).epsilon(1e-6));
    CHECK(a.min == doctest::Approx(sql_real(f.path, "SELECT min(loss)" + where)).epsilon(1e-6));
  }
  // The spike's column holds the spike.
  const std::size_t spike = static_cast<std::size_t>(f.synth.spike_step);
  CHECK(r.at(RunSeries::loss).query(spike - 5, spike + 5).max ==
        doctest::Approx(sql_real(f.path, "SELECT max(loss) FROM steps")).epsilon(1e-6));
  // step_memory: device 0, its peaks per step.
  REQUIRE(r.devices == std::vector<int>{0});
  CHECK(r.memory[0].allocated_peak.at(2500) ==
        doctest::Approx(sql_real(f.path, "SELECT allocated_peak FROM step_memory WHERE step = 2500")).epsilon(1e-6));
  CHECK(r.memory[0].reserved_peak.all().max ==
        doctest::Approx(sql_real(f.path, "SELECT max(reserved_peak) FROM step_memory")).epsilon(1e-6));
  CHECK(r.nearest(1500.4) == 1500);
  CHECK(r.serial != 0);
  CHECK(read_run(db).serial != r.serial);  // each read is new data (views keyed by it recompute)
  CHECK(r.index_of(2999.5) == 3000);
}

TEST_CASE("TraceModel of a long run: steps() holds the detail steps, run() every step, loaded in the background") {
  gb::tools::SynthOptions o;
  o.long_steps = 2500;
  o.layers = 2;
  Fixture f(o);
  TraceModel m(f.path, kSync);
  CHECK_FALSE(m.detail().all());
  CHECK(static_cast<std::int64_t>(m.steps().size()) == f.synth.detail_steps);
  CHECK(m.step(1002));
  CHECK_FALSE(m.step(1500));  // summary only
  CHECK(m.detail().nearest(1500).before == 1004);
  CHECK(m.detail().nearest(1500).after == 1860);  // the anomaly window before the spike at 1875
  CHECK(m.end_ns() >= sql(f.path, "SELECT max(end_ns) FROM steps"));
  CHECK_FALSE(m.run().loading());
  CHECK(m.run().data().size() == 2500);
  CHECK(m.loading().find("run summary") == std::string::npos);
}

TEST_CASE("TraceModel of an ordinary trace: every step has detail; the run has no time split or step_memory") {
  Fixture f;
  TraceModel m(f.path, kSync);
  CHECK(m.detail().all());
  CHECK(m.steps().size() == 6);
  const RunData& r = m.run().data();
  REQUIRE(r.size() == 6);
  CHECK_FALSE(r.has_phases());
  CHECK(r.at(RunSeries::loss).any());
  CHECK(r.at(RunSeries::lr).any());
  CHECK_FALSE(r.at(RunSeries::samples_per_s).any());
  CHECK(r.devices.empty());
}

TEST_CASE("a point set after its seal (a step_memory row that came late) rebuilds its buckets and the whole") {
  SeriesLod s;
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) s.push(std::nan("")), v.push_back(std::nan(""));
  s.seal();
  CHECK_FALSE(s.any());
  for (int i : {3, 17, 500, 999}) s.set(static_cast<std::size_t>(i), i * 2.0), v[static_cast<std::size_t>(i)] = i * 2.0;
  s.seal();
  CHECK(s.all().n == 4);
  CHECK(s.all().min == 6);
  CHECK(s.all().max == 1998);
  CHECK(s.query(0, 1000).sum == doctest::Approx(2 * (3 + 17 + 500 + 999)));
  CHECK(s.query(16, 600).n == 2);
  CHECK(s.query(16, 600).first == 34);
  CHECK(s.query(16, 600).last == 1000);
  s.set(500, 1.0);  // replaced, not added
  for (int i = 0; i < 50; ++i) s.push(7);
  s.seal();
  CHECK(s.all().n == 54);
  CHECK(s.all().min == 1);
  CHECK(s.query(400, 600).max == 1);
}

TEST_CASE("RunModel::extend: appended steps, step_memory rows set in place or kept until their step comes") {
  RunModel m;
  m.load(nullptr);
  auto step = [](std::int64_t s) {
    RunStep r;
    r.step = s, r.start_ns = s * 100, r.end_ns = s * 100 + 50, r.loss = 1.0 / (1 + s), r.samples = 10;
    return r;
  };
  CHECK(m.extend({step(0), step(1), step(2)}, {{0, 0, 100, 200}, {2, 0, 300, 400}, {3, 0, 999, 999}}) == 3);
  const RunData& d = m.data();
  const std::uint64_t serial = d.serial;
  REQUIRE(d.size() == 3);
  REQUIRE(d.devices == std::vector<int>{0});
  CHECK(d.memory[0].allocated_peak.at(0) == 100);
  CHECK(std::isnan(d.memory[0].allocated_peak.at(1)));
  CHECK(d.memory[0].reserved_peak.at(2) == 400);
  CHECK(m.held_memory_rows() == 1);                           // step 3's row: its step is not there yet
  CHECK(m.extend({step(1), step(3)}, {{1, -1, 5, 6}}) == 1);  // step 1 again is skipped
  CHECK(d.serial != serial);
  REQUIRE(d.size() == 4);
  CHECK(d.steps == std::vector<std::int64_t>{0, 1, 2, 3});
  CHECK(d.memory.size() == 2);  // the cpu came: before device 0, NaN where it had no row
  CHECK(d.devices == std::vector<int>{-1, 0});
  CHECK(d.memory[0].allocated_peak.at(1) == 5);
  CHECK(std::isnan(d.memory[0].allocated_peak.at(0)));
  CHECK(d.memory[1].allocated_peak.at(3) == 999);  // the held row, now set
  CHECK(d.memory[1].allocated_peak.all().max == 999);
  CHECK(m.held_memory_rows() == 0);
  CHECK(d.at(RunSeries::samples_per_s).at(3) == doctest::Approx(10 * 1e9 / 50));
  const std::uint64_t before = d.serial;
  CHECK(m.extend({}, {}) == 0);
  CHECK(d.serial == before);  // nothing changed: the views keep their columns
}
