// tests/support/run_tests.h — how a test executable's main runs doctest (doctest_main.cpp, gpu_main.cpp), included
// by those mains alone.
//
// A test executable holds a whole folder's test files (tests/CMakeLists.txt), and CTest runs one file's cases at a
// time through doctest's --source-file filter. A filter that selects no test case is a failure here, not an empty
// pass: a renamed file, a moved folder or a wrong pattern would otherwise report "passed" with nothing run. Queries
// (--list-test-cases, --count, --help, ...) are answered as doctest answers them.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>

namespace gbtest {

// Counts the test cases the command line's filters selected (doctest's own count, given at the run's end).
struct SelectedCases : doctest::IReporter {
  static inline int selected = -1;  // -1: no run ended (a query, or the run never started)

  explicit SelectedCases(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    selected = static_cast<int>(stats.numTestCasesPassingFilters);
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("glassbox_selected_cases", 1, SelectedCases);

inline int run_tests(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit() || SelectedCases::selected != 0) return rc;
  std::fprintf(stderr,
               "FAILED: the command line's filters selected no test case of this executable. A CTest test runs one "
               "test file's cases with --source-file=*/tests/<path>_test.cpp: check that the file is still there and "
               "holds a TEST_CASE (list them with --list-test-cases).\n");
  return 1;
}

}  // namespace gbtest
