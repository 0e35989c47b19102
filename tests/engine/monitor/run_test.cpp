// Tests engine/monitor/run.cpp: GLASSBOX_ANOMALY_CONF parsing (every key, clear errors), set_config, rolling
// windows (median and MAD), and that a session start resets the run.
#include <doctest/doctest.h>

#include <glassbox/glassbox.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "monitor/monitor.h"
#include "monitor/run.h"

TEST_CASE("parse_config reads key=value pairs over a base, and names a bad key or value with the valid keys") {
  gb::monitor::Config c = gb::monitor::parse_config("window=50,explode_factor=20.5,mode=raise,max_per_kind=3");
  CHECK(c.window == 50);
  CHECK(c.explode_factor == 20.5);
  CHECK(c.mode == gb::monitor::Mode::raise);
  CHECK(c.max_per_kind == 3);
  CHECK(c.warmup == gb::monitor::Config{}.warmup);  // untouched keys keep the base
  CHECK(gb::monitor::parse_config("", c).window == 50);
  CHECK_THROWS_WITH(
      gb::monitor::parse_config("windw=3"),
      doctest::Contains("GLASSBOX_ANOMALY_CONF: unknown key 'windw'; valid keys: mode, grad_stats_every"));
  CHECK_THROWS_WITH(gb::monitor::parse_config("window=-1"),
                    doctest::Contains("window=-1 is not a non-negative number"));
  CHECK_THROWS_WITH(gb::monitor::parse_config("window=2.5"), doctest::Contains("must be a whole number"));
  // found by fuzz/config_fuzz.cpp: a whole number beyond int64 (an undefined conversion before)
  CHECK_THROWS_WITH(gb::monitor::parse_config("window=5011111111111111111111111111"), doctest::Contains("too large"));
  CHECK_THROWS_WITH(gb::monitor::parse_config("window"), doctest::Contains("'window' is not key=value"));
  CHECK_THROWS_WITH(gb::monitor::parse_config("mode=loud"), doctest::Contains("unknown mode 'loud'"));
}

TEST_CASE("Window: median and scaled MAD over the last N values") {
  gb::monitor::detail::Window w(5);
  CHECK(std::isnan(w.median()));
  for (double v : {1.0, 2.0, 3.0, 4.0, 100.0}) w.push(v);
  CHECK(w.median() == 3.0);
  CHECK(w.mad() == doctest::Approx(1.4826 * 1.0));
  w.push(5.0);  // drops the oldest (1): {2, 3, 4, 100, 5}
  CHECK(w.median() == 4.0);
  CHECK(w.size() == 5);
  gb::monitor::detail::Window even(4);
  for (double v : {1.0, 2.0, 3.0, 10.0}) even.push(v);
  CHECK(even.median() == 2.5);
}

TEST_CASE("Window: the sorted bookkeeping gives the median and MAD of a brute-force sort at every push") {
  // 400 pushes of values with many repeats (ties in values and in deviations) through windows of odd and even size
  for (size_t cap : {1u, 2u, 7u, 20u}) {
    gb::monitor::detail::Window w(cap);
    std::vector<double> all;
    uint32_t seed = 12345;
    for (int i = 0; i < 400; ++i) {
      seed = seed * 1664525u + 1013904223u;
      const double v = static_cast<double>((seed >> 16) % 13) * 0.25 - 1.0;
      w.push(v);
      all.push_back(v);
      std::vector<double> last(all.end() - static_cast<std::ptrdiff_t>(std::min(all.size(), cap)), all.end());
      std::sort(last.begin(), last.end());
      const size_t n = last.size();
      const double med = n % 2 ? last[n / 2] : 0.5 * (last[n / 2 - 1] + last[n / 2]);
      std::vector<double> dev;
      for (double x : last) dev.push_back(std::fabs(x - med));
      std::sort(dev.begin(), dev.end());
      const double mad = 1.4826 * (n % 2 ? dev[n / 2] : 0.5 * (dev[n / 2 - 1] + dev[n / 2]));
      REQUIRE(w.size() == n);
      REQUIRE(w.median() == med);
      REQUIRE(w.mad() == mad);
    }
  }
  gb::monitor::detail::Window w(3);
  w.push(std::nan(""));
  w.push(INFINITY);
  CHECK(w.size() == 0);  // non-finite values are not pushed
}

TEST_CASE("set_config applies to the next session; a session start resets the run's state") {
  gb::monitor::Config c;
  c.grad_stats_every = 7;
  gb::monitor::set_config(c);
  CHECK(gb::monitor::config().grad_stats_every == 7);
  {
    gb::trace::Session session("/dev/null/not-a-dir/x.db");  // cannot record: warns, and nothing changes
  }
  auto& run = gb::monitor::detail::run();
  run.counts[0] = 5;
  {
    auto tmp = std::filesystem::temp_directory_path() / "glassbox-run-test.db";
    gb::trace::Session session(tmp.string());
    CHECK(run.counts[0] == 0);
    CHECK(run.cfg.grad_stats_every == 7);
    std::filesystem::remove(tmp);
  }
  gb::monitor::set_config(gb::monitor::Config{});
}
