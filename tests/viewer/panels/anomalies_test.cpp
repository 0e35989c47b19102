// tests/viewer/panels/anomalies_test.cpp — the anomalies list, rendered headless: the error and warning rows in
// their severity colours; a healthy run shows none.
#include "viewer/screenshot.h"

namespace {
std::int64_t reddish(const shot::Png& p) {  // the "error" severity text
  std::int64_t n = 0;
  for (int y = 60; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) {
      const auto c = p.at(x, y);
      const int r = (c >> 16) & 0xff, g = (c >> 8) & 0xff, b = c & 0xff;
      n += r > 200 && g < 130 && b < 130;
    }
  return n;
}
}  // namespace

TEST_CASE("anomalies screenshot: the planted NaN is listed as an error") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string sick = tmp.file("sick.db"), healthy = tmp.file("ok.db");
  gb::tools::write_synthetic_trace(sick, {.steps = 8, .layers = 4});
  gb::tools::write_synthetic_trace(healthy, {.steps = 8, .layers = 4, .nan_step = -2});
  auto a = shot::take(sick, "anomalies", tmp.file("a.png"));
  auto b = shot::take(healthy, "anomalies", tmp.file("b.png"));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(reddish(*a) > 20);
  CHECK(reddish(*b) == 0);
}

TEST_CASE("anomalies screenshot of real traced runs: log of zeros lists its errors; a healthy run lists none") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string sick = shot::engine_run(tmp, "log_zero"), healthy = shot::engine_run(tmp, "healthy");
  REQUIRE(!sick.empty());
  REQUIRE(!healthy.empty());
  auto a = shot::take(sick, "anomalies", tmp.file("a.png"));
  auto b = shot::take(healthy, "anomalies", tmp.file("b.png"));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(reddish(*a) > 20);
  CHECK(reddish(*b) == 0);
}
