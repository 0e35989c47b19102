// tools/main.cpp — the `glassbox` command: parses arguments and calls tools/ (report, export, check, diff, merge,
// synth, env, watch, ops), or runs the viewer (view).
//
// Exit codes: 0 done (`watch`: the run ended); 1 `check` found problems, or `env` found CUDA not available; 2 a file could not be read or
// written (one line on stderr, "glassbox: ..."); 3 `report --fail-on SEVERITY` found anomalies that severe; CLI11's
// codes for bad arguments.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>

#include "tools/check.h"
#include "tools/env.h"
#include "tools/ops.h"
#include "tools/export_chrome.h"
#include "tools/merge.h"
#include "tools/report.h"
#include "tools/synth.h"
#include "tools/watch.h"
#include "traces/query/diff.h"
#include "traces/query/op_table.h"
#include "traces/query/trace_db.h"

namespace {

// Errors print as one line: the message, newlines folded, "glassbox: " in front when it lacks it.
int fail(const std::exception& e) {
  std::string msg = e.what();
  for (char& c : msg)
    if (c == '\n' || c == '\r') c = ' ';
  if (msg.rfind("glassbox", 0) != 0) msg = "glassbox: " + msg;
  std::cerr << msg << "\n";
  return 2;
}

std::vector<std::string> names(std::span<const std::string_view> v) { return {v.begin(), v.end()}; }

// `glassbox view`: glassbox-viewer next to this binary (installed tree), in ../viewer (build tree), else on PATH.
int exec_viewer(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> candidates;
  if (!ec) {
    candidates.push_back((self.parent_path() / "glassbox-viewer").string());
    candidates.push_back((self.parent_path().parent_path() / "viewer" / "glassbox-viewer").string());
  }
  std::string exe = "glassbox-viewer";  // execvp searches PATH
  for (const std::string& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) {
      exe = c;
      break;
    }
  std::vector<char*> argv{exe.data()};
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(exe.c_str(), argv.data());
  std::cerr << "glassbox: cannot run the viewer: glassbox-viewer is not next to glassbox nor on PATH ("
            << std::strerror(errno) << "); build it (ninja glassbox-viewer, needs libimgui-dev and libglfw3-dev: "
            << "tools/install-deps.sh) or install glassbox with the viewer\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"glassbox: read, check, compare and export glassbox training traces (SQLite .db files)", "glassbox"};
  app.set_version_flag("--version", std::string("glassbox ") + GLASSBOX_VERSION);
  app.require_subcommand(1);

  std::string file, file_b, chrome_out, sort = "self_cpu", kind = "op";
  std::size_t limit = 20;

  CLI::App* report = app.add_subcommand("report",
                                        "the story of the run first (how it ended, out of memory, the first "
                                        "NaN, alarms by kind), a long run's summary over every step, then run "
                                        "metadata, step times, the op table, memory peaks, data-loader wait, "
                                        "anomalies");
  report->add_option("FILE", file, "the trace (.db)")->required();
  report->add_option("--sort", sort, "op table order")
      ->check(CLI::IsMember(names(gb::query::op_sort_names())))
      ->capture_default_str();
  report->add_option("--limit", limit, "rows of the op and anomaly tables (0 = all)")->capture_default_str();
  report->add_option("--kind", kind, "span kind of the op table")
      ->check(CLI::IsMember(names(gb::query::span_kind_names())))
      ->capture_default_str();
  std::string fail_on;
  report->add_option("--fail-on", fail_on,
                     "exit code 3 when the run has an anomaly of this severity or worse (a CI gate: "
                     "--fail-on warning)")
      ->check(CLI::IsMember({"info", "warning", "error"}));

  CLI::App* exp = app.add_subcommand("export", "write the trace in another format");
  exp->add_option("FILE", file, "the trace (.db)")->required();
  exp->add_option("--chrome", chrome_out,
                  "Chrome Trace Event JSON for Perfetto / chrome://tracing "
                  "(OUT.json, or OUT.json.gz compressed)")
      ->required();

  CLI::App* check = app.add_subcommand("check", "integrity: exit code 1 and one line per problem");
  check->add_option("FILE", file, "the trace (.db)")->required();

  CLI::App* diff = app.add_subcommand("diff", "two runs side by side: step time, op deltas, memory peaks");
  diff->add_option("A", file, "the first trace (.db)")->required();
  diff->add_option("B", file_b, "the second trace, compared with A")->required();
  diff->add_option("--limit", limit, "rows of the op table (0 = all)")->capture_default_str();
  diff->add_option("--kind", kind, "span kind of the op table")
      ->check(CLI::IsMember(names(gb::query::span_kind_names())))
      ->capture_default_str();

  CLI::App* env = app.add_subcommand("env", "CUDA on this machine: driver, toolkit, libraries, GPUs, and what is "
                                            "missing when it is not available");
  std::string ops_format = "text";
  CLI::App* ops = app.add_subcommand("ops", "the engine's ops: each op's backward node, devices (cpu, meta, cuda), "
                                            "autocast policy and CUDA pointwise code");
  ops->add_option("--format", ops_format, "text or markdown (the docs' table, tools/docs_ops.sh)")
      ->check(CLI::IsMember({"text", "markdown"}));

  gb::tools::SynthOptions so;
  std::string synth_out;
  CLI::App* synth = app.add_subcommand("synth", "write a realistic synthetic training trace of any size");
  synth->add_option("OUT", synth_out, "the trace to write (.db; replaced)")->required();
  synth->add_option("--spans", so.spans, "about this many spans (0: from --ops-per-layer)")->capture_default_str();
  synth->add_option("--steps", so.steps, "training steps")->capture_default_str();
  synth->add_option("--layers", so.layers, "Linear layers")->capture_default_str();
  synth->add_option("--ops-per-layer", so.ops_per_layer, "elementwise ops after each linear")->capture_default_str();
  synth->add_option("--workers", so.workers, "DataLoader worker threads")->capture_default_str();
  synth->add_option("--nan-step", so.nan_step, "step of the planted NaN gradient (-1: 3/4 through, -2: none)")
      ->capture_default_str();
  synth->add_option("--nan-layer", so.nan_layer, "layer of the planted NaN (-1: the middle one)")->capture_default_str();
  synth->add_option("--seed", so.seed, "random seed")->capture_default_str();
  synth->add_option("--memory-layer-stride", so.memory_layer_stride,
                    "per-step allocations only in every n-th layer (fewer memory events)")
      ->capture_default_str();
  synth->add_flag("--cuda", so.cuda, "add a CUDA stream thread with kernels (and kernels rows)");
  synth->add_flag("--oom", so.oom, "end with an out-of-memory event and its report");
  synth
      ->add_option("--long-steps", so.long_steps,
                   "a long run of this many steps: every step's summary, detail in windows (first 500, 5 every "
                   "1000, 16 before a late loss spike, the last 16); replaces --steps")
      ->capture_default_str();

  std::vector<std::string> merge_in;
  std::string merge_out;
  CLI::App* merge = app.add_subcommand("merge",
                                       "the traces of a data-parallel job's ranks (run.rank0.db run.rank1.db "
                                       "...) as one trace on one clock, one track group per rank");
  merge->add_option("FILES", merge_in, "the ranks' traces (GLASSBOX_TRACE=run.db under mpirun writes run.rank<N>.db)")
      ->required();
  merge->add_option("-o,--output", merge_out, "the merged trace to write (.db; replaced)")->required();

  gb::tools::WatchOptions wo;
  bool from_start = false;
  CLI::App* watch = app.add_subcommand("watch",
                                       "follow a trace while the training writes it: a line every N steps (loss, "
                                       "step time, throughput, grad norm, peak memory), each anomaly and detail "
                                       "window as it comes; ends when the run ends");
  watch->add_option("FILE", file, "the trace (.db); it may not exist yet")->required();
  watch->add_option("--every", wo.every, "a line every N steps (default: about every 2 s of training)")
      ->check(CLI::PositiveNumber);
  watch->add_option("--wait", wo.wait_s, "seconds to wait for the file to become a readable trace")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  CLI::Option* tail = watch->add_flag("--tail", wo.tail, "start at the step the trace has reached");
  watch->add_flag("--from-start", from_start, "print the trace's lines from its first step (the default)")
      ->excludes(tail);

  std::vector<std::string> view_args;
  CLI::App* view = app.add_subcommand("view", "open a trace in the desktop viewer (glassbox-viewer FILE [options])");
  view->prefix_command();  // everything after `view` goes to glassbox-viewer as is

  CLI11_PARSE(app, argc, argv);
  if (*view) return exec_viewer(view->remaining());

  if (*watch) {  // streams its lines as they come (the other subcommands print whole at the end)
    try {
      gb::tools::watch_trace(file, wo, std::cout);
      return 0;
    } catch (const std::exception& e) {
      std::cout << std::flush;
      return fail(e);
    }
  }

  try {
    std::ostringstream out;  // printed whole at the end, so a failure prints one error line and nothing else
    int rc = 0;
    if (*report) {
      gb::query::TraceDb db(file);
      gb::tools::ReportOptions o{*gb::query::parse_op_sort(sort), limit, *gb::query::parse_span_kind(kind)};
      gb::tools::write_report(db, o, out);
      if (!fail_on.empty()) {
        const std::int64_t level = fail_on == "info" ? 0 : fail_on == "warning" ? 1 : 2;
        const std::int64_t n = db.scalar("SELECT count(*) FROM anomalies WHERE severity >= ?", {level});
        if (n > 0) {
          std::cout << out.str() << std::flush;
          std::cerr << "glassbox: " << n << (n == 1 ? " anomaly" : " anomalies") << " of severity " << fail_on
                    << " or worse in " << file << " (--fail-on " << fail_on << "); the story above names them\n";
          return 3;
        }
      }
    } else if (*exp) {
      gb::query::TraceDb db(file);
      gb::tools::ExportCounts n = gb::tools::export_chrome(db, chrome_out);
      out << "wrote " << chrome_out << ": " << n.spans << " spans, " << n.counters << " counter samples, " << n.instants
          << " instants, " << n.anomalies << " anomalies, " << n.threads << " threads\n";
    } else if (*check) {
      gb::query::TraceDb db(file);
      gb::tools::CheckResult r = gb::tools::check_trace(db);
      gb::tools::write_check(r, file, out);
      rc = r.ok() ? 0 : 1;
    } else if (*diff) {
      gb::query::TraceDb a(file), b(file_b);
      gb::query::write_diff(gb::query::diff_traces(a, b, *gb::query::parse_span_kind(kind)), limit, out);
    } else if (*merge) {
      gb::tools::MergeResult r = gb::tools::merge_traces(merge_in, merge_out);
      out << "wrote " << merge_out << ": " << r.ranks.size() << " ranks, " << r.spans << " spans, " << r.collectives
          << " collectives\n";
      for (const gb::trace::RankRecord& k : r.ranks) {
        out << "  rank " << k.rank << ": " << k.source << ", " << k.aligned_by;
        if (k.aligned_by != "reference") {
          char buf[96];
          std::snprintf(buf, sizeof buf, " (offset %+.3f ms, rate %.9f)", double(k.offset_ns) / 1e6, k.scale);
          out << buf;
        }
        out << "\n";
      }
      for (const std::string& n : r.notes) out << "note: " << n << "\n";
    } else if (*ops) {
      out << gb::tools::ops_table(ops_format == "markdown" ? gb::tools::OpsFormat::markdown
                                                           : gb::tools::OpsFormat::text);
    } else if (*env) {
      const gb::tools::EnvProbe probe = gb::tools::probe_env();
      gb::tools::write_env(probe, out);
      rc = gb::tools::diagnose(probe).front().severity == gb::tools::EnvFinding::kOk ? 0 : 1;
    } else if (*synth) {
      gb::tools::SynthResult r = gb::tools::write_synthetic_trace(synth_out, so);
      out << "wrote " << synth_out << ": " << r.spans << " spans, " << r.steps << " steps, " << r.memory_events
          << " memory events, " << r.grad_stats << " grad stats";
      if (r.nan_step >= 0) out << ", NaN gradient at step " << r.nan_step << " layer " << r.nan_layer;
      if (r.kernels) out << ", " << r.kernels << " kernels";
      if (r.oom_t_ns >= 0) out << ", an OOM";
      if (r.windows) out << ", " << r.windows << " detail windows (" << r.detail_steps << " steps)";
      out << "\n";
    }
    std::cout << out.str() << std::flush;
    return rc;
  } catch (const std::exception& e) {
    return fail(e);
  }
}
