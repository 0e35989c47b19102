// traces/writer.cpp — the Writer: WAL, prepared statements per table, time-bounded transactions.
#include "traces/writer.h"

#include <unistd.h>

#include <array>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "traces/codec.h"
#include "traces/schema.h"
#include "traces/sqlite.h"

#ifndef GLASSBOX_VERSION
#define GLASSBOX_VERSION "unknown"
#endif

namespace gb::trace {

using detail::Stmt;

namespace {

// Each record type's slot in Statements::insert: its position in records.h AllRecords.
template <class R>
constexpr int slot = record_index<R, AllRecords>;
constexpr int kSlots = static_cast<int>(AllRecords::size);


// The row a record is stored as: itself, except spans (codec.h StoredSpan).
template <class R> struct Stored { using type = R; static const R& row(const R& r) { return r; } };
template <> struct Stored<SpanRecord> {
  using type = detail::StoredSpan;
  static detail::StoredSpan row(const SpanRecord& r) { return detail::stored(r); }
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// The monotonic clock at its tick resolution (a few ms): 5 ns to read where steady_clock takes 25, and precise
// enough for a 100 ms commit interval. Read once per row.
std::chrono::nanoseconds coarse_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!all.empty() && all.back() == '\0') all.pop_back();
  for (char& c : all) if (c == '\0') c = ' ';
  return all;
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

}  // namespace

// The tables a training run writes many rows into (spans, memory events, op details, grad stats, graphs,
// counters, instants) are inserted kBatch rows per statement: one sqlite3_step per batch instead of one per row.
// Pending rows are written before every commit, so a committed trace never misses rows queued before it.
constexpr int kBatch = 32;

template <class Row>
struct Batch {
  Stmt stmt;  // INSERT of kBatch rows
  std::vector<Row> pending;
};
template <class R>
using BatchOf = Batch<typename Stored<R>::type>;
template <class List>
struct BatchesOf;
template <class... Rs>
struct BatchesOf<RecordList<Rs...>> {
  using type = std::tuple<BatchOf<Rs>...>;
};
template <class R>
constexpr bool is_batched = record_index<R, BatchedRecords> >= 0;

struct Writer::Statements {
  std::array<Stmt, kSlots> insert;
  BatchesOf<BatchedRecords>::type batches;
  Stmt begin, commit, meta, string;
  std::unordered_map<std::string, Id, StringHash, std::equal_to<>> strings;
  Id next_string_id = 1;
};

Writer::Writer(const std::string& path, WriterOptions options) : path_(path), options_(options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw Error("glassbox: cannot write trace '" + path + "': it is a directory; give a file path such as run.db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix, ec);  // a trace always starts fresh

  int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error("glassbox: cannot create trace '" + path + "' (sqlite3_open_v2: " + why +
                "); check that the folder exists and is writable, or choose another path");
  }
  try {
    sqlite3_extended_result_codes(db_, 1);
    {
      Stmt wal(db_, path_, "PRAGMA journal_mode=WAL", __FILE__, __LINE__);
      std::string mode = wal.step(__FILE__, __LINE__)
                             ? reinterpret_cast<const char*>(sqlite3_column_text(wal.get(), 0)) : "";
      if (mode != "wal")
        throw Error("glassbox: trace '" + path + "': SQLite refused WAL journal mode (got '" + mode +
                    "'); write the trace to a local disk, not a network file system");
    }
    GB_SQL_EXEC(db_, path_, "PRAGMA synchronous=NORMAL");
    GB_SQL_EXEC(db_, path_, "BEGIN");
    GB_SQL_EXEC(db_, path_, create_tables_sql());
    GB_SQL_EXEC(db_, path_, ("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str());
    GB_SQL_EXEC(db_, path_, "COMMIT");

    stmts_ = std::make_unique<Statements>();
    for_each_record(AllRecords{}, [&]<class R>(R*) {
      stmts_->insert[slot<R>] = Stmt(db_, path_, detail::insert_sql<typename Stored<R>::type>(), __FILE__, __LINE__);
    });
    std::apply(
        [&](auto&... b) {
          ((b.stmt = Stmt(db_, path_, detail::insert_rows_sql<typename std::decay_t<decltype(b.pending)>::value_type>(kBatch),
                          __FILE__, __LINE__),
            b.pending.reserve(kBatch)),
           ...);
        },
        stmts_->batches);
    stmts_->begin = Stmt(db_, path_, "BEGIN", __FILE__, __LINE__);
    stmts_->commit = Stmt(db_, path_, "COMMIT", __FILE__, __LINE__);
    stmts_->meta = Stmt(db_, path_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", __FILE__, __LINE__);
    stmts_->string = Stmt(db_, path_, "INSERT INTO strings (id, text) VALUES (?, ?)", __FILE__, __LINE__);

    auto unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch()).count();
    set_meta("schema_version", std::to_string(kSchemaVersion));
    set_meta("glassbox_version", GLASSBOX_VERSION);
    set_meta("started_at", utc_now_iso());
    set_meta("started_at_unix_ns", std::to_string(unix_ns));
    set_meta("host", host_name());
    set_meta("command", command_line());
    flush();
  } catch (...) {
    stmts_.reset();
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Writer::~Writer() {
  try {
    close();
  } catch (...) {  // a destructor must not throw; close() explicitly to see the error
  }
}

void Writer::before_write() {
  if (!db_) throw Error("glassbox: trace '" + path_ + "' is closed; no more rows can be added");
  auto now = coarse_now();
  if (in_txn_ && now - txn_start_ < options_.commit_interval) return;
  if (in_txn_) commit();
  stmts_->begin.step(__FILE__, __LINE__);
  stmts_->begin.reset();
  in_txn_ = true;
  txn_start_ = now;
}

namespace {
// Writes a batch's pending rows: one multi-row statement when full, row by row otherwise (at a commit).
template <class Row>
void write_batch(Batch<Row>& b, Stmt& single) {
  constexpr int columns = std::tuple_size_v<decltype(detail::Codec<Row>::fields)>;
  if (b.pending.size() == kBatch) {
    for (int i = 0; i < kBatch; ++i) detail::bind_row(b.stmt, b.pending[static_cast<std::size_t>(i)], 1 + i * columns);
    b.stmt.step(__FILE__, __LINE__);
    b.stmt.reset_keep_bindings();
  } else {
    for (const auto& row : b.pending) {
      detail::bind_row(single, row);
      single.step(__FILE__, __LINE__);
      single.reset_keep_bindings();
    }
  }
  b.pending.clear();
}
}  // namespace

void Writer::write_pending() {
  for_each_record(BatchedRecords{}, [&]<class R>(R*) {
    auto& b = std::get<BatchOf<R>>(stmts_->batches);
    if (!b.pending.empty()) write_batch(b, stmts_->insert[slot<R>]);
  });
}

void Writer::commit() {
  write_pending();
  stmts_->commit.step(__FILE__, __LINE__);
  stmts_->commit.reset();
  in_txn_ = false;
}

Id Writer::intern(std::string_view text) {
  before_write();  // throws when closed
  if (auto it = stmts_->strings.find(text); it != stmts_->strings.end()) return it->second;
  Id id = stmts_->next_string_id;
  add_string(id, text);
  return id;
}

void Writer::add_string(Id id, std::string_view text) {
  before_write();
  Stmt& s = stmts_->string;
  s.bind(1, id, __FILE__, __LINE__);
  s.bind(2, text, __FILE__, __LINE__);
  s.step(__FILE__, __LINE__);
  s.reset();
  stmts_->strings.emplace(std::string(text), id);
  stmts_->next_string_id = std::max(stmts_->next_string_id, id + 1);
}

void Writer::set_meta(std::string_view key, std::string_view value) {
  before_write();
  Stmt& s = stmts_->meta;
  s.bind(1, key, __FILE__, __LINE__);
  s.bind(2, value, __FILE__, __LINE__);
  s.step(__FILE__, __LINE__);
  s.reset();
}

template <class R>
void Writer::add(const R& record) {
  if constexpr (std::is_same_v<R, SpanRecord>) {
    if (span_thread(record.id) != record.thread_id)
      throw Error("glassbox trace '" + path_ + "': span id " + std::to_string(record.id) + " is not in thread " +
                  std::to_string(record.thread_id) + "'s id range; make span ids with gb::trace::span_id(thread, n)");
  }
  before_write();
  if constexpr (is_batched<R>) {
    auto& b = std::get<BatchOf<R>>(stmts_->batches);
    b.pending.push_back(Stored<R>::row(record));
    if (b.pending.size() == kBatch) write_batch(b, stmts_->insert[slot<R>]);
    return;
  }
  Stmt& s = stmts_->insert[slot<R>];
  detail::bind_row(s, Stored<R>::row(record));
  s.step(__FILE__, __LINE__);
  s.reset_keep_bindings();  // bind_row sets every column
}

void Writer::tick() {
  if (db_ && in_txn_ && coarse_now() - txn_start_ >= options_.commit_interval) commit();
}

void Writer::flush() {
  if (db_ && in_txn_) commit();
}

void Writer::close() {
  if (!db_) return;
  set_meta("closed_cleanly", "1");
  flush();
  GB_SQL_EXEC(db_, path_, "BEGIN");
  GB_SQL_EXEC(db_, path_, create_indexes_sql());
  GB_SQL_EXEC(db_, path_, "COMMIT");
  stmts_.reset();
  // Best effort: a live reader (a viewer following the run) keeps the file in WAL mode, which is still valid.
  sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
  int rc = sqlite3_close(db_);
  db_ = nullptr;
  if (rc != SQLITE_OK)
    throw Error("glassbox trace '" + path_ + "': sqlite3_close failed: " + sqlite3_errstr(rc));
}

// Writer::add for every record type of AllRecords: the table of their addresses is kept ([[gnu::used]]), so each
// is instantiated and emitted here, where add() is defined.
template <class... Rs>
constexpr auto add_functions(RecordList<Rs...>) {
  return std::make_tuple(&Writer::add<Rs>...);
}
[[gnu::used]] const auto kAddFunctions = add_functions(AllRecords{});

}  // namespace gb::trace
