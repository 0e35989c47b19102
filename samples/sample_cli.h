// samples/sample_cli.h — the checks the samples' command lines share (CLI11 validators with short messages:
// CLI11's own PositiveNumber prints the whole double range).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace sample_cli {

inline CLI::Validator at_least(double low, const std::string& what) {
  return CLI::Validator(
      [low, what](std::string& v) -> std::string {
        try {
          return std::stod(v) >= low ? std::string() : "must be " + what + ", got " + v;
        } catch (const std::exception&) {
          return "must be a number, got '" + v + "'";
        }
      },
      what == "positive" ? "POSITIVE" : "NONNEGATIVE");
}
inline const CLI::Validator kPositive = at_least(1e-300, "positive");
inline const CLI::Validator kNonNegative = at_least(0, "non-negative");

}  // namespace sample_cli
