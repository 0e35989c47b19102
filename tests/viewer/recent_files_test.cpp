// tests/viewer/recent_files_test.cpp — the recent-files list: most recent first, no duplicates, at most 10, saved.
#include <doctest/doctest.h>

#include <fstream>

#include "traces/temp_dir.h"
#include "viewer/recent_files.h"

using gb::viewer::RecentFiles;

TEST_CASE("recent files: push moves to the front, dedupes, caps, and persists") {
  TempDir tmp;
  const std::string file = tmp.file("cfg/glassbox/recent");
  {
    RecentFiles r(file);
    CHECK(r.paths().empty());
    CHECK(r.push("/a.db"));
    CHECK(r.push("/b.db"));
    CHECK(r.push("/a.db"));
    CHECK(r.paths() == std::vector<std::string>{"/a.db", "/b.db"});
    for (int i = 0; i < 20; ++i) r.push("/t" + std::to_string(i) + ".db");
    CHECK(r.paths().size() == gb::viewer::kMaxRecent);
    CHECK(r.paths().front() == "/t19.db");
  }
  RecentFiles again(file);
  CHECK(again.paths().size() == gb::viewer::kMaxRecent);
  CHECK(again.paths().front() == "/t19.db");
}

TEST_CASE("recent files: relative paths are stored absolute; an unwritable list still works in memory") {
  RecentFiles r("/proc/forbidden/recent");
  CHECK_FALSE(r.push("run.db"));
  REQUIRE(r.paths().size() == 1);
  CHECK(r.paths()[0].front() == '/');
}

TEST_CASE("recent files: XDG_CONFIG_HOME wins over HOME") {
  setenv("XDG_CONFIG_HOME", "/x", 1);
  CHECK(gb::viewer::recent_files_path() == "/x/glassbox/recent");
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "/home/u", 1);
  CHECK(gb::viewer::recent_files_path() == "/home/u/.config/glassbox/recent");
}
