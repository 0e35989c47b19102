// traces/writer.h — writes one glassbox trace file (SQLite, schema traces/SCHEMA.md).
//
// Contract:
//   - Writer(path) replaces any file at path (and its -wal/-shm), creates the schema, sets
//     `PRAGMA user_version` = kSchemaVersion, WAL journal mode, synchronous=NORMAL, and writes the meta rows
//     schema_version, glassbox_version, started_at (UTC, ISO 8601), started_at_unix_ns, host, command.
//     It throws gb::trace::Error naming the path and what to do when the file cannot be created.
//   - add(record) appends one row (records.h); spans are buffered and inserted 32 per statement, and every
//     buffered span is written before a commit. Rows go into an open transaction; that transaction is committed at
//     the first add()/intern() that finds it older than commit_interval (100 ms by default), or by flush(). So a
//     process killed with SIGKILL loses at most the rows of the last ~100 ms, and the file opens cleanly.
//   - intern(text) returns the strings.id of text, storing each distinct text once. add_string(id, text) stores
//     a string whose id was chosen elsewhere (the probe pipeline's process-wide interner); intern() then never
//     hands out that id.
//   - Span ids carry their thread (records.h span_id()); add(SpanRecord) throws when id and thread_id disagree.
//   - tick() commits the open transaction when it is older than commit_interval: the collector calls it when
//     no rows arrive, so a quiet program's last rows are on disk within ~100 ms too.
//   - close() commits, builds the Reader's indexes (never on the hot path), writes meta closed_cleanly = 1,
//     checkpoints the WAL and switches the file back to a single rollback-journal file when no other connection is
//     reading it. The destructor calls close() and swallows errors; call close() yourself to see them.
//   - A full disk: the Writer keeps a reserve for its closing rows — a file `<path>-reserve` of reserve_bytes, and,
//     under a file-size limit (RLIMIT_FSIZE), a page count the database stops short of — and checks the free space
//     at each commit. When a commit finds less free than the reserve and the WAL need to finish the file, or SQLite
//     reports the disk full (ENOSPC, or EFBIG past the size limit), it throws gb::trace::DiskFullError; then
//     close_full() drops the rows of the open transaction (at most the last commit interval), gives the reserve
//     back, writes the given meta rows and closed_cleanly, and closes the file (no indexes: queries scan).
//   - Not thread-safe: one thread (the collector) owns a Writer.
//
//   gb::trace::Writer w("run.db");
//   gb::trace::Id mm = w.intern("matmul");
//   w.add(gb::trace::ThreadRecord{1, gettid(), "main", gb::trace::ThreadRole::main});
//   w.add(gb::trace::SpanRecord{.id = gb::trace::span_id(1, 1), .kind = SpanKind::op, .name_id = mm, .thread_id = 1, .start_ns = 0, .end_ns = 900});
//   w.close();
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/records.h"

struct sqlite3;

namespace gb::trace {

struct WriterOptions {
  std::chrono::nanoseconds commit_interval = std::chrono::milliseconds(100);
  std::int64_t reserve_bytes = 256 << 10;  // kept free for the closing rows of a file on a full disk
};

class Writer {
 public:
  explicit Writer(const std::string& path, WriterOptions options = {});
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  const std::string& path() const { return path_; }

  Id intern(std::string_view text);                        // strings.id; each text stored once
  void add_string(Id id, std::string_view text);           // a strings row with a given id
  void set_meta(std::string_view key, std::string_view value);  // insert or replace one meta row

  // One row into the record's table. R is any record of traces/records.h.
  template <class R>
  void add(const R& record);

  void tick();   // commit the open transaction if it is older than commit_interval
  void flush();  // commit the open transaction now
  void close();  // flush, build indexes, finish the file; idempotent
  // After a DiskFullError: the open transaction's rows are dropped, the reserve given back, `meta` rows and
  // closed_cleanly written, the file closed. Best effort: throws only when even that cannot be written.
  void close_full(const std::vector<std::pair<std::string, std::string>>& meta);
  bool is_open() const { return db_ != nullptr; }

 private:
  struct Statements;
  void before_write();  // opens a transaction, or commits one that is older than commit_interval
  void commit();
  void write_pending();
  void check_space();  // throws DiskFullError when the reserve would not fit any more
  void drop_reserve();

  std::string path_;
  WriterOptions options_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<Statements> stmts_;
  bool in_txn_ = false;
  std::chrono::nanoseconds txn_start_{0};  // CLOCK_MONOTONIC_COARSE
  std::string reserve_path_;              // the reserve file, while it exists
  std::int64_t page_size_ = 4096;
  std::int64_t size_limit_ = 0;           // RLIMIT_FSIZE in bytes (0: none)
};

}  // namespace gb::trace
