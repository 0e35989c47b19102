// samples/lessons/lesson.h — what every lesson shares. A lesson takes one claim a PyTorch tutorial makes about the
// internals, measures it on glassbox, and prints the claim, each measurement and a verdict in one format:
//
//   lesson: grad_accumulates
//   claim: three backwards of y = x^2 at x = 2 leave .grad at 4, 8, 12; zero_grad resets it
//   measured: grad after backward 1 = 4
//   ...
//   claim: true — .grad went 4, 8, 12 and was 0 after zero_grad
//
// The last line is the verdict: "claim: true" when the measurement goes the claim's way, "claim: false" when it does
// not (some tutorial claims are wrong, and a lesson that shows it teaches as much). Each lesson's CTest checks the
// verdict line, so a lesson whose measurement stops going the expected way fails its test. docs/LESSONS.md holds the
// table of claims, commands and what was measured.
#pragma once

#include <cstdio>
#include <string>

namespace lesson {

class Lesson {
 public:
  Lesson(std::string name, std::string claim) : name_(std::move(name)), claim_(std::move(claim)) {
    std::printf("lesson: %s\nclaim: %s\n", name_.c_str(), claim_.c_str());
    std::fflush(stdout);
  }

  // One measurement: "measured: <what> = <value>".
  void measured(const std::string& what, const std::string& value) const {
    std::printf("measured: %s = %s\n", what.c_str(), value.c_str());
    std::fflush(stdout);
  }
  void measured(const std::string& what, double value, const char* unit = "") const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g%s%s", value, *unit ? " " : "", unit);
    measured(what, std::string(buf));
  }

  // The verdict, printed last; the exit status of the lesson is 0 either way (the test reads the verdict line).
  int verdict(bool holds, const std::string& evidence) const {
    std::printf("claim: %s — %s\n", holds ? "true" : "false", evidence.c_str());
    std::fflush(stdout);
    return 0;
  }

 private:
  std::string name_, claim_;
};

// Bytes as a person reads them: "3.81 MiB".
inline std::string bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  double v = b < 0 ? -b : b;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%.3g %s", b < 0 ? "-" : "", v, units[u]);
  return buf;
}

// A percentage with one decimal: "41.2%".
inline std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

}  // namespace lesson
