// tools/main.cpp — the `glassbox` command: parses arguments and calls tools/ (report, export, check, diff).
//
// Exit codes: 0 done; 1 `check` found problems; 2 a file could not be read or written (one line on stderr,
// "glassbox: ..."); CLI11's codes for bad arguments.
#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>
#include <string>

#include "tools/check.h"
#include "tools/diff.h"
#include "tools/export_chrome.h"
#include "tools/op_table.h"
#include "tools/report.h"
#include "tools/trace_db.h"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"glassbox: read, check, compare and export glassbox training traces (SQLite .db files)", "glassbox"};
  app.set_version_flag("--version", std::string("glassbox ") + GLASSBOX_VERSION);
  app.require_subcommand(1);

  std::string file, file_b, chrome_out, sort = "self_cpu", kind = "op";
  std::size_t limit = 20;

  CLI::App* report = app.add_subcommand("report",
                                        "run metadata, step times, the op table, memory peaks, data-loader "
                                        "wait, anomalies");
  report->add_option("FILE", file, "the trace (.db)")->required();
  report->add_option("--sort", sort, "op table order")
      ->check(CLI::IsMember(names(gb::tools::op_sort_names())))
      ->capture_default_str();
  report->add_option("--limit", limit, "rows of the op and anomaly tables (0 = all)")->capture_default_str();
  report->add_option("--kind", kind, "span kind of the op table")
      ->check(CLI::IsMember(names(gb::tools::span_kind_names())))
      ->capture_default_str();

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
      ->check(CLI::IsMember(names(gb::tools::span_kind_names())))
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  try {
    std::ostringstream out;  // printed whole at the end, so a failure prints one error line and nothing else
    int rc = 0;
    if (*report) {
      gb::tools::TraceDb db(file);
      gb::tools::ReportOptions o{*gb::tools::parse_op_sort(sort), limit, *gb::tools::parse_span_kind(kind)};
      gb::tools::write_report(db, o, out);
    } else if (*exp) {
      gb::tools::TraceDb db(file);
      gb::tools::ExportCounts n = gb::tools::export_chrome(db, chrome_out);
      out << "wrote " << chrome_out << ": " << n.spans << " spans, " << n.counters << " counter samples, " << n.instants
          << " instants, " << n.anomalies << " anomalies, " << n.threads << " threads\n";
    } else if (*check) {
      gb::tools::TraceDb db(file);
      gb::tools::CheckResult r = gb::tools::check_trace(db);
      gb::tools::write_check(r, file, out);
      rc = r.ok() ? 0 : 1;
    } else if (*diff) {
      gb::tools::TraceDb a(file), b(file_b);
      gb::tools::write_diff(gb::tools::diff_traces(a, b, *gb::tools::parse_span_kind(kind)), limit, out);
    }
    std::cout << out.str() << std::flush;
    return rc;
  } catch (const std::exception& e) {
    return fail(e);
  }
}
