// tests/viewer/app_test.cpp — the App's error state, rendered headless: corrupt, empty, future-version and
// missing files show the error banner (and the screenshot still succeeds); a good trace shows none.
#include "viewer/screenshot.h"

#include <fstream>

#include "viewer/colors.h"

using namespace gb::viewer;

TEST_CASE("unreadable traces render the error banner, never crash") {
  SKIP_WITHOUT_XVFB();
  TempDir tmp;
  const std::string empty = tmp.file("empty.db"), corrupt = tmp.file("corrupt.db"), future = tmp.file("future.db"),
                    good = tmp.file("good.db");
  std::ofstream(empty).close();
  {
    std::ofstream out(corrupt, std::ios::binary);
    out << "SQLite format 3";
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>((i * 131) & 0xff));
  }
  gb::tools::write_synthetic_trace(future, {.steps = 1, .layers = 1});
  sql_int(future, "PRAGMA user_version = 99");
  gb::tools::write_synthetic_trace(good, {.steps = 2, .layers = 2});
  for (const std::string& f : {empty, corrupt, future, tmp.file("missing.db")}) {
    auto png = shot::take(f, "timeline", tmp.file("e.png"), "1000x640");
    REQUIRE(png);
    CHECK_MESSAGE(png->count(color::kErrorBanner) > 20000, f);
  }
  auto ok = shot::take(good, "timeline", tmp.file("ok.png"), "1000x640");
  REQUIRE(ok);
  CHECK(ok->count(color::kErrorBanner) == 0);
}
