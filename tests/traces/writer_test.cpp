// tests/traces/writer_test.cpp — traces/writer.cpp: interning, meta, the 100 ms commit, surviving SIGKILL, errors.
#include "traces/writer.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "traces/error.h"
#include "traces/reader.h"
#include "traces/schema.h"
#include "traces/temp_dir.h"

using namespace gb::trace;
using namespace std::chrono_literals;

TEST_CASE("intern stores each text once and returns the same id") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  Id a = w.intern("matmul");
  Id b = w.intern("add");
  CHECK(a != b);
  for (int i = 0; i < 100; ++i) CHECK(w.intern(i % 2 ? "matmul" : "add") == (i % 2 ? a : b));
  w.close();
  CHECK(sql_int(path, "SELECT count(*) FROM strings") == 2);
  CHECK(sql_int(path, "SELECT count(*) FROM strings WHERE text = 'matmul'") == 1);
  Reader r(path);
  CHECK(r.string(a) == "matmul");
  CHECK(r.string(b) == "add");
  CHECK_FALSE(r.string(999).has_value());
}

TEST_CASE("meta rows, WAL while open, indexes and a single file after close") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  w.set_meta("device_name", "cpu");
  w.flush();
  CHECK(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type='index' AND name='memory_events_device_t'") == 0);
  w.close();
  CHECK(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type='index' AND name='memory_events_device_t'") == 1);
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  Reader r(path);
  CHECK(r.schema_version() == kSchemaVersion);
  CHECK(r.meta("schema_version") == std::to_string(kSchemaVersion));
  CHECK(r.meta("glassbox_version").has_value());
  CHECK(r.meta("started_at").value().size() == 20);  // 2024-01-02T03:04:05Z
  CHECK(r.meta("device_name") == "cpu");
  CHECK(r.meta("closed_cleanly") == "1");
  CHECK_FALSE(r.meta("no_such_key").has_value());
}

TEST_CASE("a second writer replaces an existing trace") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  {
    Writer w(path);
    w.add(CounterRecord{1, w.intern("x"), 1.0});
  }
  Writer(path).close();
  CHECK(sql_int(path, "SELECT count(*) FROM counters") == 0);
}

TEST_CASE("rows are committed within about 100 ms while events flow") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  Id n = w.intern("op");
  for (int i = 1; i <= 10; ++i) w.add(SpanRecord{.id = span_id(1, i), .name_id = n, .thread_id = 1, .start_ns = i, .end_ns = i + 1});
  CHECK(sql_int(path, "SELECT count(*) FROM spans") == 0);  // still in the open transaction
  std::this_thread::sleep_for(150ms);
  w.add(SpanRecord{.id = span_id(1, 11), .name_id = n, .thread_id = 1, .start_ns = 11, .end_ns = 12});  // commits the first ten
  CHECK(sql_int(path, "SELECT count(*) FROM spans") == 10);
  w.flush();
  CHECK(sql_int(path, "SELECT count(*) FROM spans") == 11);
  w.close();
}

TEST_CASE("a writer killed with SIGKILL leaves a readable file with every event older than 200 ms") {
  TempDir tmp;
  std::string path = tmp.file("killed.db");
  // The child logs each event's write time here after add() returns; the parent checks those against the file.
  constexpr std::size_t kMax = 1 << 20;
  auto* log = static_cast<std::atomic<std::int64_t>*>(mmap(nullptr, sizeof(std::atomic<std::int64_t>) * (kMax + 1),
                                                           PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  REQUIRE(log != MAP_FAILED);
  auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      Writer w(path);
      Id n = w.intern("op");
      for (std::int64_t i = 1; i < static_cast<std::int64_t>(kMax); ++i) {
        std::int64_t t = now_ns();
        w.add(SpanRecord{.id = span_id(1, i), .name_id = n, .thread_id = 1, .start_ns = t, .end_ns = t + 1});
        log[i].store(t);
        log[0].store(i);
        std::this_thread::sleep_for(50us);
      }
    } catch (...) {
    }
    _exit(0);
  }
  std::this_thread::sleep_for(700ms);
  std::int64_t killed_at = now_ns();
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));

  std::int64_t written = log[0].load();
  std::int64_t old = 0;  // events written more than 200 ms before the kill
  while (old < written && log[old + 1].load() < killed_at - 200'000'000) ++old;
  MESSAGE("child wrote " << written << " events, " << old << " of them older than 200 ms");
  CHECK(old > 0);
  Reader r(path);
  auto spans = r.all<SpanRecord>();
  REQUIRE(static_cast<std::int64_t>(spans.size()) >= old);
  for (std::int64_t i = 0; i < old; ++i) {
    CHECK(spans[static_cast<std::size_t>(i)].id == span_id(1, i + 1));
    CHECK(spans[static_cast<std::size_t>(i)].start_ns == log[i + 1].load());
  }
  CHECK(r.string(spans[0].name_id) == "op");
  munmap(log, sizeof(std::atomic<std::int64_t>) * (kMax + 1));
}

TEST_CASE("a trace that cannot be created fails with one line naming the path and what to do") {
  TempDir tmp;
  std::string missing = tmp.file("no/such/folder/t.db");
  CHECK_THROWS_WITH_AS(Writer{missing},
                       doctest::Contains(("cannot create trace '" + missing + "'").c_str()), Error);
  CHECK_THROWS_WITH_AS(Writer{missing}, doctest::Contains("check that the folder exists and is writable"), Error);
  CHECK_THROWS_WITH_AS(Writer{tmp.dir.string()}, doctest::Contains("it is a directory"), Error);
}

TEST_CASE("adding to a closed writer is an error, close is idempotent") {
  TempDir tmp;
  Writer w(tmp.file("t.db"));
  w.close();
  w.close();
  CHECK_THROWS_WITH_AS(w.add(CounterRecord{}), doctest::Contains("is closed"), Error);
}

TEST_CASE("a span id outside its thread's id range is refused; add_string keeps intern from reusing the id") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path);
  CHECK_THROWS_WITH_AS(w.add(SpanRecord{.id = 5, .thread_id = 1}), doctest::Contains("gb::trace::span_id"), Error);
  w.add_string(7, "seven");
  CHECK(w.intern("seven") == 7);
  CHECK(w.intern("eight") == 8);
  w.close();
  Reader r(path);
  CHECK(r.string(7) == "seven");
  CHECK(r.string(8) == "eight");
}

TEST_CASE("tick commits a transaction older than the commit interval, and only then") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  Writer w(path, WriterOptions{.commit_interval = std::chrono::milliseconds(50)});
  w.add(CounterRecord{1, w.intern("c"), 1.0});
  w.tick();  // too young: stays open
  CHECK(sql_int(path, "SELECT count(*) FROM counters") == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  w.tick();
  CHECK(sql_int(path, "SELECT count(*) FROM counters") == 1);
}
