// tests/traces/tables_test.cpp — traces/tables.h: the declared tables are what traces/SCHEMA.md documents (every
// table, every column in order, every type), and what the file's CREATE statements and the codec are made from.
#include "traces/tables.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "traces/schema.h"

using namespace gb::trace;

namespace {

struct DocColumn {
  std::string name, type;
};

// The cells of a Markdown table row `| a | b \| c | d |` (an escaped \| stays inside its cell).
std::vector<std::string> md_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|' && line[i - 1] != '\\') {
      const std::size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return cells;
}

std::vector<std::string> md_split(const std::string& s) {  // "a, b" -> {"a", "b"}
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t at; (at = s.find(", ", from)) != std::string::npos; from = at + 2)
    out.push_back(s.substr(from, at - from));
  out.push_back(s.substr(from));
  return out;
}

// SCHEMA.md's tables: under each `### name ...` heading, the first `| column | type | meaning |` table; a row
// naming several columns (`start_ns, end_ns | INTEGER`, `offset_ns, scale | INTEGER, REAL`) is one per column.
std::map<std::string, std::vector<DocColumn>> documented_tables(const std::string& markdown) {
  std::map<std::string, std::vector<DocColumn>> tables;
  std::istringstream in(markdown);
  std::string line, heading;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.starts_with("### ")) {
      heading = line.substr(4, line.find(' ', 4) - 4);
      in_table = false;
    } else if (!heading.empty() && line.starts_with("| column | type |")) {
      in_table = true;
      tables[heading];
    } else if (in_table && line.starts_with("|---")) {
    } else if (in_table && line.starts_with("|")) {
      const std::vector<std::string> cells = md_cells(line);
      REQUIRE_MESSAGE(cells.size() >= 2, line);
      const std::vector<std::string> names = md_split(cells[0]);
      const std::vector<std::string> types =
          cells[1].starts_with("generated:") ? std::vector{cells[1]} : md_split(cells[1]);
      for (std::size_t i = 0; i < names.size(); ++i)
        tables[heading].push_back({names[i], types.size() == names.size() ? types[i] : types[0]});
    } else if (in_table) {
      in_table = false;
      heading.clear();  // one column table per heading
    }
  }
  return tables;
}

// How SCHEMA.md writes a declared column's type: `INTEGER PRIMARY KEY`; `INTEGER` (NOT NULL); `INTEGER NULL`;
// `generated: \`id >> 32\`` (GENERATED ALWAYS AS (id >> 32) VIRTUAL).
std::string documented_type(const ColumnInfo& c) {
  const std::string type(c.type), constraint(c.constraint);
  if (c.generated()) {
    const std::string open = "GENERATED ALWAYS AS (", close = ") VIRTUAL";
    return "generated: `" + constraint.substr(open.size(), constraint.size() - open.size() - close.size()) + "`";
  }
  if (constraint == "NOT NULL") return type;
  if (constraint.empty()) return type + " NULL";
  return type + " " + constraint;
}

std::string read_file(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("traces/SCHEMA.md documents every declared table and column, in order, with its type") {
  const std::string markdown = read_file(GLASSBOX_SCHEMA_MD);
  REQUIRE_MESSAGE(!markdown.empty(), "cannot read " GLASSBOX_SCHEMA_MD);
  const std::map<std::string, std::vector<DocColumn>> doc = documented_tables(markdown);
  CHECK(doc.size() == tables().size());
  CHECK(doc.size() == 22);
  for (const TableInfo& t : tables()) {
    const std::string name(t.name);
    auto it = doc.find(name);
    if (it == doc.end()) {
      FAIL_CHECK("table '" << name << "' is declared in traces/tables.h but traces/SCHEMA.md has no `### " << name
                           << "` section with a | column | type | meaning | table");
      continue;
    }
    const std::vector<DocColumn>& cols = it->second;
    for (std::size_t i = 0; i < std::max(cols.size(), t.columns.size()); ++i) {
      const std::string declared = i < t.columns.size() ? std::string(t.columns[i].name) : "(none)";
      const std::string documented = i < cols.size() ? cols[i].name : "(none)";
      CHECK_MESSAGE(declared == documented, "table '" << name << "' column " << i + 1 << ": traces/tables.h declares "
                                                      << declared << ", traces/SCHEMA.md documents " << documented
                                                      << "; make them say the same");
      if (i < t.columns.size() && i < cols.size() && declared == documented)
        CHECK_MESSAGE(documented_type(t.columns[i]) == cols[i].type,
                      "column " << name << "." << declared << ": traces/tables.h declares "
                                << documented_type(t.columns[i]) << ", traces/SCHEMA.md says " << cols[i].type);
    }
  }
  for (const auto& entry : doc) {
    bool declared = false;
    for (const TableInfo& t : tables()) declared = declared || t.name == entry.first;
    CHECK_MESSAGE(declared,
                  "traces/SCHEMA.md documents table '" << entry.first << "', which traces/tables.h does not declare");
  }
}

TEST_CASE("a table's columns: name, type, constraint, and the record field each binds") {
  using detail::Table;
  constexpr auto threads = Table<ThreadRecord>::columns;
  CHECK(std::tuple_size_v<decltype(threads)> == 5);
  CHECK(std::get<0>(threads).name == "id");
  CHECK(std::get<0>(threads).constraint == "PRIMARY KEY");
  CHECK(std::get<4>(threads).name == "rank");
  CHECK(std::get<4>(threads).constraint == "");
  CHECK(std::get<4>(threads).new_line);
  ThreadRecord r;
  r.rank = 3;
  CHECK(r.*(std::get<4>(threads).write) == 3);
  // spans: stored columns written from StoredSpan, generated ones read into SpanRecord
  constexpr auto spans = Table<detail::StoredSpan>::columns;
  CHECK(std::get<4>(spans).name == "dur_ns");
  CHECK(std::is_same_v<std::decay_t<decltype(std::get<4>(spans))>::read_row, detail::NoField>);
  CHECK(std::get<9>(spans).name == "thread_id");
  CHECK(std::get<9>(spans).constraint == "GENERATED ALWAYS AS (id >> 32) VIRTUAL");
  CHECK(std::is_same_v<std::decay_t<decltype(std::get<9>(spans))>::write_row, detail::NoField>);
  CHECK(Table<RankStepRecord>::constraints == "PRIMARY KEY (rank, step)");
  CHECK(Table<detail::MetaRow>::options == "WITHOUT ROWID");
}
