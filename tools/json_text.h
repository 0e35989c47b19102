// tools/json_text.h — appending JSON values to a string, for exporters that stream events without a JSON DOM.
//
// append_json_string writes a quoted JSON string: `"` and `\` escaped, control characters as \n \t \r \b \f or
// \u00XX, valid UTF-8 passed through byte for byte, and each byte of an invalid UTF-8 sequence replaced by
// U+FFFD, so the output always parses. append_micros writes ns as microseconds with exactly three decimals
// ("1.234", "-0.005"), exact for any int64. append_number writes a double in its shortest round-trip form;
// NaN and infinities, which JSON cannot hold, become null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gb::tools {

void append_json_string(std::string& out, std::string_view text);
void append_micros(std::string& out, std::int64_t ns);
void append_number(std::string& out, double v);
void append_int(std::string& out, std::int64_t v);

}  // namespace gb::tools
