// tools/merge.cpp — `glassbox merge` (contract in merge.h): the ranks' traces on the reference rank's clock, in one
// file, by INSERT ... SELECT from each attached input.
#include "tools/merge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "traces/error.h"
#include "traces/query/format.h"
#include "traces/query/steps.h"
#include "traces/query/trace_db.h"
#include "traces/schema.h"
#include "traces/sqlite.h"

namespace gb::tools {

namespace {

using gb::trace::Error;
namespace fs = std::filesystem;

struct Input {
  std::string path;
  std::int64_t rank = 0;
  std::optional<std::int64_t> world_size;
  std::string host;
  std::optional<std::int64_t> started_unix_ns;
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> clock_sync;  // seq -> the barrier's start and end
  // rank time t -> reference time offset + t * scale
  double offset = 0, scale = 1;
  std::string aligned_by;
  std::optional<double> clock_error_ns;  // the alignment is within this of the truth (when the bounds met)
  int version = 0;                       // the file's schema version (4: no run summary, no detail windows)
};

Input read_input(const std::string& path) {
  Input in;
  in.path = path;
  gb::query::TraceDb db(path);  // the Reader's checks: a missing, damaged or newer file says so here
  if (db.reader().schema_version() < 4)
    throw Error("glassbox merge: '" + path + "' has schema version " + std::to_string(db.reader().schema_version()) +
                ", written before ranks had clock handshakes; run the job again with this glassbox to merge its ranks");
  const std::optional<std::int64_t> rank = db.meta_int("rank");
  if (!rank)
    throw Error("glassbox merge: '" + path +
                "' has no meta 'rank': it is not one rank of a data-parallel job. Merge "
                "the run.rank<N>.db files GLASSBOX_TRACE=run.db writes under mpirun (docs/GUIDE.md)");
  in.rank = *rank;
  in.version = db.reader().schema_version();
  in.world_size = db.meta_int("world_size");
  in.host = db.reader().meta("host").value_or("");
  in.started_unix_ns = db.meta_int("started_at_unix_ns");
  db.each(
      "SELECT s.seq, s.start_ns, s.end_ns FROM spans s JOIN strings n ON n.id = s.name_id "
      "JOIN threads t ON t.id = s.thread_id "
      "WHERE s.kind = ?1 AND n.text = 'clock_sync' AND t.role = ?2 AND s.seq IS NOT NULL ORDER BY s.seq",
      {static_cast<std::int64_t>(gb::trace::SpanKind::collective),
       static_cast<std::int64_t>(gb::trace::ThreadRole::communication)},
      [&](const gb::query::Row& r) {
        in.clock_sync[r.i64(0)] = {r.i64(1), r.i64(2)};
      });
  return in;
}

// One clock handshake of rank r against the reference: the offset o (reference time = r's time + o) at r's time
// `at`. A barrier releases every rank at one moment, after the last one entered and before any returned, so each of
// the handshake's barriers bounds o: ref.start - r.end <= o <= ref.end - r.start (a stamp a preempted thread took
// late only widens its bounds). The bounds of all the barriers intersect to a narrow interval (each rank is the
// last to arrive at some barrier): o is its middle. An empty intersection (a rank's clock jumped) falls back to the
// median of the end differences.
constexpr double kCrossedBoundsNs = 1000;
struct Handshake {
  double at = 0, offset = 0;
  double error = -1;  // half the interval's width: the offset is within this of the truth; -1: unknown (empty)
};
using Span = std::pair<std::int64_t, std::int64_t>;  // start, end

Handshake handshake(const std::vector<std::pair<Span, Span>>& barriers) {  // (rank r's, the reference's)
  double lo = -1e300, hi = 1e300;
  std::vector<double> at, ends;
  for (const auto& [r, ref] : barriers) {
    lo = std::max(lo, double(ref.first - r.second));
    hi = std::min(hi, double(ref.second - r.first));
    at.push_back(double(r.second));
    ends.push_back(double(ref.second - r.second));
  }
  auto median = [](std::vector<double> v) { return gb::query::summarize(std::move(v)).median; };
  // Bounds that cross by a hair are the clocks' drift over the handshake's few microseconds, or rounding.
  if (lo <= hi + kCrossedBoundsNs) return {median(at), (lo + hi) / 2, std::abs(hi - lo) / 2};
  return {median(at), median(ends), -1};
}

// The handshakes both ranks ran, in order: the clock_sync barriers they share (by the group's collective number),
// split where the numbers jump (init's and destroy's).
std::vector<Handshake> handshakes(const Input& r, const Input& ref) {
  std::vector<Handshake> out;
  std::vector<std::pair<Span, Span>> group;
  std::int64_t prev = 0;
  for (const auto& [seq, span] : r.clock_sync) {
    auto it = ref.clock_sync.find(seq);
    if (it == ref.clock_sync.end()) continue;
    if (!group.empty() && seq != prev + 1) {
      out.push_back(handshake(group));
      group.clear();
    }
    group.emplace_back(span, it->second);
    prev = seq;
  }
  if (!group.empty()) out.push_back(handshake(group));
  return out;
}

// ", within ±X" of the truth, or ", error unknown" (aligned_by says how well the clocks agree).
std::string error_text(double error_ns, bool unknown) {
  return unknown ? ", error unknown" : ", within \xc2\xb1" + gb::query::format_time(error_ns);
}

// How far two ranks' trace clocks may differ in rate: each process measures its tick rate over 5 ms when its trace
// starts (instrument/clock.h), ~1e-5 off on an idle machine but up to ~1e-3 when a preemption hits that
// measurement. A fit through two handshakes whose bounds met is trusted up to kMaxRate; one through a handshake that
// fell back to medians only up to kMaxRateMedian; beyond, the start handshake alone is safer.
constexpr double kMaxRate = 0.05, kMaxRateMedian = 1e-3;

// Rank r onto the reference.
void align(Input& r, const Input& ref, std::vector<std::string>& notes) {
  if (&r == &ref) {
    r.aligned_by = "reference";
    return;
  }
  const std::vector<Handshake> h = handshakes(r, ref);
  const std::string who = "rank " + std::to_string(r.rank);
  if (h.size() >= 2 && h.back().at > h.front().at) {
    const double rate = 1 + (h.back().offset - h.front().offset) / (h.back().at - h.front().at);
    const bool bounded = h.front().error >= 0 && h.back().error >= 0;
    if (std::abs(rate - 1) <= (bounded ? kMaxRate : kMaxRateMedian)) {
      r.scale = rate;
      r.offset = h.front().offset - h.front().at * (rate - 1);
      if (bounded) r.clock_error_ns = std::max(h.front().error, h.back().error);
      r.aligned_by = "clock_sync start and end" + error_text(r.clock_error_ns.value_or(0), !bounded);
      return;
    }
    notes.push_back(who + "'s two clock handshakes disagree (a rate of " + std::to_string(rate) +
                    "): aligned by the start handshake only");
  } else if (h.size() == 1) {
    notes.push_back(who +
                    " aligned by its start handshake only (the job did not call destroy_process_group): its "
                    "clock may drift by ~10 us per second of run");
  }
  if (!h.empty()) {
    r.offset = h.front().offset;
    if (h.front().error >= 0) r.clock_error_ns = h.front().error;
    r.aligned_by = "clock_sync start" + error_text(h.front().error, h.front().error < 0);
  } else if (r.started_unix_ns && ref.started_unix_ns) {
    r.offset = double(*r.started_unix_ns - *ref.started_unix_ns);
    r.aligned_by = "started_at_unix_ns";
    notes.push_back(who + " has no clock_sync handshake in common with rank " + std::to_string(ref.rank) +
                    ": aligned by the wall clock at each trace's start (off by the hosts' clock difference)");
  } else {
    throw Error("glassbox merge: '" + r.path + "' has neither a clock_sync handshake in common with '" + ref.path +
                "' nor meta started_at_unix_ns: its clock cannot be put on the others'");
  }
}

// SQL for a time column of rank `in` on the merged clock.
std::string time_sql(const Input& in, const std::string& col) {
  char buf[96];
  if (in.scale == 1.0) {
    std::snprintf(buf, sizeof buf, "(%lld + (%s))", static_cast<long long>(std::llround(in.offset)), col.c_str());
    return buf;
  }
  std::snprintf(buf, sizeof buf, "CAST(round(%.17g + (%s) * %.17g) AS INTEGER)", in.offset, col.c_str(), in.scale);
  return buf;
}

std::string sql_text(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// A read-only URI for ATTACH (the input is never written, even when its writer left a WAL file).
std::string ro_uri(const std::string& path) {
  std::string u = "file:";
  for (char c : fs::absolute(path).string()) {
    if (c == '?' || c == '#' || c == '%') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      u += buf;
    } else {
      u += c;
    }
  }
  return u + "?mode=ro";
}

class Out {
 public:
  explicit Out(const std::string& path) : path_(path) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK) {
      std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      throw Error("glassbox merge: cannot create '" + path + "' (" + why +
                  "); check the folder exists and is writable");
    }
  }
  ~Out() { sqlite3_close(db_); }
  void exec(const std::string& sql) { gb::trace::detail::exec(db_, path_, sql.c_str(), __FILE__, __LINE__); }
  // The stored columns of the attached input's `table` (an older file lacks the newer ones).
  std::set<std::string, std::less<>> source_columns(std::string_view table) {
    gb::trace::detail::Stmt s(db_, path_, "PRAGMA src.table_xinfo(" + std::string(table) + ")", __FILE__, __LINE__);
    std::set<std::string, std::less<>> cols;
    while (s.step(__FILE__, __LINE__)) cols.emplace(reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1)));
    return cols;
  }
  std::int64_t scalar(const std::string& sql) {
    gb::trace::detail::Stmt s(db_, path_, sql, __FILE__, __LINE__);
    return s.step(__FILE__, __LINE__) ? sqlite3_column_int64(s.get(), 0) : 0;
  }
  void close() {
    const int rc = sqlite3_close(db_);
    db_ = nullptr;
    if (rc != SQLITE_OK) throw Error("glassbox merge: closing '" + path_ + "' failed: " + sqlite3_errstr(rc));
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// One table's rows from the attached input (src) into the output: INSERT INTO <table> (<its stored columns>) SELECT
// <each one's expression> FROM src.<table> s <then>. The columns are the schema's (traces/tables.h), each copied as
// s.<column> unless `exprs` gives its expression ("" leaves the column out: its default); a nullable column the
// input's older schema version lacks is NULL. An expression for a column the table does not have is this file's
// bug: std::logic_error.
using Exprs = std::map<std::string, std::string, std::less<>>;
class Copy {
 public:
  explicit Copy(std::string_view table, Exprs exprs = {}) : table_(table), exprs_(std::move(exprs)) {}
  Copy& from(std::string_view source) { from_ = source; return *this; }    // another table of the input
  Copy& then(std::string tail) { tail_ = std::move(tail); return *this; }  // WHERE ..., ORDER BY ...
  Copy& or_replace() { verb_ = "INSERT OR REPLACE INTO "; return *this; }
  Copy& distinct() { distinct_ = true; return *this; }
  void run(Out& o) const {
    const gb::trace::TableInfo& t = gb::trace::table(table_);
    for (const auto& e : exprs_)
      if (!t.find(e.first))
        throw std::logic_error("glassbox merge: table '" + std::string(table_) + "' has no column '" + e.first + "'");
    const std::string source = std::string(from_.empty() ? table_ : from_);
    const std::set<std::string, std::less<>> has = o.source_columns(source);
    std::string cols, values;
    for (const gb::trace::ColumnInfo& c : t.columns) {
      if (c.generated()) continue;
      const auto e = exprs_.find(c.name);
      if (e != exprs_.end() && e->second.empty()) continue;
      std::string v = e != exprs_.end() ? e->second : "s." + std::string(c.name);
      if (e == exprs_.end() && !has.contains(c.name)) {
        if (!c.constraint.empty()) throw Error("glassbox merge: table '" + source + "' of the input has no column '" +
                                            std::string(c.name) + "'; the file is damaged");
        v = "NULL";
      }
      (cols += cols.empty() ? "" : ", ") += c.name;
      (values += values.empty() ? "" : ", ") += v;
    }
    o.exec(verb_ + std::string(table_) + " (" + cols + ") SELECT " + (distinct_ ? "DISTINCT " : "") + values +
           " FROM src." + source + " s" + (tail_.empty() ? "" : " " + tail_));
  }

 private:
  std::string_view table_, from_;
  Exprs exprs_;
  std::string tail_, verb_ = "INSERT INTO ";
  bool distinct_ = false;
};

// INSERT [OR REPLACE] INTO <table> (<its stored columns>) VALUES (...), ...: each row's SQL values in the schema's
// column order, as many as the table has.
std::string values_sql(std::string_view verb, std::string_view table,
                       const std::vector<std::vector<std::string>>& rows) {
  const gb::trace::TableInfo& t = gb::trace::table(table);
  std::size_t n = 0;
  for (const gb::trace::ColumnInfo& c : t.columns) n += !c.generated();
  std::string sql = std::string(verb) + " INTO " + std::string(table) + " (" + t.stored_columns() + ") VALUES ";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string row;
    for (const std::string& v : rows[i]) (row += row.empty() ? "" : ", ") += v;
    if (rows[i].size() != n)
      throw std::logic_error("glassbox merge: " + std::to_string(rows[i].size()) + " values for the " +
                             std::to_string(n) + " columns of table '" + std::string(table) + "'");
    sql += (i ? ", (" : "(") + row + ")";
  }
  return sql;
}

// One rank's rows into the output (attached as src). The reference rank (first) brings its per-process tables too.
void copy_rank(Out& o, const Input& in, bool reference, MergeResult& result) {
  const std::string R = std::to_string(in.rank);
  const std::int64_t thread_base = reference ? 0 : o.scalar("SELECT coalesce(max(id), 0) + 1 FROM threads");
  const std::string tb = std::to_string(thread_base);
  const std::string sb = std::to_string(thread_base << gb::trace::kSpanIdThreadShift);  // span ids move with thread
  auto T = [&](const std::string& col) { return time_sql(in, col); };
  auto S = [&](const std::string& col) { return "(SELECT new FROM smap WHERE old = " + col + ")"; };
  auto span = [&](const std::string& col) { return "(" + col + " + " + sb + ")"; };

  o.exec("ATTACH DATABASE " + sql_text(ro_uri(in.path)) + " AS src");
  o.exec("BEGIN");  // one transaction per rank: an attached file detaches only outside one
  // strings: each text once; smap takes this rank's ids to the output's
  if (reference)
    Copy("strings").run(o);
  else
    Copy("strings", {{"id", ""}})
        .distinct()
        .then("WHERE NOT EXISTS (SELECT 1 FROM main.strings m WHERE m.text = s.text)")
        .run(o);
  o.exec(
      "CREATE TEMP TABLE smap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
      "INSERT OR IGNORE INTO smap SELECT s.id, m.id FROM src.strings s JOIN main.strings m ON m.text = s.text");
  // modules and params: the reference's; the others' ids name the reference's of the same path
  if (reference) {
    Copy("modules").run(o);
    Copy("params").run(o);
  }
  o.exec(
      "CREATE TEMP TABLE mmap (old INTEGER PRIMARY KEY, new INTEGER);"
      "INSERT OR IGNORE INTO mmap SELECT s.id, m.id FROM src.modules s JOIN main.modules m ON m.path = s.path;"
      "CREATE TEMP TABLE pmap (old INTEGER PRIMARY KEY, new INTEGER);"
      "INSERT OR IGNORE INTO pmap SELECT p.id, q.id FROM src.params p JOIN src.modules sm ON sm.id = p.module_id "
      "JOIN main.modules m ON m.path = sm.path JOIN main.params q ON q.module_id = m.id AND q.name = p.name");
  const std::string M = "(SELECT new FROM mmap WHERE old = s.module_id)";

  Copy("threads", {{"id", "s.id + " + tb}, {"rank", R}}).run(o);
  Copy("spans", {{"id", span("s.id")},
                 {"name_id", "coalesce(" + S("s.name_id") + ", 0)"},
                 {"start_ns", T("s.start_ns")},
                 {"dur_ns", T("s.start_ns + s.dur_ns") + " - " + T("s.start_ns")},
                 {"module_id", M}})
      .then("ORDER BY s.id")
      .run(o);
  Copy("instants", {{"id", ""},  // new ids, in the input's order
                    {"t_ns", T("s.t_ns")},
                    {"name_id", "coalesce(" + S("s.name_id") + ", 0)"},
                    {"thread_id", "s.thread_id + " + tb},
                    {"span_id", span("s.span_id")}})
      .then("ORDER BY s.id")
      .run(o);
  Copy("op_details", {{"span_id", span("s.span_id")}, {"input_shapes", S("s.input_shapes")}, {"dtypes", S("s.dtypes")}})
      .run(o);
  Copy("kernels", {{"span_id", span("s.span_id")}, {"launch_span_id", span("s.launch_span_id")}}).run(o);
  Copy("collectives",
       {{"span_id", span("s.span_id")}, {"reduce_op", S("s.reduce_op")}, {"queued_ns", T("s.queued_ns")}})
      .run(o);
  Copy("rank_steps", {{"rank", R}, {"start_ns", T("s.start_ns")}, {"end_ns", T("s.end_ns")}}).from("steps").run(o);
  // New ids in (t_ns, id) order after the ranks merged before; cause_id (schema version 6) follows its anomaly.
  const bool causes = in.version >= 6;
  o.exec("DROP TABLE IF EXISTS temp.amap; CREATE TEMP TABLE amap (old INTEGER PRIMARY KEY, new INTEGER)");
  o.exec(
      "INSERT INTO amap SELECT s.id, (SELECT coalesce(max(id), 0) FROM anomalies) + ROW_NUMBER() OVER (ORDER BY "
      "s.t_ns, s.id) FROM src.anomalies s");
  Copy("anomalies", {{"id", "(SELECT new FROM amap WHERE old = s.id)"},
                     {"t_ns", T("s.t_ns")},
                     {"span_id", span("s.span_id")},
                     {"node_id", reference ? "s.node_id" : "NULL"},
                     {"module_id", M},
                     {"param_id", "(SELECT new FROM pmap WHERE old = s.param_id)"},
                     {"rank", R},
                     {"cause_id", causes ? "(SELECT new FROM amap WHERE old = s.cause_id)" : "NULL"}})
      .then("ORDER BY s.t_ns, s.id")
      .run(o);
  if (reference) {
    // Per-process tables; an input older than the schema has NULL in the columns it lacks (Copy).
    Copy("steps", {{"start_ns", T("s.start_ns")}, {"end_ns", T("s.end_ns")}}).run(o);
    if (in.version >= 5) {  // the run summary's tables (schema version 5)
      Copy("step_memory").run(o);
      Copy("detail_windows", {{"start_ns", T("s.start_ns")}, {"end_ns", T("s.end_ns")}}).run(o);
    }
    Copy("graph_nodes").run(o);
    Copy("graph_edges").run(o);
    Copy("memory_events", {{"t_ns", T("s.t_ns")}}).run(o);
    Copy("oom_reports", {{"t_ns", T("s.t_ns")}}).run(o);
    Copy("grad_stats").run(o);
    Copy("counters", {{"t_ns", T("s.t_ns")}}).run(o);
    Copy("meta").then("WHERE s.key NOT IN ('rank', 'local_rank')").run(o);
  }
  Copy("meta", {{"key", "'rank" + R + ".' || s.key"}}).or_replace().run(o);
  if (in.clock_error_ns)
    o.exec(values_sql("INSERT OR REPLACE", "meta",
                      {{"'clock_error_ns.rank" + R + "'",
                        "'" + std::to_string(std::llround(*in.clock_error_ns)) + "'"}}));
  char scale[40];
  std::snprintf(scale, sizeof scale, "%.17g", in.scale);
  o.exec(values_sql("INSERT", "ranks",
                    {{R, sql_text(in.path), sql_text(in.host), std::to_string(std::llround(in.offset)), scale,
                      sql_text(in.aligned_by)}}));
  result.spans += o.scalar("SELECT count(*) FROM src.spans");
  result.collectives += o.scalar("SELECT count(*) FROM src.collectives");
  o.exec("DROP TABLE temp.smap; DROP TABLE temp.mmap; DROP TABLE temp.pmap");
  o.exec("COMMIT");
  o.exec("DETACH DATABASE src");
}

}  // namespace

MergeResult merge_traces(const std::vector<std::string>& inputs, const std::string& out) {
  if (inputs.size() < 2)
    throw Error("glassbox merge: give the traces of two or more ranks (run.rank0.db run.rank1.db ...), got " +
                std::to_string(inputs.size()));
  std::vector<Input> ins;
  for (const std::string& p : inputs) ins.push_back(read_input(p));
  std::error_code ec;
  for (const Input& in : ins)
    if (fs::exists(out) && fs::equivalent(out, in.path, ec))
      throw Error("glassbox merge: the output '" + out +
                  "' is one of the inputs; write the merged trace elsewhere "
                  "(-o run.db)");
  std::sort(ins.begin(), ins.end(), [](const Input& a, const Input& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < ins.size(); ++i) {
    if (ins[i].rank == ins[i - 1].rank)
      throw Error("glassbox merge: '" + ins[i - 1].path + "' and '" + ins[i].path + "' are both rank " +
                  std::to_string(ins[i].rank) + "; give each rank's trace once");
    if (ins[i].world_size != ins[0].world_size)
      throw Error("glassbox merge: '" + ins[i].path + "' is from a job of " +
                  std::to_string(ins[i].world_size.value_or(0)) + " ranks and '" + ins[0].path + "' from one of " +
                  std::to_string(ins[0].world_size.value_or(0)) + ": merge the ranks of one job");
  }
  MergeResult result;
  if (ins[0].world_size) {
    std::set<std::int64_t> given;
    for (const Input& in : ins) given.insert(in.rank);
    std::string missing;
    for (std::int64_t r = 0; r < *ins[0].world_size; ++r)
      if (!given.contains(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    if (!missing.empty())
      result.notes.push_back("the job had " + std::to_string(*ins[0].world_size) + " ranks; not given: " + missing);
  }
  for (Input& in : ins) align(in, ins[0], result.notes);
  // No time below zero: every rank moves by the same amount (the reference too).
  double lowest = 0;
  for (const Input& in : ins) lowest = std::min(lowest, in.offset);
  for (Input& in : ins) in.offset -= lowest;

  const std::string tmp = out + ".merging";
  fs::remove(tmp, ec);
  try {
    Out o(tmp);
    o.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA user_version = " +
           std::to_string(gb::trace::kSchemaVersion));
    o.exec(gb::trace::create_tables_sql());
    o.exec("CREATE INDEX merge_strings_text ON strings (text)");
    for (std::size_t i = 0; i < ins.size(); ++i) copy_rank(o, ins[i], i == 0, result);
    std::string ranks, from;
    for (const Input& in : ins) {
      ranks += (ranks.empty() ? "" : ",") + std::to_string(in.rank);
      from += (from.empty() ? "" : " ") + in.path;
    }
    o.exec(values_sql("INSERT OR REPLACE", "meta",
                      {{"'merged_ranks'", sql_text(ranks)}, {"'merged_from'", sql_text(from)}}));
    o.exec("DROP INDEX merge_strings_text");
    o.exec(gb::trace::create_indexes_sql());
    o.close();
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(out + suffix, ec);  // an earlier trace's, not this file's
  fs::rename(tmp, out, ec);
  if (ec) {
    fs::remove(tmp);
    throw Error("glassbox merge: cannot move the merged trace to '" + out + "' (" + ec.message() + ")");
  }
  for (const Input& in : ins)
    result.ranks.push_back(
        gb::trace::RankRecord{in.rank, in.path, in.host, std::llround(in.offset), in.scale, in.aligned_by});
  return result;
}

}  // namespace gb::tools
