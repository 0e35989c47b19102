// tests/tools/tools_test_util.h — what several tests of the glassbox command share: a file's bytes (plain or
// gzipped), SQL run on a trace, `glassbox report`'s text, and a substring check that prints the text it searched.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <zlib.h>

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/report.h"
#include "traces/query/trace_db.h"

namespace toolstest {

// Whether `part` is in `text`; when not, the text is printed with the case's output.
inline bool has(const std::string& text, const std::string& part) {
  const bool found = text.find(part) != std::string::npos;
  if (!found) MESSAGE("missing: [" << part << "] in\n" << text);
  return found;
}

// A file's bytes.
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A .gz file's bytes, gunzipped.
inline std::string gunzip(const std::string& path) {
  gzFile g = gzopen(path.c_str(), "rb");
  REQUIRE(g != nullptr);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(g, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(g);
  return out;
}

// Runs SQL on the trace at `path` (to damage or edit it), requiring it to succeed.
inline void run_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO(sql << ": " << (err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// `glassbox report`'s text of the trace at `path`.
inline std::string report(const std::string& path, gb::tools::ReportOptions o = {}) {
  std::ostringstream out;
  gb::tools::write_report(gb::query::TraceDb(path), o, out);
  return out.str();
}

}  // namespace toolstest
