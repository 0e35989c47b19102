// engine/core/generator.cpp — normal draws and state save/restore of the random generator.
#include "glassbox/core/generator.h"

#include <cmath>
#include <sstream>

#include "glassbox/core/error.h"

namespace gb {

double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform_double(), u2 = uniform_double();
  if (u1 < 1e-300) u1 = 1e-300;
  double r = std::sqrt(-2.0 * std::log(u1));
  double th = 2.0 * M_PI * u2;
  spare_ = r * std::sin(th);
  has_spare_ = true;
  return r * std::cos(th);
}

std::string Generator::get_state() const {
  std::ostringstream os;
  os.precision(17);
  os << seed_ << ' ' << has_spare_ << ' ' << spare_ << ' ' << engine_;
  return os.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream is(state);
  uint64_t seed;
  bool has_spare;
  double spare;
  std::mt19937_64 eng;
  is >> seed >> has_spare >> spare >> eng;
  GB_CHECK(!is.fail(), "Generator::set_state: the state string is not one produced by get_state() (",
           state.size(), " bytes); pass the value get_state() returned");
  seed_ = seed;
  has_spare_ = has_spare;
  spare_ = spare;
  engine_ = eng;
}

}  // namespace gb
