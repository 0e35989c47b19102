// tests/tools/json_text_test.cpp — tools/json_text.cpp: escaping (checked by parsing it back), exact microseconds.
#include "tools/json_text.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

using namespace gb::tools;

namespace {
std::string as_json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}
std::string micros(std::int64_t ns) {
  std::string out;
  append_micros(out, ns);
  return out;
}
}  // namespace

TEST_CASE("quotes, backslashes and control characters are escaped; the text parses back unchanged") {
  CHECK(as_json("plain") == "\"plain\"");
  CHECK(as_json("a\"b\\c") == R"("a\"b\\c")");
  CHECK(as_json("l1\nl2\tx\r\b\f") == R"("l1\nl2\tx\r\b\f")");
  CHECK(as_json(std::string("nul\0one\x1f", 8)) == R"("nul\u0000one\u001f")");
  std::string nasty = std::string("say \"hi\"\n\\ \x01 caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80 ") + '\x7f';
  CHECK(nlohmann::json::parse(as_json(nasty)).get<std::string>() == nasty);
}

TEST_CASE("valid UTF-8 passes through byte for byte; each invalid byte becomes U+FFFD, so the JSON still parses") {
  CHECK(as_json("\xC3\xA9") == "\"\xC3\xA9\"");
  CHECK(as_json("\xF0\x9F\x98\x80") == "\"\xF0\x9F\x98\x80\"");
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(as_json("a\xFF"
                "b") == "\"a" + fffd + "b\"");                                    // never valid
  CHECK(as_json("\xC3") == "\"" + fffd + "\"");                                   // truncated sequence
  CHECK(as_json("\xC0\xAF") == "\"" + fffd + fffd + "\"");                        // overlong
  CHECK(as_json("\xED\xA0\x80") == "\"" + fffd + fffd + fffd + "\"");             // a surrogate
  CHECK(as_json("\xF4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // above U+10FFFF
  nlohmann::json parsed;
  CHECK_NOTHROW(parsed = nlohmann::json::parse(as_json("\x80\xBF\xFE\xC3(")));
  CHECK(parsed.is_string());
}

TEST_CASE("microseconds with exactly three decimals, exact for any int64 of nanoseconds") {
  CHECK(micros(0) == "0.000");
  CHECK(micros(1) == "0.001");
  CHECK(micros(1234) == "1.234");
  CHECK(micros(10'000'000) == "10000.000");
  CHECK(micros(-5) == "-0.005");
  CHECK(micros(-1'500) == "-1.500");
  CHECK(micros(std::numeric_limits<std::int64_t>::max()) == "9223372036854775.807");
  CHECK(micros(std::numeric_limits<std::int64_t>::min()) == "-9223372036854775.808");
  CHECK(nlohmann::json::parse(micros(22'000'500)).get<double>() == doctest::Approx(22000.5));
}

TEST_CASE("numbers: shortest round-trip form; NaN and infinities become null") {
  std::string s;
  append_number(s, 0.1);
  CHECK(s == "0.1");
  s.clear();
  append_number(s, 2.5);
  CHECK(s == "2.5");
  s.clear();
  append_number(s, std::nan(""));
  s += ',';
  append_number(s, -std::numeric_limits<double>::infinity());
  CHECK(s == "null,null");
  s.clear();
  append_int(s, -42);
  CHECK(s == "-42");
}
