// tests/tools/main_test.cpp — tools/main.cpp: the built `glassbox` binary, run as a user runs it.
//
// Every subcommand on a bad file exits non-zero with exactly one "glassbox: ..." line on stderr and nothing on
// stdout; on a good trace it exits 0 (check: 1 when it finds problems); bad arguments get CLI11's message.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <string>

#include "bad_runs.h"
#include "long_run.h"
#include "synthetic_trace.h"
#include "traces/temp_dir.h"
#include "tools_test_util.h"

using toolstest::slurp;

namespace {

struct Run {
  int rc = -1;
  std::string out, err;
};

std::string quote(const std::string& s) { return "'" + s + "'"; }

Run glassbox(const TempDir& tmp, const std::string& args, const std::string& env = "") {
  std::string out = tmp.file("stdout.txt"), err = tmp.file("stderr.txt");
  std::string cmd = env + std::string(GLASSBOX_BIN) + " " + args + " >" + quote(out) + " 2>" + quote(err);
  int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("a missing, empty, random or foreign file: non-zero, one stderr line, for every subcommand") {
  TempDir tmp;
  std::string missing = tmp.file("missing.db"), empty = tmp.file("empty.db"), random = tmp.file("random.db");
  std::ofstream(empty).close();
  {
    std::ofstream f(random, std::ios::binary);
    for (int i = 0; i < 5000; ++i) f.put(static_cast<char>((i * 2654435761u) >> 13));
  }
  std::string good = tmp.file("good.db");
  synthetic::write(good);
  for (const std::string& bad : {missing, empty, random}) {
    for (const std::string& args : {"report " + quote(bad), "check " + quote(bad),
                                    "export " + quote(bad) + " --chrome " + quote(tmp.file("o.json")),
                                    "diff " + quote(good) + " " + quote(bad)}) {
      CAPTURE(args);
      Run r = glassbox(tmp, args);
      CHECK(r.rc != 0);
      CHECK(lines(r.err) == 1);
      CHECK(r.err.rfind("glassbox", 0) == 0);
      CHECK(r.out.empty());
    }
  }
  CHECK(glassbox(tmp, "report " + quote(missing)).err.find("does not exist") != std::string::npos);
  CHECK(glassbox(tmp, "check " + quote(empty)).err.find("is empty") != std::string::npos);
  CHECK(!std::filesystem::exists(tmp.file("o.json")));
}

TEST_CASE("report, check, export and diff on a good trace exit 0 and print their sections") {
  TempDir tmp;
  std::string a = tmp.file("a.db"), b = tmp.file("b.db");
  synthetic::write(a, {.with_cuda = true});
  synthetic::write(b, {.matmul_ns = 4000});

  Run report = glassbox(tmp, "report " + quote(a) + " --sort cpu_total --limit 3");
  CHECK(report.rc == 0);
  CHECK(report.err.empty());
  CHECK(report.out.find("Self CPU time total: 16.500us") != std::string::npos);
  CHECK(report.out.find("Self CUDA time total: 7.500us") != std::string::npos);
  CHECK(report.out.find("(1 more rows; --limit 0 shows all)") != std::string::npos);

  Run check = glassbox(tmp, "check " + quote(a));
  CHECK(check.rc == 0);
  CHECK(check.out.rfind("ok: ", 0) == 0);

  Run exp = glassbox(tmp, "export " + quote(a) + " --chrome " + quote(tmp.file("a.json.gz")));
  CHECK(exp.rc == 0);
  CHECK(std::filesystem::file_size(tmp.file("a.json.gz")) > 100);

  Run diff = glassbox(tmp, "diff " + quote(a) + " " + quote(b));
  CHECK(diff.rc == 0);
  CHECK(diff.out.find("matmul") != std::string::npos);
}

TEST_CASE("report tells the story of a bad run first: an OOM with its stored report, then a NaN's first op") {
  TempDir tmp;
  std::string oom = tmp.file("oom.db"), nan = tmp.file("nan.db"), ok = tmp.file("ok.db");
  bad_runs::write_oom(oom);
  bad_runs::write_nan(nan);
  bad_runs::write_healthy(ok);

  Run r = glassbox(tmp, "report " + quote(oom));
  CHECK(r.rc == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("story: ran out of memory; failed with an uncaught exception\n", 0) == 0);
  CHECK(r.out.find("  ran out of memory at 55.000ms (step 5) on cuda:0: tried to allocate 2.00 GiB; ") !=
        std::string::npos);
  CHECK(r.out.find("\n    What to do:\n") < r.out.find("run: "));
  CHECK(glassbox(tmp, "check " + quote(oom)).rc == 0);

  r = glassbox(tmp, "report " + quote(nan) + " --limit 1");
  CHECK(r.rc == 0);
  CHECK(r.out.find("  first non-finite value: started in the forward pass at op log in module encoder.norm, step "
                   "12\n    op log: inputs [[64, 128]], dtypes float32, on cuda:0\n") != std::string::npos);
  CHECK(r.out.find("(2 more; --limit 0 shows all)") != std::string::npos);  // the anomalies table still limits

  r = glassbox(tmp, "report " + quote(ok));
  CHECK(r.out.rfind("healthy: closed cleanly, no anomalies, no out-of-memory\n\nrun: ", 0) == 0);

  // --fail-on: a CI gate on the anomalies' severity (the NaN run has errors; the healthy one has none)
  r = glassbox(tmp, "report " + quote(nan) + " --fail-on warning");
  CHECK(r.rc == 3);
  CHECK(r.out.find("first non-finite value") != std::string::npos);  // the report is still printed
  CHECK(r.err.find("glassbox: 3 anomalies of severity warning or worse in ") == 0);
  CHECK(glassbox(tmp, "report " + quote(ok) + " --fail-on info").rc == 0);
  CHECK(glassbox(tmp, "report " + quote(ok) + " --fail-on loud").rc != 0);
}

TEST_CASE("check exits 1 on problems; bad arguments get CLI11's message and a non-zero code") {
  TempDir tmp;
  std::string a = tmp.file("a.db");
  synthetic::write(a);
  sqlite3* db = nullptr;
  sqlite3_open(a.c_str(), &db);
  sqlite3_exec(db, "UPDATE spans SET dur_ns = -5 WHERE kind = 0", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  Run check = glassbox(tmp, "check " + quote(a));
  CHECK(check.rc == 1);
  CHECK(check.out.find("problem: ") != std::string::npos);

  Run bad_sort = glassbox(tmp, "report " + quote(a) + " --sort fastest");
  CHECK(bad_sort.rc != 0);
  CHECK(bad_sort.err.find("--sort") != std::string::npos);
  Run no_sub = glassbox(tmp, "");
  CHECK(no_sub.rc != 0);
  Run no_out = glassbox(tmp, "export " + quote(a));
  CHECK(no_out.rc != 0);
  CHECK(no_out.err.find("--chrome") != std::string::npos);
}

TEST_CASE("env prints the build, driver, libraries and GPUs, then one verdict; exit 0 only when CUDA is available") {
  TempDir tmp;
  // `env` dlopens the CUDA libraries a machine has (cudart, cuDNN, NCCL, ...): LeakSanitizer's tracer crashes on their
  // thread-local storage (make test-options, a machine with the toolkit), so the sanitizer build checks no leaks here
  Run env = glassbox(tmp, "env", "ASAN_OPTIONS=detect_leaks=0 ");
  for (const char* section : {"build\n", "driver\n", "libraries (as this process finds them)\n", "GPUs\n"})
    CHECK(env.out.find(section) != std::string::npos);
  const bool available = env.out.find("\nok: CUDA is available: ") != std::string::npos;
  CHECK(env.rc == (available ? 0 : 1));
  if (!available) CHECK(env.out.find("\nCUDA is not available: ") != std::string::npos);
  CHECK(env.err.empty());
}

TEST_CASE("watch follows a finished trace to its end (exit 0); a trace that never appears: exit 2 after --wait") {
  TempDir tmp;
  const std::string done = tmp.file("done.db");
  long_run::write(done);
  Run r = glassbox(tmp, "watch " + quote(done) + " --every 20");
  CHECK(r.rc == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("watching " + done + ": ./train_long --steps 60 on ", 0) == 0);
  CHECK(r.out.find("\nstep 39  loss 0.1  10.000ms/step  3200 samples/s  grad norm 4  peak allocated cpu 256 B, "
                   "cuda:0 1.36 KiB\n") != std::string::npos);
  CHECK(r.out.find("\nanomaly: warning loss_spike at step 13: ") != std::string::npos);
  CHECK(r.out.find("\nended: closed cleanly, stopped by exit\nsummary: 60 steps") != std::string::npos);
  CHECK(lines(r.out) == 11);

  const std::string never = tmp.file("never.db");
  r = glassbox(tmp, "watch " + quote(never) + " --wait 1");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.rfind("glassbox: watch: '" + never + "' did not become a readable trace within 1 s (--wait): ", 0) == 0);

  CHECK(glassbox(tmp, "watch " + quote(done) + " --tail --from-start").rc != 0);  // one or the other
  CHECK(glassbox(tmp, "watch " + quote(done) + " --every 0").rc != 0);
}
