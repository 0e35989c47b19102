// tests/engine/monitor/monitor_test_util.h — running a planted-fault program (faults.cpp) in a fresh process with
// only GLASSBOX_TRACE set, and reading what its trace says: anomalies with their op, module, parameter and node
// names, and single values, through a plain sqlite3 connection (what a user with `sqlite3` sees).
#pragma once

#include <sqlite3.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "traces/temp_dir.h"

struct AnomalyRow {
  int64_t step = -1;  // -1: NULL
  int kind = -1, severity = -1;
  std::string op;      // the name of the span the row names ("" when none)
  std::string module;  // modules.path of module_id ("" when none)
  std::string param;   // "<module path>.<param name>" of param_id ("" when none)
  std::string node;    // graph_nodes name of node_id ("" when none)
  bool has_node = false;
  double value = 0;
  std::string message;
  int64_t id = 0;
  int64_t cause_id = -1;  // -1: NULL
  std::string cause;
};

inline std::vector<AnomalyRow> read_anomalies(const std::string& path) {
  std::vector<AnomalyRow> out;
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  const char* sql = R"sql(
    SELECT ifnull(a.step, -1), a.kind, a.severity, ifnull(s.text, ''), ifnull(m.path, ''),
           CASE WHEN p.id IS NULL THEN '' WHEN pm.path = '' OR pm.path IS NULL THEN p.name ELSE pm.path || '.' || p.name END,
           ifnull(gs.text, ''), a.node_id IS NOT NULL, ifnull(a.value, 0), a.message, a.id, ifnull(a.cause_id, -1),
           ifnull(a.cause, '')
    FROM anomalies a
    LEFT JOIN spans sp ON sp.id = a.span_id LEFT JOIN strings s ON s.id = sp.name_id
    LEFT JOIN modules m ON m.id = a.module_id
    LEFT JOIN params p ON p.id = a.param_id LEFT JOIN modules pm ON pm.id = p.module_id
    LEFT JOIN graph_nodes g ON g.id = a.node_id LEFT JOIN strings gs ON gs.id = g.name_id
    ORDER BY a.t_ns, a.id)sql";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW) {
      AnomalyRow r;
      auto text = [&](int i) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i))); };
      r.step = sqlite3_column_int64(st, 0);
      r.kind = sqlite3_column_int(st, 1);
      r.severity = sqlite3_column_int(st, 2);
      r.op = text(3);
      r.module = text(4);
      r.param = text(5);
      r.node = text(6);
      r.has_node = sqlite3_column_int(st, 7) != 0;
      r.value = sqlite3_column_double(st, 8);
      r.message = text(9);
      r.id = sqlite3_column_int64(st, 10);
      r.cause_id = sqlite3_column_int64(st, 11);
      r.cause = text(12);
      out.push_back(r);
    }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Runs `glassbox_faults scenario` with GLASSBOX_TRACE=<dir>/scenario.db (plus `env`, e.g. "GLASSBOX_GRAPH_EVERY=5")
// and returns the trace's path, or "" when the program failed.
inline std::string run_fault(const TempDir& tmp, const std::string& scenario, const std::string& env = "") {
  std::string db = tmp.file(scenario + ".db");
  std::string cmd = "GLASSBOX_TRACE=" + db + " " + env + " " + GLASSBOX_FAULTS + " " + scenario + " > " +
                    tmp.file(scenario + ".out") + " 2>&1";
  return std::system(cmd.c_str()) == 0 ? db : "";
}

inline std::vector<AnomalyRow> of_kind(const std::vector<AnomalyRow>& rows, gb::trace::AnomalyKind k) {
  std::vector<AnomalyRow> out;
  for (const auto& r : rows)
    if (r.kind == static_cast<int>(k)) out.push_back(r);
  return out;
}

// The row with this id (nullptr when none).
inline const AnomalyRow* by_id(const std::vector<AnomalyRow>& rows, int64_t id) {
  for (const auto& r : rows)
    if (r.id == id) return &r;
  return nullptr;
}

inline int warnings(const std::vector<AnomalyRow>& rows) {
  int n = 0;
  for (const auto& r : rows) n += r.severity >= 1;
  return n;
}

// One number from the trace (-1 when the query finds no row).
inline double sql_double(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  double v = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_double(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}
