// tests/support/repr.h — a module's one-line repr (pretty_print) as a string, for the nn tests.
#pragma once

#include <sstream>
#include <string>

#include <glassbox/glassbox.h>

namespace gbtest {

inline std::string repr(const gb::nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

}  // namespace gbtest
