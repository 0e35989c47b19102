// tests/viewer/async_cache_test.cpp — AsyncCache and AsyncSlot over real workers: nothing is read in the caller,
// answers (and "none") are kept by key up to the cap, a newer slot key supersedes a queued job without running it,
// the last answer stands in meanwhile, and an exception answers T{} instead of escaping the worker.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/viewer/model_fixture.h"
#include "viewer/async_cache.h"
#include "viewer/worker.h"

using namespace gb::viewer;
using namespace gbtest;

namespace {

// Holds a worker busy until release(): what is posted meanwhile stays queued.
struct Gate {
  std::atomic<bool> entered{false}, open{false};
  void hold(Worker& w) {
    w.post([this](const gb::query::TraceDb*) {
      entered = true;
      while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    while (!entered) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void release() { open = true; }
};

}  // namespace

TEST_CASE("AsyncCache: answers after the worker, keeps answers and 'none' by key, drops the oldest past the cap") {
  Fixture f({.steps = 2, .layers = 2, .ops_per_layer = 1});
  Worker w(f.path);
  AsyncCache<int, std::int64_t> cache(2);
  std::atomic<int> reads{0};
  auto read = [&](int key) {
    return [&reads, key](const gb::query::TraceDb& db) -> std::optional<std::int64_t> {
      ++reads;
      if (key < 0) return std::nullopt;  // "no such thing"
      return db.scalar("SELECT count(*) FROM spans") + key;
    };
  };
  const std::int64_t spans = sql(f.path, "SELECT count(*) FROM spans");
  Gate gate;
  gate.hold(w);
  CHECK(cache.get(1, w, read(1)) == nullptr);  // queued, not read in the caller
  CHECK(cache.pending(1));
  CHECK(cache.get(1, w, read(1)) == nullptr);  // asked again while queued: not posted twice
  gate.release();
  w.wait_idle();
  const auto one = cache.get(1, w, read(1));
  REQUIRE(one);
  CHECK(*one == spans + 1);
  CHECK_FALSE(cache.pending(1));
  CHECK(cache.get(1, w, read(1)) == one);  // kept
  CHECK(reads == 1);
  CHECK(cache.get(-1, w, read(-1)) == nullptr);
  w.wait_idle();
  CHECK(cache.get(-1, w, read(-1)) == nullptr);  // "none", kept: not read again
  CHECK_FALSE(cache.pending(-1));
  CHECK(cache.get(-1, w, read(-1)) == nullptr);
  CHECK(reads == 2);
  cache.get(2, w, read(2));  // a third answer: the oldest (1) is dropped
  w.wait_idle();
  CHECK(*cache.get(2, w, read(2)) == spans + 2);
  CHECK(*one == spans + 1);  // a holder's answer stays valid
  CHECK(cache.get(1, w, read(1)) == nullptr);  // read again
  CHECK(cache.pending(1));
  w.wait_idle();
  CHECK(reads == 4);
}

TEST_CASE("AsyncSlot: the last answer stands in, a newer key supersedes a queued one, exact() waits for its key") {
  Worker w("");
  AsyncSlot<std::array<std::int64_t, 3>, std::string> slot;
  std::atomic<int> runs{0};
  auto compute = [&](std::string s) {
    return [&runs, s](const gb::query::TraceDb*) {
      ++runs;
      return s;
    };
  };
  CHECK(slot.get({1, 0, 0}, w, compute("one")) == nullptr);
  w.wait_idle();
  CHECK(slot.pending());  // done: taken by the next get
  REQUIRE(slot.get({1, 0, 0}, w, compute("one")));
  CHECK_FALSE(slot.pending());
  CHECK(*slot.get({1, 0, 0}, w, compute("one")) == "one");

  Gate gate;
  gate.hold(w);
  CHECK(*slot.get({2, 0, 0}, w, compute("two")) == "one");  // queued; the last answer meanwhile
  CHECK(slot.pending());
  CHECK(slot.exact({3, 0, 0}, w, compute("three")) == nullptr);  // supersedes "two" before it runs
  gate.release();
  w.wait_idle();
  CHECK(*slot.get({3, 0, 0}, w, compute("three")) == "three");
  CHECK(runs == 2);  // "two" never ran
  slot.set({4, 0, 0}, "set");
  CHECK(*slot.exact({4, 0, 0}, w, compute("four")) == "set");
  w.wait_idle();
  CHECK(runs == 2);
}

TEST_CASE("AsyncSlot: an exception in the job answers T{} for its key") {
  Worker w("");
  AsyncSlot<int, std::string> slot;
  slot.get(1, w, [](const gb::query::TraceDb*) -> std::string { throw std::runtime_error("interrupted"); });
  w.wait_idle();
  const std::string* s = slot.exact(1, w, [](const gb::query::TraceDb*) { return std::string("again"); });
  REQUIRE(s);
  CHECK(s->empty());
  CHECK_FALSE(slot.pending());
}
