// traces/reader.h — typed queries over one glassbox trace file (schema traces/SCHEMA.md).
//
// Contract:
//   - Reader(path) opens the file read-only and validates it before any query: a missing file, a file that is not
//     SQLite, a truncated file, a SQLite file that is not a glassbox trace (user_version 0), a trace whose
//     schema version is newer than kSchemaVersion ("trace schema version 7 is newer than this glassbox reads (2);
//     upgrade glassbox"), and a trace missing a table or column each throw one gb::trace::Error line naming the
//     path. Versions 1..kSchemaVersion are read as they are.
//   - A trace whose writer was killed (WAL file left behind, no indexes) reads like any other, only slower.
//   - Queries return values; times are ns since the trace start; nothing is cached between calls.
//
//   gb::trace::Reader r("run.db");
//   for (const auto& op : r.op_table()) printf("%s %lld calls\n", op.name.c_str(), (long long)op.calls);
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/records.h"

struct sqlite3;

namespace gb::trace {

// One item of the timeline at a level of detail: a span (count == 1), or a run of `count` consecutive spans each
// shorter than the fold threshold, folded into one item from the first's start to the latest end in the run.
struct SpanItem {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t count = 1;
  SpanRecord span;  // the span itself, or the first span of a folded run
};

// One row of the aggregated op table (PyTorch's key_averages): self = total minus the time of direct children.
struct OpRow {
  Id name_id = 0;
  std::string name;
  std::int64_t calls = 0;
  std::int64_t self_ns = 0;
  std::int64_t total_ns = 0;
  double avg_ns = 0;  // total_ns / calls
};

constexpr std::int64_t kTimeMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kTimeMax = std::numeric_limits<std::int64_t>::max();

// How many SQLite statements this thread has prepared or executed through glassbox (traces and queries): the
// viewer's tests assert that its UI thread runs none while it draws frames.
std::int64_t sqlite_statements_on_this_thread();

class Reader {
 public:
  explicit Reader(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const { return version_; }
  std::optional<std::string> meta(std::string_view key) const;
  std::optional<std::string> string(Id id) const;  // strings.text

  // Every row of R's table (any record of records.h), in insertion order.
  template <class R>
  std::vector<R> all() const;

  // Spans of one thread overlapping [t0_ns, t1_ns], by start time; runs of consecutive spans shorter than
  // fold_below_ns come back folded (fold_below_ns = 0: every span on its own). Relies on the span-id layout of
  // records.h (id order = start order within a thread) and on spans of a thread nesting properly, which is what
  // the probes write; costs O(log n) lookups plus the rows returned.
  std::vector<SpanItem> spans(Id thread_id, std::int64_t t0_ns = kTimeMin, std::int64_t t1_ns = kTimeMax,
                              std::int64_t fold_below_ns = 0) const;
  // How many spans of one thread start in [t0_ns, t1_ns]: the difference of the two ids the binary search finds
  // (exact while the thread's ids are dense, as the probes write them). O(log n) lookups, no rows read.
  std::int64_t span_count(Id thread_id, std::int64_t t0_ns, std::int64_t t1_ns) const;
  // Gradient statistics, optionally of one step and/or one parameter, by (step, param_id).
  std::vector<GradStatRecord> grad_stats(OptId step = {}, OptId param_id = {}) const;
  std::vector<AnomalyRecord> anomalies() const;  // by time
  // Spans of `kind` aggregated per name, by total time descending (ties: by name).
  std::vector<OpRow> op_table(SpanKind kind = SpanKind::op) const;

 private:
  void validate();
  std::string path_;
  sqlite3* db_ = nullptr;
  int version_ = 0;
};

}  // namespace gb::trace
