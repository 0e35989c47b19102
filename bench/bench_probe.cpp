// bench/bench_probe.cpp — what tracing costs (issue [Traces]): the probe on the hot path, the collector's
// throughput into SQLite, and bytes per span on disk. The peer is libtorch's profiler measured in the same run:
// RECORD_USER_SCOPE (torch.profiler.record_function) under the legacy CPU profiler, and its Chrome JSON output.
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <sqlite3.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "bench_common.h"
#include "instrument/probe.h"
#include "instrument/session.h"

namespace {

using gb::trace::SpanKind;

std::string temp_trace(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

void span_pair() {
  GB_TRACE_SPAN(SpanKind::op, "outer");
  GB_TRACE_SPAN(SpanKind::op, "inner");
}

// ns per span with tracing on: bursts that fit the ring, timed on the producer, waiting for the collector between
// bursts so no event is dropped and the ring never blocks.
double probe_on_ns() {
  std::string path = temp_trace("glassbox-bench-probe.db");
  gb::trace::Session s(path, {.on_full = gb::trace::OnFull::drop, .ring_events = 1 << 16});
  constexpr int kBurst = 1 << 14;  // spans per burst (pairs of 2)
  std::vector<double> samples;
  std::uint64_t expected = 0;
  for (int round = 0; round < 200; ++round) {
    double t0 = bench::now_s();
    for (int i = 0; i < kBurst / 2; ++i) span_pair();
    samples.push_back((bench::now_s() - t0) / kBurst);
    expected += kBurst;
    while (s.events_written() < expected) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  s.stop();
  std::filesystem::remove(path);
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2] * 1e9;
}

// ns per span with tracing off, loop included: the best of 5 runs of 20M pairs, called directly (no std::function).
double probe_off_ns() {
  constexpr int kPairs = 20'000'000;
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    double t0 = bench::now_s();
    for (int i = 0; i < kPairs; ++i) {
      span_pair();
      asm volatile("" ::: "memory");  // keep the loop and the probes' loads
    }
    best = std::min(best, (bench::now_s() - t0) / (2.0 * kPairs) * 1e9);
  }
  return best;
}

// Spans per second the collector writes into SQLite, sustained: a producer that blocks on a full ring.
// Returns {events/s, bytes per span of the closed file}.
std::pair<double, double> collector_throughput() {
  std::string path = temp_trace("glassbox-bench-collector.db");
  constexpr std::int64_t kSpans = 4'000'000;
  double t0 = bench::now_s(), t1 = 0;
  {
    gb::trace::Session s(path, {.on_full = gb::trace::OnFull::block, .ring_events = 1 << 16});
    gb::trace::set_step(1);
    for (std::int64_t i = 0; i < kSpans / 2; ++i) span_pair();
    while (s.events_written() < static_cast<std::uint64_t>(kSpans)) std::this_thread::sleep_for(std::chrono::microseconds(100));
    t1 = bench::now_s();
  }
  double bytes = static_cast<double>(std::filesystem::file_size(path)) / kSpans;
  std::filesystem::remove(path);
  return {kSpans / (t1 - t0), bytes};
}

void torch_inner() { RECORD_USER_SCOPE("inner"); }
void torch_pair() {
  RECORD_USER_SCOPE("outer");
  torch_inner();
}

// The reference the issue names: raw SQLite inserts of 8-integer rows (one prepared statement, WAL, one
// transaction per 100 ms), rows per second.
double raw_sqlite_rows_per_s() {
  std::string path = temp_trace("glassbox-bench-raw.db");
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE t (a INTEGER PRIMARY KEY, "
               "b INTEGER, c INTEGER, d INTEGER, e INTEGER, f INTEGER, g INTEGER, h INTEGER)", nullptr, nullptr, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)", -1, &s, nullptr);
  constexpr std::int64_t kRows = 2'000'000;
  double t0 = bench::now_s(), last_commit = t0;
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  for (std::int64_t i = 1; i <= kRows; ++i) {
    sqlite3_bind_int64(s, 1, i);
    sqlite3_bind_int64(s, 2, i & 7);
    sqlite3_bind_int64(s, 3, 3);
    sqlite3_bind_int64(s, 4, 1'000'000'000 + 700 * i);
    sqlite3_bind_int64(s, 5, 650);
    sqlite3_bind_int64(s, 6, 12);
    sqlite3_bind_int64(s, 7, i & 1);
    sqlite3_bind_int64(s, 8, 2);
    sqlite3_step(s);
    sqlite3_reset(s);
    if ((i & 4095) == 0 && bench::now_s() - last_commit > 0.1) {
      sqlite3_exec(db, "COMMIT; BEGIN", nullptr, nullptr, nullptr);
      last_commit = bench::now_s();
    }
  }
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  double rate = kRows / (bench::now_s() - t0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return rate;
}

// libtorch: RECORD_USER_SCOPE with the legacy CPU profiler on, and the bytes per event of its Chrome JSON.
std::pair<double, double> torch_profiler() {
  std::ostringstream json;
  double ns = 0;
  constexpr int kEvents = 200'000;
  {
    torch::autograd::profiler::RecordProfile guard(json);
    double t0 = bench::now_s();
    for (int i = 0; i < kEvents / 2; ++i) torch_pair();
    ns = (bench::now_s() - t0) / kEvents * 1e9;
  }
  std::string out = json.str();
  std::size_t events = 0;
  for (std::size_t p = out.find("\"ph\""); p != std::string::npos; p = out.find("\"ph\"", p + 1)) ++events;
  return {ns, events ? static_cast<double>(out.size()) / static_cast<double>(events) : 0.0};
}

double torch_off_ns() {
  return bench::time_per_call(
             [] { torch_pair(); },
             1 << 20, 0.3) * 1e9 / 2;
}

}  // namespace

int main() {
  torch::set_num_threads(1);
  double on = probe_on_ns(), off = probe_off_ns();
  auto [torch_on, torch_bytes] = torch_profiler();
  double t_off = torch_off_ns();
  auto [events_per_s, bytes_per_span] = collector_throughput();
  bench::emit("probe", "span_on_ns", on, "ns", torch_on, "\"target\": 20");
  bench::emit("probe", "span_off_ns", off, "ns", t_off, "\"target\": 1");
  bench::emit("probe", "bytes_per_span", bytes_per_span, "bytes", torch_bytes, "\"target\": 32");
  double raw = raw_sqlite_rows_per_s();
  std::printf("{\"bench\": \"probe\", \"metric\": \"collector_events_per_s\", \"value\": %.6g, \"unit\": \"events/s\", "
              "\"peer\": \"raw sqlite3 inserts of 8-integer rows\", \"peer_value\": %.6g, \"ratio\": %.4f, "
              "\"target\": 1000000}\n", events_per_s, raw, events_per_s / raw);
  return 0;
}
