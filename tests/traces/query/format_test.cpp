// tests/traces/query/format_test.cpp — traces/query/format.cpp: PyTorch's time and share formats, bytes, plain tables.
#include "traces/query/format.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace gb::query;

TEST_CASE("times print like PyTorch's profiler tables: us below 1 ms, then ms, then s, three decimals") {
  CHECK(format_time(0) == "0.000us");
  CHECK(format_time(56'000) == "56.000us");
  CHECK(format_time(999'999) == "999.999us");
  CHECK(format_time(1'000'000) == "1.000ms");
  CHECK(format_time(1'234'000) == "1.234ms");
  CHECK(format_time(2'345'000'000.0) == "2.345s");
  CHECK(format_time(1500.5) == "1.500us");  // ns fractions round at the third decimal of a microsecond
  CHECK(format_signed_time(1'234'000) == "+1.234ms");
  CHECK(format_signed_time(-56'000) == "-56.000us");
}

TEST_CASE("shares have two decimals; a zero total prints NaN as PyTorch does") {
  CHECK(format_share(1, 8) == "12.50%");
  CHECK(format_share(9000, 16500) == "54.55%");
  CHECK(format_share(0, 0) == "NaN");
  CHECK(format_share(-1, 4) == "-25.00%");
}

TEST_CASE("bytes use binary units with two decimals, whole bytes below 1 KiB") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1024) == "1.00 KiB");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(300LL << 20) == "300.00 MiB");
  CHECK(format_bytes(5LL << 29) == "2.50 GiB");
  CHECK(format_signed_bytes(-2048) == "-2.00 KiB");
  CHECK(format_signed_bytes(2048) == "+2.00 KiB");
}

TEST_CASE("numbers of any size print with four significant digits; NaN and infinities by name") {
  CHECK(format_number(12.5) == "12.5");
  CHECK(format_number(0.5234567) == "0.5235");
  CHECK(format_number(12340.0) == "1.234e+04");
  CHECK(format_number(1e-9) == "1e-09");
  CHECK(format_number(std::nan("")) == "nan");
  CHECK(format_number(-HUGE_VAL) == "-inf");
}

TEST_CASE("a plain table: first column left-aligned, others right-aligned, a dashed rule under the header") {
  std::string t = format_table({"name", "value"}, {{"a", "1"}, {"longer", "12345"}});
  CHECK(t ==
        "  name    value\n"
        "  ------  -----\n"
        "  a           1\n"
        "  longer  12345\n");
}
