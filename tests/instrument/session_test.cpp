// tests/instrument/session_test.cpp — instrument/session.{h,cpp}: how a recording starts and how it always ends with
// a readable file (session end, exit, GLASSBOX_TRACE, SIGINT/SIGTERM, uncaught exception, SIGKILL, full disk).
#include "instrument/session.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/sanitizers.h"
#include "tools/check.h"
#include "traces/error.h"
#include "traces/reader.h"
#include "traces/temp_dir.h"

using namespace gb::trace;

namespace {

struct Run {
  int status = 0;
  std::string out, err;
  bool signaled(int sig) const { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Starts trace_child with args in the background: its stdout into `out` (and stderr into `err` when given),
// GLASSBOX_TRACE=trace when trace is not empty, and the NAME=value pairs of env.
pid_t start_child(const std::string& out, const std::string& trace, const std::vector<std::string>& args,
                  const std::vector<std::pair<std::string, std::string>>& env = {}, const std::string& err = "") {
  std::fflush(stdout);  // or the child flushes the parent's buffered output a second time
  std::fflush(stderr);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::freopen(out.c_str(), "w", stdout);
    if (!err.empty()) std::freopen(err.c_str(), "w", stderr);
    if (trace.empty()) unsetenv("GLASSBOX_TRACE"); else setenv("GLASSBOX_TRACE", trace.c_str(), 1);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(GLASSBOX_TRACE_CHILD)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(GLASSBOX_TRACE_CHILD, argv.data());
    _exit(127);
  }
  return pid;
}

// Runs trace_child to its end (start_child's arguments); captures stdout and stderr.
Run run_child(const TempDir& tmp, const std::vector<std::string>& args, const std::string& trace,
              const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::string out = tmp.file("child.out"), err = tmp.file("child.err");
  pid_t pid = start_child(out, trace, args, env, err);
  Run r;
  waitpid(pid, &r.status, 0);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::int64_t count_spans(const Reader& r, const std::string& name) {
  std::int64_t n = 0;
  for (const auto& s : r.all<SpanRecord>()) n += r.string(s.name_id) == name;
  return n;
}

}  // namespace

TEST_CASE("GLASSBOX_TRACE records a whole run with no code change, and exit finishes the file") {
  TempDir tmp;
  std::string path = tmp.file("run.db");
  Run run = run_child(tmp, {"spans", "100"}, path);
  CHECK(run.code() == 0);
  CHECK(run.err.empty());
  Reader r(path);
  CHECK(count_spans(r, "outer") == 100);
  CHECK(count_spans(r, "inner") == 100);
  CHECK(r.all<InstantRecord>().size() == 1);
  CHECK(r.all<CounterRecord>().at(0).value == 100.0);
  CHECK(r.meta("closed_cleanly") == "1");
  CHECK(r.meta("stopped_by") == "exit");
  CHECK(r.meta("dropped_events") == "0");
  CHECK(r.meta("events_written") == "202");
  CHECK(r.meta("command").value_or("").find("spans 100") != std::string::npos);
}

TEST_CASE("without GLASSBOX_TRACE nothing is written") {
  TempDir tmp;
  Run run = run_child(tmp, {"spans", "10"}, "");
  CHECK(run.code() == 0);
  CHECK(std::filesystem::is_empty(tmp.dir / "") == false);  // only child.out / child.err
  for (auto& e : std::filesystem::directory_iterator(tmp.dir)) CHECK(e.path().extension() != ".db");
}

TEST_CASE("SIGINT and SIGTERM finish the trace, then end the process with the signal") {
  for (std::string sig : {"SIGINT", "SIGTERM"}) {
    CAPTURE(sig);
    TempDir tmp;
    std::string path = tmp.file("run.db");
    Run run = run_child(tmp, {"signal", sig}, path);
    CHECK(run.signaled(sig == "SIGINT" ? SIGINT : SIGTERM));
    Reader r(path);
    CHECK(r.meta("closed_cleanly") == "1");
    CHECK(r.meta("stopped_by") == "signal " + sig);
    CHECK(count_spans(r, "outer") == 5);
    CHECK(count_spans(r, "interrupted") == 0);  // still open when the signal came: never ended
  }
}

TEST_CASE("an exception escaping main finishes the trace and names the exception") {
  TempDir tmp;
  std::string path = tmp.file("run.db");
  Run run = run_child(tmp, {"throw"}, path);
  CHECK(run.signaled(SIGABRT));
  CHECK(run.err.find("boom from trace_child") != std::string::npos);  // the usual terminate message
  Reader r(path);
  CHECK(r.meta("closed_cleanly") == "1");
  CHECK(r.meta("stopped_by") == "uncaught exception: boom from trace_child");
  CHECK(count_spans(r, "inner") == 5);
}

TEST_CASE("an exception escaping main writes the flight recorder's last steps (a run whose steps had no detail)") {
  TempDir tmp;
  std::string path = tmp.file("run.db");
  Run run = run_child(tmp, {"throw"}, path, {{"GLASSBOX_DETAIL", "summary"}});
  CHECK(run.signaled(SIGABRT));
  Reader r(path);
  CHECK(r.meta("stopped_by") == "uncaught exception: boom from trace_child");
  CHECK(r.meta("detail").value_or("").find("first=0,every=0,") == 0);
  const auto windows = r.all<DetailWindowRecord>();
  REQUIRE(windows.size() == 1);
  CHECK(windows[0].reason == DetailReason::exception);
  CHECK(count_spans(r, "inner") == 5);  // from the recorder: nothing was written before
}

TEST_CASE("a second session's error escaping main ends the process and finishes the first trace (no hang)") {
  // The error is thrown by start_recording; uncaught, std::terminate runs without unwinding, and the terminate
  // handler takes the session lock to finish the trace: the throw must not hold it (it did, and the process hung).
  TempDir tmp;
  std::string path = tmp.file("run.db");
  Run run = run_child(tmp, {"second", tmp.file("second.db")}, path);
  CHECK(run.signaled(SIGABRT));  // SIGALRM here: the terminate handler hung
  CHECK(run.err.find("is already recording") != std::string::npos);
  Reader r(path);
  CHECK(r.meta("closed_cleanly") == "1");
  CHECK(r.meta("stopped_by").value_or("").find("uncaught exception: glassbox: cannot start a trace session for '" +
                                  tmp.file("second.db") + "'") == 0);
  CHECK(count_spans(r, "inner") == 5);
}

TEST_CASE("a process killed with SIGKILL leaves a readable trace holding every event older than 200 ms") {
  TempDir tmp;
  std::string path = tmp.file("run.db"), out = tmp.file("stream.out");
  pid_t pid = start_child(out, path, {"stream"});
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  auto killed_at = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now().time_since_epoch()).count();
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  // stream.out: "n steady_ns" after each span ended; n spans older than 200 ms must all be in the file.
  std::ifstream lines(out);
  long long n = 0, t = 0, old = 0;
  while (lines >> n >> t)
    if (t < killed_at - 200'000'000) old = n;
  MESSAGE(old << " spans ended more than 200 ms before the kill");
  CHECK(old > 100);
  Reader r(path);
  CHECK_FALSE(r.meta("closed_cleanly").has_value());
  CHECK(count_spans(r, "tick") >= old);
  gb::tools::CheckResult check = gb::tools::check_trace(gb::query::TraceDb(path));  // `glassbox check` passes
  for (const auto& p : check.problems) FAIL_CHECK(p.what);
  CHECK(check.ok());
  auto spans = r.all<SpanRecord>();
  for (std::size_t i = 0; i < static_cast<std::size_t>(old) && i < spans.size(); ++i)
    CHECK(spans[i].id == span_id(spans[0].thread_id, static_cast<std::int64_t>(i) + 1));
}

TEST_CASE("a trace that cannot be created: one warning, no recording, the program goes on") {
  TempDir tmp;
  std::string bad = tmp.file("no/such/folder/run.db");
  std::fflush(stderr);
  Session s(bad);
  CHECK_FALSE(s.active());
  CHECK_FALSE(enabled());
  GB_TRACE_SCOPE("not recorded");  // harmless
  Run run = run_child(tmp, {"spans", "3"}, bad);
  CHECK(run.code() == 0);
  CHECK(run.err.find("glassbox: warning: tracing is off for this run: glassbox: cannot create trace '" + bad) !=
        std::string::npos);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}

TEST_CASE("a full disk (the file-size limit) stops recording at once, says so, and leaves a closed, readable trace") {
  TempDir tmp;
  std::string path = tmp.file("run.db");
  Run run = run_child(tmp, {"fsize", path}, "");
  CHECK(run.code() == 0);
  CHECK(run.out.find("still running, tracing off") != std::string::npos);
  // one line: which file, where, the error, that the program goes on
  CHECK(run.err.find("glassbox: warning: tracing stopped at step 0, the program goes on untraced: ") == 0);
  CHECK(run.err.find(" full") != std::string::npos);  // the size limit (or SQLite: "database or disk is full")
  CHECK(run.err.find(path) != std::string::npos);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  Reader r(path);  // the part written before the failure reads, and the file says how it ended
  CHECK(count_spans(r, "fill") > 0);
  CHECK(r.meta("closed_cleanly") == "1");
  CHECK(r.meta("stopped_by") == "disk full");
  CHECK(r.meta("disk_full").value_or("").find("step 0: ") == 0);
  CHECK(std::filesystem::file_size(path) <= (2u << 20));
  CHECK_FALSE(std::filesystem::exists(path + "-reserve"));  // the reserve was given back
  gb::tools::CheckResult check = gb::tools::check_trace(gb::query::TraceDb(path));
  for (const auto& p : check.problems) FAIL_CHECK(p.what);
}

TEST_CASE("SIGTERM stops a heavily traced run promptly: the training stops at once, the trace ends with its last steps") {
  // full detail of 50 us steps of 200 spans (4 M spans/s): the collector falls far behind, its rings grow to their
  // largest (the train_mlp, traced and sent SIGTERM, trained 1.9 s more, or to its end)
  TempDir tmp;
  std::string path = tmp.file("run.db"), out = tmp.file("steps.out");
  pid_t pid = start_child(out, path, {"steps", "100000000", "200", "50"}, {{"GLASSBOX_DETAIL", "full"}});
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const auto sent = std::chrono::steady_clock::now();
  const long long sent_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(sent.time_since_epoch()).count();
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  MESSAGE("the process ended " << seconds << " s after SIGTERM");
  if (!gbtest::kThreadSanitizer) CHECK(seconds < 2.0);  // 0.2-0.5 s measured; ThreadSanitizer slows every access 5-15x
  std::ifstream lines(out);
  long long step = 0, t = 0, before = -1, after = 0;
  while (lines >> step >> t) (t < sent_ns ? before : after) = step;
  MESSAGE("step " << before << " when the signal was sent, " << std::max(0LL, after - before) << " steps after it");
  if (!gbtest::kThreadSanitizer) CHECK(after - before < 200);  // it stopped training at once (a step is 50 us)
  Reader r(path);
  CHECK(r.meta("closed_cleanly") == "1");
  CHECK(r.meta("stopped_by") == "signal SIGTERM");
  const auto steps = r.all<StepRecord>();
  REQUIRE_FALSE(steps.empty());
  CHECK(steps.back().step >= before);  // every step's summary arrived, to the last one run
  const auto windows = r.all<DetailWindowRecord>();
  REQUIRE_FALSE(windows.empty());
  CHECK(windows.back().reason == DetailReason::signal);  // the last steps' detail, from the flight recorder
  CHECK(windows.back().last_step >= steps.back().step - 1);
}

TEST_CASE("one session at a time; stop() finishes early and a new session can follow") {
  TempDir tmp;
  Session a(tmp.file("a.db"));
  REQUIRE(a.active());
  CHECK_THROWS_WITH_AS(Session(tmp.file("b.db")), doctest::Contains("is already recording"), Error);
  { GB_TRACE_SCOPE("in a"); }
  a.stop();
  CHECK_FALSE(a.active());
  CHECK_FALSE(enabled());
  {
    Session b(tmp.file("b.db"));
    CHECK(b.active());
    GB_TRACE_SCOPE("in b");
  }
  Reader ra(tmp.file("a.db")), rb(tmp.file("b.db"));
  CHECK(count_spans(ra, "in a") == 1);
  CHECK(count_spans(ra, "in b") == 0);
  CHECK(count_spans(rb, "in b") == 1);
  CHECK(rb.meta("stopped_by") == "session end");
}

TEST_CASE("one rank of several records its own file, named by its rank, and says which rank it is") {
  TempDir tmp;
  std::string path = tmp.file("run.db");
  Run run = run_child(tmp, {"spans", "3"}, path,
                      {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  CHECK(run.code() == 0);
  CHECK_FALSE(std::filesystem::exists(path));
  REQUIRE(std::filesystem::exists(tmp.file("run.rank1.db")));
  Reader r(tmp.file("run.rank1.db"));
  CHECK(count_spans(r, "outer") == 3);
  CHECK(r.meta("rank") == "1");
  CHECK(r.meta("world_size") == "2");
  CHECK(r.meta("local_rank") == "1");
  CHECK(r.meta("closed_cleanly") == "1");
  // a launcher's world of one is no job of several: the file keeps its name
  Run single = run_child(tmp, {"spans", "1"}, tmp.file("one.db"), {{"RANK", "0"}, {"WORLD_SIZE", "1"}});
  CHECK(single.code() == 0);
  CHECK(std::filesystem::exists(tmp.file("one.db")));
  CHECK_FALSE(Reader(tmp.file("one.db")).meta("rank").has_value());
}

TEST_CASE("rank_trace_path and launch_rank") {
  using gb::trace::detail::rank_trace_path;
  CHECK(rank_trace_path("run.db", 0) == "run.rank0.db");
  CHECK(rank_trace_path("/tmp/x.y/run.db", 3) == "/tmp/x.y/run.rank3.db");
  CHECK(rank_trace_path("/tmp/x.y/run", 1) == "/tmp/x.y/run.rank1");
  CHECK(rank_trace_path("trace", 12) == "trace.rank12");
  CHECK(rank_trace_path("/tmp/.hidden", 2) == "/tmp/.hidden.rank2");

  static std::map<std::string, std::string> env;
  auto get = [](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  env = {};
  CHECK(gb::trace::detail::launch_rank(get).rank == -1);
  env = {{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}};
  auto lr = gb::trace::detail::launch_rank(get);
  CHECK(lr.rank == 2);
  CHECK(lr.world_size == 4);
  CHECK(lr.local_rank == -1);
  env = {{"RANK", "5"}, {"WORLD_SIZE", "4"}};  // a rank outside its world: not trusted
  CHECK(gb::trace::detail::launch_rank(get).rank == -1);
  env = {{"RANK", "x"}, {"WORLD_SIZE", "4"}};
  CHECK(gb::trace::detail::launch_rank(get).rank == -1);
  env = {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}};
  CHECK(gb::trace::detail::launch_rank(get).rank == 0);  // mpirun's word first
}
