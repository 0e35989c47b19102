// tests/instrument/nvtx_test.cpp — instrument/nvtx.cpp: with an NVTX tool attached the way Nsight Systems attaches
// one (NVTX_INJECTION64_PATH), every span is a range in the "glassbox" domain, named by a string registered once,
// categorised by its kind — with a trace recording or without one; GLASSBOX_NVTX=0 turns it off, and without a tool
// nothing is sent. The tool is tests/instrument/nvtx_injection.cpp, the program trace_child's "nvtx" mode (a
// StepScope holding two outer/inner span pairs; outer is of kind step, inner of kind op).
#include <doctest/doctest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "traces/reader.h"
#include "traces/temp_dir.h"

#if defined(GLASSBOX_NVTX_INJECTION) && !defined(GLASSBOX_NO_PROBES)

extern char** environ;

namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream f(path);
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

// trace_child nvtx with this process's environment plus `env` ("NAME=value"); its exit status.
int run_child(const std::vector<std::string>& env) {
  std::vector<std::string> all;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    if (v.rfind("NVTX_INJECTION64_PATH=", 0) != 0 && v.rfind("GLASSBOX_", 0) != 0) all.push_back(v);
  }
  all.insert(all.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& v : all) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string exe = GLASSBOX_TRACE_CHILD, mode = "nvtx";
  char* argv[] = {exe.data(), mode.data(), nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) == 0);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const std::vector<std::string> kRanges = {
    "push glassbox 7 step",  "push glassbox 7 outer", "push glassbox 1 inner", "pop glassbox", "pop glassbox",
    "push glassbox 7 outer", "push glassbox 1 inner", "pop glassbox",          "pop glassbox", "pop glassbox"};

// The push and pop lines of the log, in order.
std::vector<std::string> ranges(const std::vector<std::string>& log) {
  std::vector<std::string> out;
  for (const auto& l : log)
    if (l.rfind("push ", 0) == 0 || l.rfind("pop ", 0) == 0) out.push_back(l);
  return out;
}

int count(const std::vector<std::string>& log, const std::string& line) {
  int n = 0;
  for (const auto& l : log) n += l == line;
  return n;
}

}  // namespace

TEST_CASE("with an NVTX tool attached every span is a range in the glassbox domain, named by a registered string") {
  TempDir tmp;
  const std::string log = tmp.file("nvtx.log");
  REQUIRE(run_child({std::string("NVTX_INJECTION64_PATH=") + GLASSBOX_NVTX_INJECTION, "GLASSBOX_TEST_NVTX_LOG=" + log}) ==
          0);
  const std::vector<std::string> lines = read_lines(log);
  CHECK(count(lines, "domain glassbox") == 1);
  CHECK(count(lines, "category 1 op") == 1);  // one category per span kind, named as in the trace
  CHECK(count(lines, "category 2 backward_node") == 1);
  CHECK(count(lines, "category 7 step") == 1);
  CHECK(count(lines, "register step") == 1);  // each name registered once, then passed as a handle
  CHECK(count(lines, "register outer") == 1);
  CHECK(count(lines, "register inner") == 1);
  CHECK(ranges(lines) == kRanges);  // nested as the spans were, with no trace recording
}

TEST_CASE("a recording trace and NVTX at once: the same spans in both") {
  TempDir tmp;
  const std::string log = tmp.file("nvtx.log"), db = tmp.file("run.db");
  REQUIRE(run_child({std::string("NVTX_INJECTION64_PATH=") + GLASSBOX_NVTX_INJECTION, "GLASSBOX_TEST_NVTX_LOG=" + log,
                     "GLASSBOX_TRACE=" + db}) == 0);
  CHECK(ranges(read_lines(log)) == kRanges);
  gb::trace::Reader r(db);
  CHECK(r.all<gb::trace::SpanRecord>().size() == 5);  // step, 2 x (outer, inner)
}

TEST_CASE("GLASSBOX_NVTX=0 with a tool attached, or no tool: no range is sent") {
  TempDir tmp;
  const std::string log = tmp.file("nvtx.log");
  REQUIRE(run_child({std::string("NVTX_INJECTION64_PATH=") + GLASSBOX_NVTX_INJECTION, "GLASSBOX_TEST_NVTX_LOG=" + log,
                     "GLASSBOX_NVTX=0"}) == 0);
  CHECK(ranges(read_lines(log)).empty());  // glassbox made no NVTX call, so the tool was not even loaded
  REQUIRE(run_child({"GLASSBOX_TEST_NVTX_LOG=" + log}) == 0);
  CHECK(ranges(read_lines(log)).empty());
}

#else

TEST_CASE("NVTX ranges need the CUDA toolkit's nvtx3 headers and the probes") {
  MESSAGE("skipped: this build has no NVTX (no CUDA toolkit found at configure time, or -DGLASSBOX_PROBES=OFF)");
}

#endif
