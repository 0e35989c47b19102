// fuzz/trace_fuzz.cpp — a trace file a user was handed: open it (schema and version checks), run `glassbox check`
// over every table and the whole `glassbox report`. A refusal with an exception is the expected outcome for almost
// every input; a crash, a sanitizer report, a hang or a runaway allocation is a bug.
#include <sstream>

#include "fuzz/input_file.h"
#include "tools/check.h"
#include "tools/report.h"
#include "traces/query/trace_db.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gb::fuzz::input_file(data, size, "input.db");
  gb::fuzz::read_or_refuse([&] {
    const gb::query::TraceDb db(path);
    gb::tools::check_trace(db);
    std::ostringstream out;
    gb::tools::write_report(db, gb::tools::ReportOptions{}, out);
  });
  return 0;
}
