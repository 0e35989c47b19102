// traces/writer.cpp — the Writer: WAL, prepared statements per table, time-bounded transactions.
#include "traces/writer.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>

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


// The row a record is stored as: itself, except spans (tables.h StoredSpan).
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
    {
      Stmt ps(db_, path_, "PRAGMA page_size", __FILE__, __LINE__);
      if (ps.step(__FILE__, __LINE__)) page_size_ = std::max<std::int64_t>(512, sqlite3_column_int64(ps.get(), 0));
    }
    // Under a file-size limit the database stops a reserve short of it (SQLite then reports SQLITE_FULL, not the
    // kernel EFBIG mid-write), and the WAL is checkpointed before it could reach it.
    rlimit fsize{};
    if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY) {
      size_limit_ = static_cast<std::int64_t>(fsize.rlim_cur);
      const std::int64_t pages = std::max<std::int64_t>((size_limit_ - options_.reserve_bytes) / page_size_, 16);
      GB_SQL_EXEC(db_, path_, ("PRAGMA max_page_count=" + std::to_string(pages)).c_str());
      const std::int64_t wal_pages = std::clamp<std::int64_t>(size_limit_ / 4 / page_size_, 8, 1000);
      GB_SQL_EXEC(db_, path_, ("PRAGMA wal_autocheckpoint=" + std::to_string(wal_pages)).c_str());
      GB_SQL_EXEC(db_, path_, ("PRAGMA journal_size_limit=" + std::to_string(size_limit_ / 2)).c_str());
    }
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
    // the reserve: space given back to finish the file on a full disk (none when it cannot be made: a full disk
    // already, which the first commit's check reports)
    if (options_.reserve_bytes > 0) {
      const std::string rp = path_ + "-reserve";
      if (std::FILE* f = std::fopen(rp.c_str(), "wb")) {
        std::vector<char> zeros(64 << 10, 0);
        std::int64_t left = options_.reserve_bytes;
        bool ok = true;
        while (ok && left > 0) {
          const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(left, std::int64_t(zeros.size())));
          ok = std::fwrite(zeros.data(), 1, n, f) == n;
          left -= static_cast<std::int64_t>(n);
        }
        ok = std::fclose(f) == 0 && ok;
        if (ok) reserve_path_ = rp;
        else std::remove(rp.c_str());
      }
    }
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
  drop_reserve();
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
  constexpr int columns = detail::written_columns<Row>();
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
  check_space();
  write_pending();
  stmts_->commit.step(__FILE__, __LINE__);
  stmts_->commit.reset();
  in_txn_ = false;
}

namespace {
std::int64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
}
std::string kib(std::int64_t bytes) { return std::to_string(bytes >> 10) + " KiB"; }
}  // namespace

// Finishing the file needs the reserve (its closing rows) and room for the WAL's pages in the database (the
// checkpoint at close): when the disk or the size limit has less, stop now, while the file can still be closed.
void Writer::check_space() {
  if (options_.reserve_bytes <= 0) return;
  const std::int64_t wal = file_bytes(path_ + "-wal");
  const std::int64_t need = options_.reserve_bytes + wal;
  const std::string folder = std::filesystem::path(path_).parent_path().string();
  struct statvfs vfs {};
  if (::statvfs(folder.empty() ? "." : folder.c_str(), &vfs) == 0) {
    const std::int64_t free_bytes = static_cast<std::int64_t>(vfs.f_bavail) * static_cast<std::int64_t>(vfs.f_frsize);
    if (free_bytes < need)
      throw DiskFullError("glassbox trace '" + path_ + "': the disk is full (" + kib(free_bytes) + " free, " +
                          kib(need) + " needed to finish the file); free space or write the trace elsewhere");
  }
  if (size_limit_ > 0 && (file_bytes(path_) + need > size_limit_ || wal + options_.reserve_bytes > size_limit_))
    throw DiskFullError("glassbox trace '" + path_ + "': the file is full: it reached the process's file-size limit (" +
                        kib(size_limit_) + ", ulimit -f); raise the limit or trace less detail (GLASSBOX_DETAIL)");
}

void Writer::drop_reserve() {
  if (reserve_path_.empty()) return;
  std::remove(reserve_path_.c_str());
  reserve_path_.clear();
}

void Writer::close_full(const std::vector<std::pair<std::string, std::string>>& meta) {
  if (!db_) return;
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);  // the open transaction's rows: at most one interval
  in_txn_ = false;
  std::apply([](auto&... b) { (b.pending.clear(), ...); }, stmts_->batches);
  drop_reserve();
  if (size_limit_ > 0)  // the database may now use the reserve's pages
    sqlite3_exec(db_, ("PRAGMA max_page_count=" + std::to_string(size_limit_ / page_size_)).c_str(), nullptr,
                 nullptr, nullptr);
  std::string sql = "BEGIN;";
  auto quoted = [](const std::string& v) {
    std::string q = "'";
    for (char c : v) q += c == '\'' ? std::string("''") : std::string(1, c);
    return q + "'";
  };
  for (const auto& [k, v] : meta) sql += "INSERT OR REPLACE INTO meta (key, value) VALUES (" + quoted(k) + ", " + quoted(v) + ");";
  sql += "INSERT OR REPLACE INTO meta (key, value) VALUES ('closed_cleanly', '1'); COMMIT;";
  stmts_.reset();
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  const std::string why = err ? err : "";
  sqlite3_free(err);
  if (rc == SQLITE_OK)  // best effort: one file again (it stays a valid WAL-mode file when there is no room)
    sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
  else
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db_);
  db_ = nullptr;
  if (rc != SQLITE_OK)
    throw Error("glassbox trace '" + path_ + "': its closing rows could not be written on the full disk (" + why +
                "); it is readable up to its last commit");
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
  drop_reserve();
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
