// tests/viewer/worker_test.cpp — Worker: destroying it interrupts a running query instead of waiting for it.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "traces/query/trace_db.h"
#include "viewer/worker.h"

#include "tests/viewer/model_fixture.h"

using namespace gb::viewer;
using namespace gbtest;
using gb::trace::SpanKind;

TEST_CASE("Worker: destroying it interrupts a running query instead of waiting for it") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::tools::write_synthetic_trace(path, {.steps = 2, .layers = 2, .ops_per_layer = 1});
  std::atomic<bool> started{false}, finished{false}, threw{false};
  auto w = std::make_unique<Worker>(path);
  w->post([&](const gb::query::TraceDb* db) {
    started = true;
    if (!db) return;  // `finished` and `threw` stay false: the checks below fail
    try {  // ~10 s of SQLite work when not interrupted
      db->scalar("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50000000) SELECT count(*) FROM c");
    } catch (const std::exception&) {
      threw = true;
    }
    finished = true;
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well inside the query
  const auto a = std::chrono::steady_clock::now();
  w.reset();
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
  CHECK(ms < 200);
  CHECK(finished);
  CHECK(threw);  // SQLITE_INTERRUPT surfaces as an exception the job treats as cancelled
}
