// tests/traces/query/follow_test.cpp — a trace being written, as its followers (`glassbox watch`, the viewer) read
// it: the writer's meta, whether its pid still exists on this host, and the state the two share.
#include "traces/query/follow.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "traces/temp_dir.h"
#include "traces/writer.h"

using namespace gb::query;

TEST_CASE("the writer's meta while the file is written, and after it closed") {
  TempDir tmp;
  const std::string path = tmp.file("run.db");
  gb::trace::Writer w(path);
  w.set_meta("command", "./train --steps 10");
  w.set_meta("pid", std::to_string(::getpid()));
  w.set_meta("detail", "first=5");
  w.flush();
  {
    TraceDb db(path);
    const WriterMeta m = read_writer_meta(db);
    CHECK(m.command == "./train --steps 10");
    CHECK(m.pid == std::to_string(::getpid()));
    CHECK(m.host == this_host());  // the Writer records it
    CHECK(m.detail == "first=5");
    CHECK_FALSE(m.closed());
    CHECK_FALSE(m.stopped_by);
    CHECK(m.writer_known(this_host()));
    CHECK_FALSE(m.writer_known("another-host"));
    CHECK_FALSE(writer_gone(m, this_host()));  // this process
    CHECK(follow_state(m, false) == FollowState::writing);
  }
  w.set_meta("stopped_by", "exit");
  w.close();
  TraceDb db(path);
  const WriterMeta m = read_writer_meta(db);
  CHECK(m.closed());
  CHECK(m.stopped_by == "exit");
  CHECK(follow_state(m, false) == FollowState::closed);
}

TEST_CASE("a writer gone: only a pid known on this host can be gone; the states") {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  ::waitpid(child, nullptr, 0);  // a pid that no longer exists
  WriterMeta m;
  m.pid = std::to_string(child);
  m.host = this_host();
  CHECK(writer_gone(m, this_host()));
  CHECK(follow_state(m, true) == FollowState::died);
  CHECK_FALSE(writer_gone(m, "another-host"));  // cannot tell
  m.pid = "12x";
  CHECK_FALSE(writer_gone(m, this_host()));  // not a pid
  m.pid.reset();
  CHECK_FALSE(writer_gone(m, this_host()));  // no pid recorded (older writers)
  m.stopped_by = "signal SIGTERM";
  CHECK(follow_state(m, true) == FollowState::stopped);  // the end is being written
  m.closed_cleanly = "1";
  CHECK(follow_state(m, true) == FollowState::closed);
}
