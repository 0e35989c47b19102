// tests/tools/export_chrome_test.cpp — tools/export_chrome.cpp: the Chrome Trace Event JSON, parsed back with
// nlohmann::json; gzip; awkward strings; constant memory on a big trace.
#include "tools/export_chrome.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "rank_traces.h"
#include "synthetic_trace.h"
#include "tools/merge.h"
#include "traces/error.h"
#include "traces/temp_dir.h"
#include "tools_test_util.h"

using namespace gb::tools;
using namespace gb::query;
using nlohmann::json;
using toolstest::slurp;
using toolstest::gunzip;

namespace {

std::vector<json> events(const json& doc, const std::string& ph) {
  std::vector<json> v;
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == ph) v.push_back(e);
  return v;
}

// kB of a /proc/self/status line ("VmHWM:    1234 kB").
long status_kb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  return -1;
}

}  // namespace

TEST_CASE("one X event per span: ts and dur in microseconds, tid = thread, cat = kind, args with ids") {
  TempDir tmp;
  std::string path = tmp.file("t.db"), out = tmp.file("t.json");
  synthetic::Ids ids = synthetic::write(path, {.with_cuda = true});
  ExportCounts n = export_chrome(TraceDb(path), out);
  json doc = json::parse(slurp(out));
  CHECK(doc.at("displayTimeUnit") == "ns");
  CHECK(doc.at("metadata").at("command") == "./train_mlp --steps 3");
  CHECK(doc.at("metadata").at("closed_cleanly") == "1");

  std::vector<json> xs = events(doc, "X");
  CHECK(n.spans == static_cast<std::int64_t>(ids.all_spans.size()));
  REQUIRE(xs.size() == ids.all_spans.size());
  std::set<std::int64_t> seen;
  for (const json& x : xs) seen.insert(x.at("args").at("id").get<std::int64_t>());
  CHECK(seen == std::set<std::int64_t>(ids.all_spans.begin(), ids.all_spans.end()));  // each span exactly once

  std::map<std::int64_t, json> by_id;
  for (const json& x : xs) by_id[x.at("args").at("id").get<std::int64_t>()] = x;
  const json& mm = by_id.at(ids.matmul_spans[1]);  // step 1 starts at 10 ms; matmul at +1.001 ms, 3000 ns
  CHECK(mm.at("name") == "matmul");
  CHECK(mm.at("cat") == "op");
  CHECK(mm.at("ts").get<double>() == doctest::Approx(11001.0));
  CHECK(mm.at("dur").get<double>() == doctest::Approx(3.0));
  CHECK(mm.at("pid") == 1);
  CHECK(mm.at("tid") == 1);
  CHECK(mm.at("args").at("step") == 1);
  CHECK(mm.at("args").at("module") == "fc1");
  CHECK(mm.at("args").at("parent") == ids.matmul_spans[1] - 1);  // linear began just before it
  CHECK_FALSE(mm.at("args").contains("seq"));                    // NULL columns are left out
  const json& step0 = by_id.at(gb::trace::span_id(1, 1));
  CHECK(step0.at("cat") == "step");
  CHECK(step0.at("dur").get<double>() == doctest::Approx(10000.0));
  CHECK_FALSE(step0.at("args").contains("parent"));
  int kernels = 0;
  for (const json& x : xs) kernels += x.at("cat") == "cuda_kernel" && x.at("tid") == 3;
  CHECK(kernels == 6);
  // the text holds ts exactly: three decimals
  CHECK(slurp(out).find("\"ts\":11001.000,\"dur\":3.000,") != std::string::npos);
}

TEST_CASE("C events for counters, i events for instants (thread) and anomalies (global), M for threads") {
  TempDir tmp;
  std::string path = tmp.file("t.db"), out = tmp.file("t.json");
  synthetic::write(path);
  ExportCounts n = export_chrome(TraceDb(path), out);
  json doc = json::parse(slurp(out));

  std::vector<json> cs = events(doc, "C");
  REQUIRE(cs.size() == 2);
  CHECK(n.counters == 2);
  CHECK(cs[0].at("name") == "loss");
  CHECK(cs[0].at("ts").get<double>() == doctest::Approx(10000.0));
  CHECK(cs[0].at("args").at("value").get<double>() == 2.5);
  CHECK(cs[1].at("args").at("value").get<double>() == 1.5);

  std::vector<json> is = events(doc, "i");
  REQUIRE(is.size() == 2);
  CHECK(is[0].at("s") == "t");
  CHECK(is[0].at("name") == "checkpoint");
  CHECK(is[0].at("tid") == 1);
  CHECK(is[0].at("ts").get<double>() == doctest::Approx(5000.0));
  CHECK(is[0].at("args").at("span") == gb::trace::span_id(1, 1));
  CHECK(is[1].at("s") == "g");
  CHECK(is[1].at("name") == "loss_spike");
  CHECK(is[1].at("ts").get<double>() == doctest::Approx(22000.5));
  CHECK(is[1].at("args").at("message") == "loss 9.5 is 4.1x its running mean");
  CHECK(is[1].at("args").at("severity") == "warning");
  CHECK(is[1].at("args").at("step") == 2);

  std::vector<json> ms = events(doc, "M");
  std::map<int, std::string> names;
  std::map<int, int> sort_index;
  for (const json& m : ms) {
    if (m.at("name") == "thread_name") names[m.at("tid").get<int>()] = m.at("args").at("name");
    if (m.at("name") == "thread_sort_index") sort_index[m.at("tid").get<int>()] = m.at("args").at("sort_index");
  }
  CHECK(names == std::map<int, std::string>{{1, "main"}, {2, "dataloader worker 0"}});
  CHECK(sort_index == std::map<int, int>{{1, 1}, {2, 2}});
  CHECK(n.threads == 2);
}

TEST_CASE(".json.gz is gzip and decompresses to the same document as .json") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path, {.with_cuda = true});
  TraceDb db(path);
  export_chrome(db, tmp.file("t.json"));
  export_chrome(db, tmp.file("t.json.gz"));
  std::string raw = slurp(tmp.file("t.json.gz"));
  REQUIRE(raw.size() > 2);
  CHECK(static_cast<unsigned char>(raw[0]) == 0x1f);  // the gzip magic
  CHECK(static_cast<unsigned char>(raw[1]) == 0x8b);
  CHECK(json::parse(gunzip(tmp.file("t.json.gz"))) == json::parse(slurp(tmp.file("t.json"))));
}

TEST_CASE("names with quotes, backslashes, newlines and unicode survive the export") {
  TempDir tmp;
  std::string path = tmp.file("t.db"), out = tmp.file("t.json");
  const std::string name = "my \"op\"\\\n\ttab caf\xC3\xA9 \xE2\x88\x87 \xF0\x9F\x94\xA5";
  {
    using namespace gb::trace;
    Writer w(path);
    w.set_meta("command", "train \"quoted\"\n");
    w.add(ThreadRecord{1, 1, "th\"read\n", ThreadRole::main, std::nullopt});
    w.add(ModuleRecord{1, "enc\\oder.0", "Linear", std::nullopt});
    w.add(SpanRecord{.id = span_id(1, 1),
                     .kind = SpanKind::user,
                     .name_id = w.intern(name),
                     .thread_id = 1,
                     .start_ns = 7,
                     .end_ns = 9,
                     .module_id = 1});
    w.add(AnomalyRecord{1,
                        8,
                        {},
                        AnomalyKind::nonfinite_forward,
                        Severity::error,
                        {},
                        {},
                        {},
                        {},
                        -INFINITY,
                        "nan in \"" + name + "\"", std::nullopt});
  }
  export_chrome(TraceDb(path), out);
  json doc = json::parse(slurp(out));
  std::vector<json> xs = events(doc, "X");
  REQUIRE(xs.size() == 1);
  CHECK(xs[0].at("name") == name);
  CHECK(xs[0].at("cat") == "user");
  CHECK(xs[0].at("args").at("module") == "enc\\oder.0");
  CHECK(xs[0].at("ts").get<double>() == doctest::Approx(0.007));
  std::vector<json> is = events(doc, "i");
  REQUIRE(is.size() == 1);
  CHECK(is[0].at("args").at("message") == "nan in \"" + name + "\"");
  CHECK(is[0].at("args").at("value").is_null());  // infinities are not JSON (SQLite stores NaN as NULL)
  CHECK(doc.at("metadata").at("command") == "train \"quoted\"\n");
}

TEST_CASE("200k spans export in constant memory: the peak RSS grows by far less than the JSON's size") {
  TempDir tmp;
  std::string path = tmp.file("big.db"), out = tmp.file("big.json");
  const int kSpans = 200'000;
  {
    using namespace gb::trace;
    Writer w(path);
    w.add(ThreadRecord{1, 1, "main", ThreadRole::main, std::nullopt});
    Id names[4] = {w.intern("matmul"), w.intern("add"), w.intern("relu"), w.intern("a_rather_long_op_name_here")};
    for (int i = 1; i <= kSpans; ++i)
      w.add(SpanRecord{.id = span_id(1, i),
                       .name_id = names[i % 4],
                       .thread_id = 1,
                       .start_ns = 1000LL * i,
                       .end_ns = 1000LL * i + 900,
                       .step = i / 1000,
                       .seq = i});
  }
  // Reset the peak (VmHWM) to the current RSS, so the peak below is the export's own.
  bool reset = static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5");
  long before = status_kb("VmRSS");
  ExportCounts n = export_chrome(TraceDb(path), out);
  long peak = status_kb("VmHWM");
  CHECK(n.spans == kSpans);
  const auto json_kb = static_cast<long>(std::filesystem::file_size(out) / 1024);
  MESSAGE("export of " << kSpans << " spans: " << json_kb << " KiB of JSON, peak RSS +" << (peak - before)
                       << " KiB (peak reset: " << reset << ")");
  CHECK(json_kb > 20 * 1024);  // the document is bigger than the bound below: holding it would fail the check
  if (reset && before > 0 && peak > 0) CHECK(peak - before < 16 * 1024);

  // and the document is whole: it parses, with one X event per span
  std::ifstream f(out);
  json doc = json::parse(f);
  CHECK(events(doc, "X").size() == static_cast<std::size_t>(kSpans));
}

TEST_CASE("a failed export leaves no half file: a missing folder, or a final rename that fails") {
  TempDir tmp;
  std::string path = tmp.file("t.db");
  synthetic::write(path);
  CHECK_THROWS_AS(export_chrome(TraceDb(path), tmp.file("missing/t.json")), gb::trace::Error);
  CHECK_FALSE(std::filesystem::exists(tmp.file("missing")));
  // every event written, then the rename onto a non-empty folder fails: the temporary file goes away
  std::filesystem::create_directory(tmp.file("out.json"));
  std::ofstream(tmp.file("out.json/keep")) << "x";
  CHECK_THROWS_WITH_AS(export_chrome(TraceDb(path), tmp.file("out.json")), doctest::Contains("cannot rename"),
                       gb::trace::Error);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.dir)) files += e.path().filename() != "out.json";
  CHECK(files == 1);  // t.db alone
}

TEST_CASE("a merged data-parallel trace exports one process per rank; each rank's events in its own") {
  TempDir tmp;
  const std::string r0 = tmp.file("r.rank0.db"), r1 = tmp.file("r.rank1.db"), merged = tmp.file("r.db");
  rank_traces::write_rank(r0, 0);
  rank_traces::write_rank(r1, 1);
  merge_traces({r0, r1}, merged);
  const std::string out = tmp.file("r.json");
  export_chrome(TraceDb(merged), out);
  json doc = json::parse(slurp(out));
  std::map<int, std::string> processes;
  std::map<std::int64_t, int> thread_pid;
  for (const json& m : events(doc, "M")) {
    if (m.at("name") == "process_name") processes[m.at("pid").get<int>()] = m.at("args").at("name");
    if (m.at("name") == "thread_name") thread_pid[m.at("tid").get<std::int64_t>()] = m.at("pid").get<int>();
  }
  int names = 0;
  for (const json& m : events(doc, "M")) names += m.at("name") == "process_name";
  CHECK(names == 2);  // one per rank, none for the whole
  REQUIRE(processes.size() == 2);
  CHECK(processes[2].starts_with("glassbox rank 1 (node1): "));
  CHECK(processes[1].starts_with("glassbox rank 0 (node0): "));
  TraceDb db(merged);
  std::map<std::int64_t, int> expected;  // thread -> rank + 1, from the merged trace
  db.each("SELECT id, rank + 1 FROM threads", [&](const Row& r) { expected[r.i64(0)] = int(r.i64(1)); });
  CHECK(thread_pid == expected);
  std::map<int, int> spans_per_pid;
  for (const json& x : events(doc, "X")) {
    CHECK(x.at("pid").get<int>() == expected.at(x.at("tid").get<std::int64_t>()));
    ++spans_per_pid[x.at("pid").get<int>()];
  }
  CHECK(spans_per_pid[1] == sql_int(r0, "SELECT count(*) FROM spans"));
  CHECK(spans_per_pid[2] == sql_int(r1, "SELECT count(*) FROM spans"));
  std::set<int> anomaly_pids;
  for (const json& i : events(doc, "i"))
    if (i.value("cat", "") == "anomaly") anomaly_pids.insert(i.at("pid").get<int>());
  CHECK(anomaly_pids == std::set<int>{1, 2});
}
